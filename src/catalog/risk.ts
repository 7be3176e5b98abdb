/**
 * How risky calling a workflow is, for clients that ask before they call (seed 002 "Safety
 * metadata"): standard MCP tool annotations plus `_meta["mhl/risk"]`.
 *
 * Derived from what the workflow does (`effects.ts` walks its syntax tree): no effect makes it
 * read-only, only file writes make it a writer, and a process, an agent or the network make it
 * high-risk and open-world. Declared annotations are kept only for their `title`.
 */
import {
  type CredentialSlot,
  RISK_EFFECTS,
  type RiskEffect,
  workflowEffects,
  workflowSlots,
} from './effects.js';
import type { ToolAnnotations, Workflow } from './types.js';

export { type CredentialSlot, RISK_EFFECTS, type RiskEffect, workflowEffects, workflowSlots };

/** The `_meta["mhl/risk"]` object. */
export interface Risk {
  readonly level: 'low' | 'medium' | 'high' | 'critical';
  readonly impact: 'read_only' | 'write' | 'destructive';
  readonly effects: readonly RiskEffect[];
  readonly reversibility: 'not_applicable' | 'irreversible';
}

/** The `_meta` key the risk object is published under. */
export const RISK_META_KEY = 'mhl/risk';

/** The annotations and risk of one workflow tool. */
export interface WorkflowRisk {
  readonly annotations: ToolAnnotations;
  readonly risk: Risk;
}

/** The risk and the matching MCP annotations for a set of effects. */
export function riskOf(effects: readonly RiskEffect[]): WorkflowRisk {
  if (effects.length === 0) {
    return {
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      risk: { level: 'low', impact: 'read_only', effects, reversibility: 'not_applicable' },
    };
  }
  const openWorld = effects.some((e) => e !== 'filesystem_write');
  return {
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: openWorld,
    },
    risk: {
      level: openWorld ? 'high' : 'medium',
      impact: openWorld ? 'destructive' : 'write',
      effects,
      reversibility: 'irreversible',
    },
  };
}

/** The workflow's annotations (its declared `title` kept) and `_meta["mhl/risk"]`. */
export function workflowRisk(workflow: Workflow): WorkflowRisk {
  const { annotations, risk } = riskOf(workflowEffects(workflow));
  const title = workflow.annotations?.title;
  return { annotations: title === undefined ? annotations : { title, ...annotations }, risk };
}

/**
 * The risk of the server's own control tools, by what they do. `dispatch` is critical because
 * such a tool can run any workflow (seed 002 marks `job.start` so); clients should inspect the
 * target instead.
 */
export const CONTROL_RISK = {
  /** Reads state and changes nothing: `job.status`, `job.result`, run status, list, logs. */
  read: riskOf([]),
  /** Starts or resumes any workflow: `job.start`, run start and resume. */
  dispatch: {
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    risk: {
      level: 'critical',
      impact: 'destructive',
      effects: RISK_EFFECTS,
      reversibility: 'irreversible',
    },
  },
  /** Stops running work, killing its processes: `job.cancel`, run cancel. */
  cancel: {
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    risk: {
      level: 'medium',
      impact: 'destructive',
      effects: ['process'],
      reversibility: 'irreversible',
    },
  },
} as const satisfies Record<string, WorkflowRisk>;

/** A control tool's `annotations` (with its title) and `_meta` carrying `mhl/risk`. */
export function controlToolRisk(
  kind: keyof typeof CONTROL_RISK,
  title: string,
): { annotations: ToolAnnotations; _meta: { [RISK_META_KEY]: Risk } } {
  const { annotations, risk } = CONTROL_RISK[kind];
  return { annotations: { title, ...annotations }, _meta: { [RISK_META_KEY]: risk } };
}

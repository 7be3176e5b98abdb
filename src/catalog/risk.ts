/**
 * How risky calling a workflow is, for clients that ask before they call (seed 002 "Safety
 * metadata"): standard MCP tool annotations plus `_meta["mhl/risk"]`.
 *
 * Derived conservatively from the text of the workflow's file and every file it imports,
 * without evaluating anything: a name that can reach a process, an agent or the network makes
 * the workflow high-risk and open-world, a file-system operation that is not a plain read makes
 * it a writer, and only a workflow that mentions none of them is read-only. The scan looks at
 * words, not at what the code does, so a comment or a variable named `cmd` errs on the side of
 * risk; it never errs the other way, because every effect a program can have goes through one
 * of these names. Declared annotations are kept only for their `title`.
 */
import type { Module } from '../lang/index.js';
import type { ToolAnnotations, Workflow } from './types.js';

/** What a call can do to the world outside the server, in a fixed order. */
export const RISK_EFFECTS = ['agent', 'filesystem_write', 'network', 'process'] as const;
export type RiskEffect = (typeof RISK_EFFECTS)[number];

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

const EFFECT_PATTERNS: readonly (readonly [RiskEffect, RegExp])[] = [
  // Agents run engine CLIs that reach their model providers.
  ['agent', /\bagent\s+[A-Za-z_]/],
  // `fs`/`dir` anywhere except as `.read`, `.exists`, `.join` or `.list` (an alias counts
  // too), and `memory` stores, which live in files.
  [
    'filesystem_write',
    /\b(?:fs|dir)\b(?!\s*\.\s*(?:read|exists|join|list)\b)|\bmemory\s+[A-Za-z_]/,
  ],
  // `extension mcp|a2a|…` (and the legacy `mcp_server`) reach a server or spawn one.
  ['network', /\b(?:http|extension|mcp_server)\b/],
  ['process', /\b(?:cmd|git|extension|mcp_server)\b/],
];

/** Which effects the workflow's file, or any file it imports, can have. */
export function workflowEffects(workflow: Workflow): RiskEffect[] {
  const found = new Set<RiskEffect>();
  for (const text of reachableSources(workflow.program.root)) {
    for (const [effect, pattern] of EFFECT_PATTERNS) if (pattern.test(text)) found.add(effect);
  }
  if (found.has('agent')) found.add('network').add('process');
  return RISK_EFFECTS.filter((e) => found.has(e));
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

/** The source text of `root` and of every module it imports, directly or not. */
function reachableSources(root: Module): string[] {
  const seen = new Set<Module>();
  const stack = [root];
  for (let module = stack.pop(); module !== undefined; module = stack.pop()) {
    if (seen.has(module)) continue;
    seen.add(module);
    for (const edge of module.imports) if (edge.target) stack.push(edge.target);
  }
  return [...seen].map((m) => m.text);
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

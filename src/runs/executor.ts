/**
 * Executes one leg of an async run (the first, or one resume) with the interpreter and turns
 * its outcome into the fields of the run view. The registry decides when a leg may run (it
 * holds the slot); this module only runs it: session = runId, checkpoints through the run's
 * store, output redacted line by line into the run's log and the server log.
 */
import type { Workflow } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import {
  type AgentLimiters,
  executeWorkflow,
  formatValue,
  fromJson,
  isObject,
  Redactor,
  type RunOutcome,
  toPlain,
  type VaultLookup,
} from '../runtime/index.js';
import type { Store } from '../store/index.js';
import type { RunLog } from './run-log.js';
import { stateFaultOf, stoppedMessage } from './state-fault.js';
import { messageOf, type RunState, type RunView } from './types.js';

/** What every leg shares: the child environment, the server's environment, a cache root. */
export interface LegServices {
  readonly childEnv: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Agents' disk caches go in a fresh folder per leg under here (the server owns it). */
  readonly cacheRoot: string;
  /** Agents' rate limits, shared with the server's other calls and runs (spec §5.1). */
  readonly agentLimiters?: AgentLimiters;
  /** What `vault()` reads in a leg, given the run's `credentials`; none without a vault. */
  readonly vault?: (credentials: Readonly<Record<string, string>>) => VaultLookup;
}

export interface Leg {
  readonly workflow: Workflow;
  readonly runId: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly cwd: string;
  readonly timeoutMs?: number;
  /** Vault record ids by credential slot. */
  readonly credentials?: Readonly<Record<string, string>>;
  readonly resume: boolean;
  readonly principal?: string;
  readonly signal: AbortSignal;
  /** Where the run's checkpoints live. */
  readonly store: Store;
  readonly services: LegServices;
  readonly log: RunLog;
  readonly logger: Logger;
  /** A step started: its name, 1-based index and the declared step count. */
  readonly onStep: (step: string, index: number, total: number) => void;
}

/** The view fields a finished leg sets; `resumable` is a wish the registry may veto. */
export type LegUpdate = { readonly state: RunState; readonly resumable?: boolean } & Pick<
  RunView,
  'vars' | 'error' | 'errorCode' | 'reason' | 'reached'
>;

export async function runLeg(leg: Leg): Promise<LegUpdate> {
  const redactor = new Redactor();
  try {
    const values = fromJson(leg.inputs);
    const execution = await executeWorkflow({
      program: leg.workflow.program,
      pipeline: leg.workflow.decl,
      definition: leg.workflow.definition,
      inputs: isObject(values) ? values : {},
      cwd: leg.cwd,
      childEnv: leg.services.childEnv,
      env: leg.services.env,
      vault: leg.services.vault?.(leg.credentials ?? {}),
      // Resumed by runId, never through `<Pipeline>.latest`: keeping it would cost two fsyncs.
      state: { store: leg.store, latestPointer: false },
      resume: leg.resume,
      session: leg.runId,
      ...(leg.principal !== undefined ? { principal: leg.principal } : {}),
      signal: leg.signal,
      ...(leg.timeoutMs !== undefined
        ? { timeout: { ms: leg.timeoutMs, what: `run ${leg.runId}` } }
        : {}),
      output: (text) => {
        leg.log.append(text);
        leg.logger.info({ output: text });
      },
      agentCache: { root: leg.services.cacheRoot },
      ...(leg.services.agentLimiters !== undefined
        ? { agentLimiters: leg.services.agentLimiters }
        : {}),
      redactor,
      onEvent: (event) => {
        if (event.type === 'step_start') leg.onStep(event.step, event.index + 1, event.total);
      },
    });
    const { outcome } = execution;
    if (execution.timedOut && outcome.status !== 'completed' && outcome.status !== 'paused') {
      const error = `the run timed out after ${leg.timeoutMs} ms (context.timeout_ms)`;
      return { state: 'failed', error, resumable: true };
    }
    return update(outcome, leg.signal, redactor);
  } catch (error) {
    // Stopped on purpose (a cancel, a lost lease) while a write was under way: say why.
    if (leg.signal.aborted) {
      return { state: 'canceled', error: messageOf(leg.signal.reason), resumable: true };
    }
    // The runner reports program errors in its outcome; this is an infrastructure fault.
    const fault = stateFaultOf(error);
    if (fault === undefined)
      return { state: 'failed', error: redactor.redact(messageOf(error)), resumable: true };
    // The store's own words (key, errno) are for the operator's log, not the caller.
    leg.logger.error({ err: error }, 'the run state could not be saved');
    return { state: 'failed', error: stoppedMessage(fault), errorCode: fault, resumable: true };
  }
}

function update(outcome: RunOutcome, signal: AbortSignal, redactor: Redactor): LegUpdate {
  const reached = [...outcome.skipped, ...outcome.executed];
  switch (outcome.status) {
    case 'completed':
      return { state: 'completed', vars: plain(outcome.vars), reached };
    case 'paused':
      return {
        state: 'paused',
        vars: plain(outcome.vars),
        reason: redactor.redact(pauseReason(outcome.pauseReason)),
        reached,
        resumable: true,
      };
    default: {
      const message = outcome.error?.message ?? 'the run failed';
      // A cancelled run's error can surface as a step failure; the signal says what happened.
      const canceled = outcome.status === 'canceled' || signal.aborted;
      if (canceled) {
        const why = signal.reason instanceof Error ? signal.reason.message : message;
        return { state: 'canceled', error: why, resumable: true };
      }
      return {
        state: 'failed',
        error: message,
        resumable:
          outcome.error?.kind !== 'definition_mismatch' && outcome.error?.kind !== 'invalid_inputs',
      };
    }
  }
}

function plain(vars: RunOutcome['vars']): Record<string, unknown> {
  return toPlain(vars) as Record<string, unknown>;
}

/** The `pause()` argument: a string as is, anything else as compact JSON, none → "paused". */
function pauseReason(reason: RunOutcome['pauseReason']): string {
  if (reason === undefined || reason === null) return 'paused';
  if (typeof reason === 'string') return reason;
  const value = toPlain(reason);
  return value === undefined ? formatValue(reason) : JSON.stringify(value);
}

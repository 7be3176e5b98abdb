/**
 * The one error type agent calls raise: a span-less `LangError` with code `AGENT` (the
 * interpreter attaches the call's span) plus structured fields, so callers branch on `failure`
 * and never parse the message. Messages are redacted before they get here.
 */
import { LangError } from '../../lang/index.js';

/** The `LangError.code` of every agent failure. */
export const AGENT_ERROR_CODE = 'AGENT';

/** What went wrong, as a field. */
export const AGENT_FAILURES = {
  /** The declaration cannot make this call (no command, `${schema}` without a schema, …). */
  CONFIG: 'CONFIG',
  /** The engine is not implemented. */
  UNSUPPORTED: 'UNSUPPORTED',
  /** The command could not be started, or wrote more output than the runner accepts. */
  PROCESS: 'PROCESS',
  /** Non-zero exit or death by signal. */
  EXIT: 'EXIT',
  /** Success with nothing on stdout. */
  EMPTY: 'EMPTY',
  /** One attempt ran past the agent's `timeout`. Retryable. */
  TIMEOUT: 'TIMEOUT',
  /** The caller's signal aborted (run cancelled, step deadline). Never retried. */
  CANCELLED: 'CANCELLED',
  /** An HTTP engine failed (network, status, malformed body). */
  HTTP: 'HTTP',
  /** An unexpected fault in the runner itself. */
  INTERNAL: 'INTERNAL',
} as const;
export type AgentFailure = (typeof AGENT_FAILURES)[keyof typeof AGENT_FAILURES];

/** An agent call that failed; `agent` is the declared name of the leg that raised it. */
export class AgentError extends LangError {
  readonly agent: string;
  readonly failure: AgentFailure;
  /** The exit code for `EXIT` failures (null when killed by a signal); otherwise undefined. */
  readonly exitCode: number | null | undefined;

  constructor(
    agent: string,
    failure: AgentFailure,
    summary: string,
    options: { cause?: unknown; exitCode?: number | null | undefined } = {},
  ) {
    super(AGENT_ERROR_CODE, summary, undefined, 'cause' in options ? { cause: options.cause } : {});
    this.name = 'AgentError';
    this.agent = agent;
    this.failure = failure;
    this.exitCode = options.exitCode;
  }
}

/** The error for a call stopped by its caller; the cause is the signal's reason. */
export function cancelledError(agent: string, signal: AbortSignal, cause?: unknown): AgentError {
  return new AgentError(agent, AGENT_FAILURES.CANCELLED, `agent "${agent}" was cancelled`, {
    cause: signal.aborted ? signal.reason : cause,
  });
}

/** An unexpected fault (a bug, not an agent failure) as INTERNAL, keeping the original. */
export function internalError(agent: string, e: unknown): AgentError {
  const reason = e instanceof Error ? e.message : String(e);
  return new AgentError(agent, AGENT_FAILURES.INTERNAL, `agent "${agent}" failed: ${reason}`, {
    cause: e,
  });
}

/**
 * What the run layer hands its callers: the run view (`run/status` and friends answer it as is,
 * spec/mhl-serve.md §4.2), the run states, and the one error type the surfaces map to JSON-RPC.
 */

export type RunState =
  | 'pending'
  | 'claimed'
  | 'queued'
  | 'working'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'paused';

export const TERMINAL_STATES: ReadonlySet<RunState> = new Set(['completed', 'failed', 'canceled']);

/** The status object of one run. Optional fields are omitted, never null. */
export interface RunView {
  readonly runId: string;
  readonly tool: string;
  readonly state: RunState;
  readonly startedAt: string;
  readonly updatedAt: string;
  /** The step running (or last run); present once a step has started. */
  readonly step?: string;
  /** 1-based. */
  readonly stepIndex?: number;
  readonly stepTotal?: number;
  readonly reached?: readonly string[];
  /** Present (true) only when `run/resume` can continue the run. */
  readonly resumable?: true;
  /** Only for `completed` and `paused`; redacted. */
  readonly vars?: Readonly<Record<string, unknown>>;
  /** Only for `failed` and `canceled`. */
  readonly error?: string;
  /** Only for `paused`: the `pause()` argument. */
  readonly reason?: string;
}

export type RunErrorCode =
  /** No such run for this caller (unknown, swept, or someone else's: one answer for all). */
  | 'UNKNOWN_RUN'
  /** The run cannot be resumed as asked (still running, completed, changed workflow); bad
   * arguments are an `ArgumentError` instead. */
  | 'INVALID'
  /** The server is shutting down and starts nothing new. */
  | 'DRAINING'
  /** A server-wide limit on runs is reached; retry later. */
  | 'BUSY';

export class RunError extends Error {
  readonly code: RunErrorCode;
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(code: RunErrorCode, message: string, data?: Readonly<Record<string, unknown>>) {
    super(message);
    this.name = 'RunError';
    this.code = code;
    this.data = data;
  }
}

/** The message every unknown or foreign runId gets, byte for byte. */
export function unknownRun(): RunError {
  return new RunError('UNKNOWN_RUN', 'unknown runId');
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What the run layer hands its callers: the run view (`run/status` and friends answer it as is,
 * spec/mhl-serve.md §4.2), the run states, and the one error type the surfaces map to JSON-RPC
 * errors or tool results. Nothing here knows the protocol.
 */

import type { Catalog, Workflow } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { Admission } from './admission.js';
import type { RunChangeFeed } from './change-feed.js';
import type { LegServices } from './executor.js';
import type { StateFaultCode } from './state-fault.js';

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
  /**
   * Only for a run that failed because its state could not be saved: `STATE_STORAGE_FULL`
   * (free space, then resume) or `STATE_STORE_FAILED` (state-fault.ts).
   */
  readonly errorCode?: StateFaultCode;
  /** Only for `paused`: the `pause()` argument. */
  readonly reason?: string;
}

/** The run layer's error codes: stable strings the surfaces map to their own answers. */
export const RUN_ERROR_CODES = {
  /** No such run for this caller (unknown, swept, or someone else's: one answer for all). */
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  /** The run is still queued or working: wait for it or cancel it. */
  RUN_ACTIVE: 'RUN_ACTIVE',
  /** The run completed, failed in a way a resume cannot fix, or its workflow changed. */
  RUN_NOT_RESUMABLE: 'RUN_NOT_RESUMABLE',
  /** The server is shutting down and starts nothing new. */
  SHUTTING_DOWN: 'SHUTTING_DOWN',
  /** A server-wide limit on runs is reached; retry later. */
  CAPACITY_FULL: 'CAPACITY_FULL',
  /** The caller's own quota of runs is used up; finish or cancel some, then retry. */
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  /** The run's record could not be saved: the state storage is full; retry once freed. */
  STATE_STORAGE_FULL: 'STATE_STORAGE_FULL',
  /** The run's record could not be saved: the state storage failed; retry later. */
  STATE_STORE_FAILED: 'STATE_STORE_FAILED',
  /** The run's execution lease could not be read or taken: the shared store is unreachable. */
  LEASE_UNAVAILABLE: 'LEASE_UNAVAILABLE',
} as const;

export type RunErrorCode = (typeof RUN_ERROR_CODES)[keyof typeof RUN_ERROR_CODES];

/** What the registry throws; never a protocol error (the surfaces map `code`). */
export class RunError extends Error {
  readonly code: RunErrorCode;
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: RunErrorCode,
    message: string,
    data?: Readonly<Record<string, unknown>>,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RunError';
    this.code = code;
    this.data = data;
  }
}

/** The message every unknown or foreign runId gets, byte for byte. */
export function unknownRun(): RunError {
  return new RunError('RUN_NOT_FOUND', 'unknown runId');
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Who is asking: the owner string and, when verified, the raw principal. */
export interface Caller {
  readonly owner: string;
  /**
   * Who its runs count against for the quotas (`quotaKeyOf`): not always its owner, since one
   * client may hold many sessions.
   */
  readonly quota: string;
  /** Set when the identity came from `--principal-header`; such ownership is persisted. */
  readonly principal?: string;
}

/** A call's checked inputs and working context, as the pipelines surface computes them. */
export interface CheckedCall {
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly cwd: string;
  /** Bounds each leg when the caller asked for a limit. */
  readonly timeoutMs?: number;
  /** Vault record ids by credential slot, for `vault()` (ids only, never values). */
  readonly credentials?: Readonly<Record<string, string>>;
}

export interface RunRegistryOptions {
  readonly catalog: Catalog;
  /** Run records and checkpoints (a dir store at `--state-dir`, else a temporary one). */
  readonly store: Store;
  readonly admission: Admission;
  readonly logger: Logger;
  readonly services: LegServices;
  /** Validates a call's arguments; throws `ArgumentError` (fields relative to them) for bad ones. */
  readonly check: (workflow: Workflow, args: Readonly<Record<string, unknown>>) => CheckedCall;
  readonly terminalTtlMs?: number;
  /**
   * Set on a shared store (one with `lease`): this replica's id and the run lease TTL. Each run
   * is then executed under a lease, its writes fenced, its record the truth other replicas read.
   */
  readonly replica?: { readonly id: string; readonly leaseTtlMs: number };
  /**
   * Where the registry publishes each change to a run's view or log (resource subscriptions,
   * the live runs page); the registry makes its own when none is given.
   */
  readonly changes?: RunChangeFeed;
  /**
   * Most runs held in memory and most waiting for a slot, server-wide (defaults 10,000 and
   * 1,000) and per caller (defaults 1,000 and 250).
   */
  readonly limits?: {
    readonly runs?: number;
    readonly queued?: number;
    readonly runsPerCaller?: number;
    readonly queuedPerCaller?: number;
  };
  readonly now?: () => number;
}

/**
 * The shapes `CheckpointStore` takes and returns: what the interpreter supplies (drafts; the
 * store stamps pipeline, times and versions) and what it reads back (variables as MHL values).
 * Types only.
 */
import type { Fence } from '../../store/index.js';
import type { MhlObject, Value } from '../interpreter/values.js';
import type {
  CheckpointRecord,
  ResultRecord,
  TerminalReason,
} from './checkpoint-records.schema.js';

/** Options of `CheckpointStore`. */
export interface CheckpointStoreOptions {
  /** Stamped as `runtime_version` on every record; omitted when not given. */
  readonly runtimeVersion?: string;
  /** The clock for `saved_at`, `completed_at` and TTL checks; `new Date()` by default. */
  readonly now?: () => Date;
  /**
   * False: `setLatest` writes nothing. Async runs pass it: they are resumed by id, nothing reads
   * their `<Pipeline>.latest`, and keeping it cost two fsyncs a run. Default true.
   */
  readonly latestPointer?: boolean;
}

/** Options of reads. */
export interface ReadOptions {
  readonly signal?: AbortSignal;
}

/** Options of writes: with `fence`, the write lands only while that run lease is held. */
export interface WriteOptions extends ReadOptions {
  /**
   * The lease the write acts under. A store with capability `fence` checks it atomically and a
   * refusal throws `STATE_LEASE_LOST`; on other stores the caller checks the lease beforehand.
   */
  readonly fence?: Fence;
}

/** What the interpreter supplies for a checkpoint; the store stamps the rest. */
export interface CheckpointDraft {
  readonly last_step: string;
  readonly next_step: string;
  readonly completed_steps: readonly string[];
  /** Inputs and pipeline variables: JSON data only. */
  readonly variables: Readonly<Record<string, Value>>;
  readonly ttl_seconds: number;
  readonly digest?: string;
  readonly paused?: { readonly reason: string };
}

/** A checkpoint as read back, variables as MHL values. */
export type Checkpoint = Omit<CheckpointRecord, 'variables'> & { readonly variables: MhlObject };

/** What the interpreter supplies for loop progress. */
export interface LoopDraft {
  readonly next_iteration: number;
  readonly terminal_reason: TerminalReason;
  readonly instance_id: string;
}

/** What the interpreter supplies when a run completes. */
export interface ResultDraft {
  readonly variables: Readonly<Record<string, Value>>;
  /** The evaluated `output:` projection, when the pipeline declares one. */
  readonly output?: Value;
  readonly digest?: string;
}

/** A completed run as read back, variables and output as MHL values. */
export type RunResult = Omit<ResultRecord, 'variables' | 'output'> & {
  readonly variables: MhlObject;
  readonly output?: Value;
};

/** What `sweepExpired` removed. */
export interface SweepReport {
  /** Checkpoint keys deleted because their TTL had passed (with their loop files). */
  readonly expired: string[];
  /** Sessions left with no state at all, whose `latest` pointers were removed too. */
  readonly sessions: string[];
  /** State files skipped because they could not be read (corrupt, or from a newer runtime). */
  readonly unreadable: string[];
}

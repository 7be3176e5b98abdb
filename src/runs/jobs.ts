/**
 * The job table behind `job.start|status|result|cancel` (seed 002 "Starting and reading a job").
 *
 * A job is one admitted call running detached from the request that started it, under its own
 * AbortController and time limit. Its public state moves once, from `running` to `succeeded`,
 * `failed`, `cancelled` or `timed_out`; cancellation and timeout take effect in the table at
 * once, while the handler may still be running (`draining`). The execution slot is released
 * only when the handler physically exits, so an uncooperative handler holds exactly its own
 * slot until then.
 *
 * Jobs live in memory only. At most `MAX_JOBS` records are kept: a new job, once admitted,
 * evicts the oldest exited record of the owner holding the most; running and draining records are never
 * evicted, and a full table of them refuses new jobs. Completed records expire `JOB_TTL_MS` after their handler
 * exited; expiry is checked on every access, so no timer keeps the process alive.
 */
import { randomBytes } from 'node:crypto';
import type { Admission, Refusal } from './admission.js';

export const MAX_JOBS = 128;
export const JOB_TTL_MS = 60 * 60 * 1000;

export type JobState = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

/** What a job's handler resolves to: the target's typed response (`isError` marks failure). */
export type JobResponse = Readonly<Record<string, unknown>>;

/** Why a job has no response of its own: it was stopped, or its handler threw. */
export interface JobFailure {
  readonly code: 'CANCELLED' | 'TIMEOUT' | 'INTERNAL_ERROR';
  readonly message: string;
}

/** One job as callers see it. */
export interface JobView {
  readonly job_id: string;
  readonly tool: string;
  readonly status: JobState;
  /** True while a cancelled or timed-out handler has not yet exited (it still holds a slot). */
  readonly draining: boolean;
  readonly started_at: string;
  readonly ended_at?: string;
  /** The target's time limit, when it has one. */
  readonly timeout_ms?: number;
}

/** A terminal job's outcome: the target's response, or why there is none. */
export type JobOutcome =
  | { readonly response: JobResponse; readonly durationMs: number }
  | { readonly failure: JobFailure };

/** What `start` needs to run one job. */
export interface JobTask {
  /** The target tool's name, for views and logs. */
  readonly tool: string;
  /** The owner key (`ownerOf`); only the same owner can see the job. */
  readonly owner: string;
  /** The target's own time limit; the job reads `timed_out` the moment it passes. */
  readonly timeoutMs?: number | undefined;
  /** Runs the target. Should resolve; a rejection makes the job `failed`. */
  run(signal: AbortSignal): Promise<JobResponse>;
}

/** Why `start` made no job: no slot (`full`, `closed`) or no room in the table. */
export type JobRefusal = Refusal | 'jobs_full';

export interface JobRegistryOptions {
  readonly admission: Admission;
  readonly maxJobs?: number;
  readonly ttlMs?: number;
  /** Epoch milliseconds; `Date.now` by default. */
  readonly now?: () => number;
  /** Told when a job turns terminal (`ended`) and when its handler exits (`exited`). */
  readonly onEvent?: (event: 'started' | 'ended' | 'exited', view: JobView) => void;
  /** Told a handler's unexpected throw (a server fault), which the caller sees only as a code. */
  readonly onFault?: (error: unknown, view: JobView) => void;
}

interface JobRecord {
  readonly id: string;
  readonly tool: string;
  readonly owner: string;
  readonly startedAt: number;
  readonly timeoutMs: number | undefined;
  readonly controller: AbortController;
  state: JobState;
  endedAt?: number;
  /** When the handler physically exited; set means the record may be evicted. */
  exitedAt?: number;
  outcome?: JobOutcome;
  timer?: NodeJS.Timeout;
}

export class JobRegistry {
  readonly #admission: Admission;
  readonly #max: number;
  readonly #ttl: number;
  readonly #now: () => number;
  readonly #onEvent: JobRegistryOptions['onEvent'];
  readonly #onFault: JobRegistryOptions['onFault'];
  readonly #jobs = new Map<string, JobRecord>();
  readonly #drained = new Set<() => void>();

  constructor(options: JobRegistryOptions) {
    this.#admission = options.admission;
    this.#max = options.maxJobs ?? MAX_JOBS;
    this.#ttl = options.ttlMs ?? JOB_TTL_MS;
    this.#now = options.now ?? Date.now;
    this.#onEvent = options.onEvent;
    this.#onFault = options.onFault;
  }

  /** Records kept right now, of every state. */
  get size(): number {
    this.#expire();
    return this.#jobs.size;
  }

  /** Owners with a job running: a legacy session that owns one is not evicted to make room. */
  activeOwners(): Set<string> {
    const owners = new Set<string>();
    for (const record of this.#jobs.values())
      if (record.state === 'running') owners.add(record.owner);
    return owners;
  }

  /** Admits and starts `task`, or says why not. Never waits. */
  start(task: JobTask): JobView | JobRefusal {
    // The slot first: a start refused for want of one must not evict anyone's finished job.
    const slot = this.#admission.tryAcquire();
    if (typeof slot === 'string') return slot;
    if (!this.#makeRoom()) {
      slot.release();
      return 'jobs_full';
    }
    const record: JobRecord = {
      id: `job-${randomBytes(16).toString('hex')}`,
      tool: task.tool,
      owner: task.owner,
      startedAt: this.#now(),
      timeoutMs: task.timeoutMs,
      controller: new AbortController(),
      state: 'running',
    };
    this.#jobs.set(record.id, record);
    if (task.timeoutMs !== undefined) {
      record.timer = setTimeout(() => {
        this.#stop(record, 'timed_out', { code: 'TIMEOUT', message: timeoutText(task) });
      }, task.timeoutMs);
    }
    this.#onEvent?.('started', view(record));
    const started = performance.now();
    // One synchronous step from "handler settled" to "slot free and record evictable", so no
    // reader ever sees a finished job still draining.
    const settle = (outcome: JobOutcome) => {
      slot.release();
      record.exitedAt = this.#now();
      this.#finish(record, outcome);
      this.#exited(record);
    };
    const { signal } = record.controller;
    // A job stopped before its handler got going never starts it (its outcome is already set).
    void Promise.resolve()
      .then(() => (signal.aborted ? {} : task.run(signal)))
      .then(
        (response) => settle({ response, durationMs: performance.now() - started }),
        (error: unknown) => {
          // The error's text may name server paths: it goes to the log, the caller gets a code.
          this.#onFault?.(error, view(record));
          settle({
            failure: { code: 'INTERNAL_ERROR', message: 'the job failed inside the server' },
          });
        },
      );
    return view(record);
  }

  /** The job `id` of `owner`; another owner's job is as unknown as one that never existed. */
  get(id: string, owner: string): JobView | undefined {
    const record = this.#find(id, owner);
    return record && view(record);
  }

  /** The outcome of a terminal job of `owner` (repeatable), or undefined while it runs. */
  outcome(id: string, owner: string): { view: JobView; outcome?: JobOutcome } | undefined {
    const record = this.#find(id, owner);
    if (!record) return undefined;
    return record.outcome
      ? { view: view(record), outcome: record.outcome }
      : { view: view(record) };
  }

  /** Cancels a running job of `owner` at once; a terminal job is left as it is. */
  cancel(id: string, owner: string, reason = 'the job was cancelled'): JobView | undefined {
    const record = this.#find(id, owner);
    if (!record) return undefined;
    this.#stop(record, 'cancelled', { code: 'CANCELLED', message: reason });
    return view(record);
  }

  /** Cancels every running job (shutdown). */
  cancelAll(reason: string): void {
    for (const record of this.#jobs.values()) {
      this.#stop(record, 'cancelled', { code: 'CANCELLED', message: reason });
    }
  }

  /** Resolves once no job's handler is running. */
  drained(): Promise<void> {
    if (!this.#busy()) return Promise.resolve();
    return new Promise((resolve) => this.#drained.add(resolve));
  }

  #find(id: string, owner: string): JobRecord | undefined {
    this.#expire();
    const record = this.#jobs.get(id);
    return record?.owner === owner ? record : undefined;
  }

  /** Moves a running job to a stopped state now and aborts its handler. */
  #stop(record: JobRecord, state: 'cancelled' | 'timed_out', failure: JobFailure): void {
    if (record.state !== 'running') return;
    record.state = state;
    record.endedAt = this.#now();
    record.outcome = { failure };
    clearTimeout(record.timer);
    this.#onEvent?.('ended', view(record));
    const name = state === 'timed_out' ? 'TimeoutError' : 'AbortError';
    record.controller.abort(new DOMException(failure.message, name));
  }

  /** The handler settled: a job still running takes its result as its outcome. */
  #finish(record: JobRecord, outcome: JobOutcome): void {
    if (record.state !== 'running') return;
    clearTimeout(record.timer);
    const failed = 'failure' in outcome || outcome.response['isError'] === true;
    record.state = failed ? 'failed' : 'succeeded';
    record.endedAt = this.#now();
    record.outcome = outcome;
    this.#onEvent?.('ended', view(record));
  }

  #exited(record: JobRecord): void {
    this.#onEvent?.('exited', view(record));
    if (this.#busy()) return;
    for (const resolve of this.#drained) resolve();
    this.#drained.clear();
  }

  #busy(): boolean {
    for (const record of this.#jobs.values()) if (record.exitedAt === undefined) return true;
    return false;
  }

  /** Drops records whose handler exited more than the TTL ago. */
  #expire(): void {
    const cutoff = this.#now() - this.#ttl;
    for (const [id, record] of this.#jobs) {
      if (record.exitedAt !== undefined && record.exitedAt <= cutoff) this.#jobs.delete(id);
    }
  }

  /**
   * Makes room for one more record when the table is full: forgets the oldest exited record of
   * the owner holding the most records (the caller's own, when it is that owner), so one owner
   * starting many jobs evicts its own finished results before anyone else's unread ones.
   */
  #makeRoom(): boolean {
    this.#expire();
    if (this.#jobs.size < this.#max) return true;
    const held = new Map<string, number>();
    for (const record of this.#jobs.values())
      held.set(record.owner, (held.get(record.owner) ?? 0) + 1);
    let victim: JobRecord | undefined;
    let victimHeld = 0;
    for (const record of this.#jobs.values()) {
      if (record.exitedAt === undefined) continue;
      const count = held.get(record.owner) ?? 0;
      const older = victim?.exitedAt !== undefined && record.exitedAt < victim.exitedAt;
      if (victim === undefined || count > victimHeld || (count === victimHeld && older)) {
        victim = record;
        victimHeld = count;
      }
    }
    if (!victim) return false;
    this.#jobs.delete(victim.id);
    return true;
  }
}

function view(record: JobRecord): JobView {
  return {
    job_id: record.id,
    tool: record.tool,
    status: record.state,
    draining: record.state !== 'running' && record.exitedAt === undefined,
    started_at: new Date(record.startedAt).toISOString(),
    ...(record.endedAt === undefined ? {} : { ended_at: new Date(record.endedAt).toISOString() }),
    ...(record.timeoutMs === undefined ? {} : { timeout_ms: record.timeoutMs }),
  };
}

function timeoutText(task: JobTask): string {
  return `the job timed out after ${task.timeoutMs} ms (context.timeout_ms or --default-timeout-ms)`;
}

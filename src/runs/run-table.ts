/**
 * The registry's table of runs and its owner index: the runs held in memory, by id, by owner
 * (for `run/list`) and by quota key (for the quotas: a caller's runs count against its key
 * even once its session ended and they wait to be claimed), and the owners of the runs that
 * live only in the store (left there by an earlier process). It answers "may this caller reach this run"
 * from memory alone, doing the same work whether the run is someone else's or does not exist,
 * so neither the answer nor its timing tells the two apart (issue 18, part 5). No I/O.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RunView } from './types.js';

/** What the table needs of a held run. `owner` null: its session ended; the first to name it claims it. */
export interface HeldRun {
  readonly runId: string;
  owner: string | null;
  /** Who it counts against for the quotas (`quotaKeyOf`); kept when it is released. */
  quota: string;
  readonly view: RunView;
  /** When it last reached a terminal state. */
  readonly finishedAt: number | undefined;
  /** The leg in flight, if any. */
  readonly leg: unknown;
}

/** Where a caller may reach a run: held in memory, or only in the store. */
export type Reach = 'live' | 'stored';

export class RunTable<R extends HeldRun> {
  readonly #runs = new Map<string, R>();
  /** Held runs by owner; orphans (owner null) under `ORPHANS`. */
  readonly #byOwner = new Map<string | typeof ORPHANS, Set<R>>();
  /** Runs only in the store: the principal owner persisted with each, or null when anyone may claim it. */
  readonly #stored = new Map<string, string | null>();
  /** Held runs by quota key. */
  readonly #byQuota = new Map<string, Set<R>>();
  /** Runs whose record the start-up scan could not read: looked up in the store when named. */
  readonly #unread = new Set<string>();

  /** Runs held in memory. */
  get size(): number {
    return this.#runs.size;
  }

  get(runId: string): R | undefined {
    return this.#runs.get(runId);
  }

  values(): IterableIterator<R> {
    return this.#runs.values();
  }

  /** Holds `run` under its owner; it is no longer only in the store. */
  add(run: R): void {
    this.#stored.delete(run.runId);
    this.#unread.delete(run.runId);
    this.#runs.set(run.runId, run);
    this.#bucket(run.owner).add(run);
    quotaBucket(this.#byQuota, run.quota).add(run);
  }

  /** Forgets `run` (memory only; the caller deletes its state). False when it was not held. */
  remove(run: R): boolean {
    if (this.#runs.get(run.runId) !== run) return false;
    this.#runs.delete(run.runId);
    this.#drop(run.owner, run);
    this.#dropQuota(run);
    return true;
  }

  /** Moves a held run to a new owner: null releases it; a claim also moves its quota key. */
  setOwner(run: R, owner: string | null, quota?: string): void {
    this.#drop(run.owner, run);
    run.owner = owner;
    this.#bucket(owner).add(run);
    if (quota === undefined || quota === run.quota) return;
    this.#dropQuota(run);
    run.quota = quota;
    quotaBucket(this.#byQuota, quota).add(run);
  }

  /** The runs `owner` holds, in the order they were added. */
  owned(owner: string): readonly R[] {
    return [...(this.#byOwner.get(owner) ?? [])];
  }

  /** How many runs count against `quota`, and how many of them wait for a slot. */
  countOf(quota: string): { held: number; queued: number } {
    const runs = this.#byQuota.get(quota);
    let queued = 0;
    for (const run of runs ?? []) if (run.view.state === 'queued') queued++;
    return { held: runs?.size ?? 0, queued };
  }

  /** Up to `count` finished runs (not paused, no leg) counting against `quota`, oldest first. */
  oldestFinished(quota: string, count: number, terminal: (run: R) => boolean): R[] {
    const finished: R[] = [];
    for (const run of this.#byQuota.get(quota) ?? []) {
      if (run.leg || run.finishedAt === undefined || !terminal(run)) continue;
      finished.push(run);
    }
    finished.sort((a, b) => (a.finishedAt ?? 0) - (b.finishedAt ?? 0));
    return finished.slice(0, Math.max(0, count));
  }

  /** Records a run found in the store and not held: its persisted principal owner, or null. */
  addStored(runId: string, principalOwner: string | null): void {
    if (!this.#runs.has(runId)) this.#stored.set(runId, principalOwner);
  }

  /** Forgets a stored run (the sweep is deleting it). */
  removeStored(runId: string): void {
    this.#stored.delete(runId);
    this.#unread.delete(runId);
  }

  /** Records a run whose record could not be read at start-up, so a lookup reads it then. */
  addUnread(runId: string): void {
    if (!this.#runs.has(runId)) this.#unread.add(runId);
  }

  /** Whether `runId` is neither held nor indexed but its record could not be read when listed. */
  unread(runId: string): boolean {
    return this.#unread.has(runId) && !this.has(runId);
  }

  /** Whether `runId` is held or known in the store (the sweep leaves held runs to the registry). */
  has(runId: string): boolean {
    return this.#runs.has(runId) || this.#stored.has(runId);
  }

  /**
   * Whether the caller `owner` may reach `runId`, and where. Unknown, foreign and swept ids all
   * get undefined after the same two map reads and one constant-time comparison of two digests;
   * nothing of the run (its arguments, its record) is touched before the answer is known.
   */
  reach(runId: string, owner: string): Reach | undefined {
    const live = this.#runs.get(runId);
    const stored = this.#stored.get(runId);
    const holder = live !== undefined ? live.owner : stored;
    const same = sameOwner(typeof holder === 'string' ? holder : '', owner);
    if (holder === undefined) return undefined;
    if (holder !== null && !same) return undefined;
    return live !== undefined ? 'live' : 'stored';
  }

  /**
   * Makes every run `owner` holds claimable (its session ended: nobody can present that owner
   * again). They keep counting against their quota key until claimed. Resolves to how many.
   */
  orphan(owner: string): number {
    const runs = this.#byOwner.get(owner);
    if (runs === undefined) return 0;
    const orphans = [...runs];
    for (const run of orphans) this.setOwner(run, null);
    return orphans.length;
  }

  #bucket(owner: string | null): Set<R> {
    const key = owner ?? ORPHANS;
    let runs = this.#byOwner.get(key);
    if (runs === undefined) {
      runs = new Set();
      this.#byOwner.set(key, runs);
    }
    return runs;
  }

  #dropQuota(run: R): void {
    const runs = this.#byQuota.get(run.quota);
    runs?.delete(run);
    if (runs?.size === 0) this.#byQuota.delete(run.quota);
  }

  #drop(owner: string | null, run: R): void {
    const key = owner ?? ORPHANS;
    const runs = this.#byOwner.get(key);
    runs?.delete(run);
    if (runs?.size === 0) this.#byOwner.delete(key);
  }
}

function quotaBucket<R>(index: Map<string, Set<R>>, quota: string): Set<R> {
  let runs = index.get(quota);
  if (runs === undefined) {
    runs = new Set();
    index.set(quota, runs);
  }
  return runs;
}

/** The bucket of runs whose owner's session ended. */
const ORPHANS: unique symbol = Symbol('orphans');

/**
 * Compares two owner keys (hex digests, or '' for the anonymous owner) in constant time: both
 * are hashed to 32 bytes first, so neither length nor a common prefix shows in the timing.
 */
function sameOwner(a: string, b: string): boolean {
  return timingSafeEqual(hash(a), hash(b));
}

function hash(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

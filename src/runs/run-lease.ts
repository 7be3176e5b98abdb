/**
 * The execution lease of one run on a shared store (seed 000, spec/mhl-serve.md §5.3): taken
 * before a replica executes or resumes the run, renewed every TTL/3 on a heartbeat, released
 * when the leg ends. Every write the leg makes goes through `fencedStore`, so once the lease
 * lapsed and another replica took it, the database refuses the write and the leg stops.
 * A replica whose renewals keep failing (the store unreachable) stops its own run before the
 * lease can expire, so two replicas never both believe they hold it.
 *
 * Knows nothing of the registry: it is told what to stop through `onLost`.
 */
import type { Logger } from '../log/index.js';
import type {
  BatchWrite,
  DeleteOptions,
  Fence,
  Lease,
  Store,
  StoreCapability,
  StoreOptions,
  StoreWith,
} from '../store/index.js';
import { RunError } from './types.js';

/** A store that can lease and fence: what the run layer needs to share runs across replicas. */
export type SharedStore = StoreWith<'lease' | 'fence'>;

/** The message a run that could not take its lease fails with (seed 000). */
export const LEASE_UNAVAILABLE_MESSAGE = 'could not acquire run execution lease';
/** Why a leg whose lease was taken over (or lapsed) stops. */
export const LEASE_LOST_MESSAGE =
  'this replica lost the run execution lease (it stalled or could not reach the store); the run continues only where it is resumed';

/**
 * Takes the lease of `runId`. Resolves to undefined when another replica holds it live.
 * @throws RunError `LEASE_UNAVAILABLE` when the store cannot be reached.
 */
export async function acquireLease(
  store: SharedStore,
  runId: string,
  replica: { readonly id: string; readonly leaseTtlMs: number },
): Promise<Lease | undefined> {
  try {
    return await store.lease.acquire(runId, replica.id, replica.leaseTtlMs);
  } catch (error) {
    throw new RunError(
      'LEASE_UNAVAILABLE',
      `${LEASE_UNAVAILABLE_MESSAGE}: the state store could not be reached; retry later`,
      undefined,
      { cause: error },
    );
  }
}

/**
 * Whether another replica holds `runId` live right now.
 * @throws RunError `LEASE_UNAVAILABLE` when the lock state cannot be read.
 */
export async function heldElsewhere(store: SharedStore, runId: string): Promise<boolean> {
  try {
    return (await store.lease.read(runId))?.live === true;
  } catch (error) {
    throw new RunError(
      'LEASE_UNAVAILABLE',
      'the run lock state could not be read from the state store; retry later',
      undefined,
      { cause: error },
    );
  }
}

/** A held lease with its heartbeat. */
export class RunLease {
  #lease: Lease;
  readonly #store: SharedStore;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #onLost: (why: string) => void;
  #timer: NodeJS.Timeout | undefined;
  /** Fires when the last confirmed renewal is about to run out: the lease is given up for lost. */
  #watchdog: NodeJS.Timeout | undefined;
  /** Local monotonic time of the last confirmed renewal (or the acquisition). */
  #confirmedAt = performance.now();
  #lost = false;
  #ended = false;

  constructor(
    store: SharedStore,
    lease: Lease,
    ttlMs: number,
    logger: Logger,
    onLost: (why: string) => void,
  ) {
    this.#store = store;
    this.#lease = lease;
    this.#ttlMs = ttlMs;
    this.#logger = logger;
    this.#onLost = onLost;
    this.#schedule(ttlMs / 3);
    this.#arm();
  }

  /** What every fenced write presents. */
  get fence(): Fence {
    return this.#lease;
  }

  /** True once the lease was found gone or given up for lost. */
  get lost(): boolean {
    return this.#lost;
  }

  /** Called when a fenced write was refused: the lease is gone for certain. */
  lose(): void {
    if (this.#lost || this.#ended) return;
    this.#lost = true;
    this.#stopTimer();
    this.#logger.warn({ runId: this.#lease.runId }, 'run execution lease lost');
    this.#onLost(LEASE_LOST_MESSAGE);
  }

  /** The lease was given up with the run's last write: only the heartbeat is left to stop. */
  released(): void {
    this.#ended = true;
    this.#stopTimer();
  }

  /** Stops the heartbeat and gives the lease up (best effort: it lapses anyway). */
  async release(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#stopTimer();
    if (this.#lost) return;
    await this.#store.lease.release(this.#lease).catch((error: unknown) => {
      this.#logger.warn({ err: error, runId: this.#lease.runId }, 'could not release a run lease');
    });
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => void this.#beat(), ms);
    this.#timer.unref();
  }

  #stopTimer(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
  }

  /**
   * Judges the lease from the last confirmed renewal alone, on its own timer: a renew that hangs
   * (the store partitioned away, packets dropped) never answers, so waiting for it would keep
   * the run going past the lease's expiry. A third of the TTL before it, the run stops here.
   */
  #arm(): void {
    clearTimeout(this.#watchdog);
    const left = this.#confirmedAt + this.#ttlMs - this.#ttlMs / 3 - performance.now();
    this.#watchdog = setTimeout(
      () => {
        this.#logger.warn(
          { runId: this.#lease.runId, ttl_ms: this.#ttlMs },
          'no run lease renewal confirmed in time; stopping the run before the lease expires',
        );
        this.lose();
      },
      Math.max(0, left),
    );
    this.#watchdog.unref();
  }

  async #beat(): Promise<void> {
    if (this.#ended || this.#lost) return;
    const started = performance.now();
    try {
      // Each renew has a deadline (the lease pool's query timeout), so a hung one fails over to
      // the retry below rather than holding the heartbeat.
      const renewed = await this.#store.lease.renew(this.#lease, this.#ttlMs);
      if (this.#ended || this.#lost) return;
      if (renewed === undefined) return this.lose();
      this.#lease = renewed;
      this.#confirmedAt = started;
      this.#arm();
      this.#schedule(this.#ttlMs / 3);
    } catch (error) {
      if (this.#ended || this.#lost) return;
      // Unreachable: keep trying, but stop the run while a third of the TTL is still left,
      // before another replica could find the lease lapsed and take the run over.
      const left = this.#ttlMs - (performance.now() - this.#confirmedAt);
      this.#logger.warn(
        { err: error, runId: this.#lease.runId, left_ms: Math.round(left) },
        'could not renew a run lease',
      );
      if (left <= this.#ttlMs / 3) return this.lose();
      this.#schedule(Math.min(this.#ttlMs / 6, Math.max(50, left - this.#ttlMs / 3)));
    }
  }
}

const BATCH_ONLY: ReadonlySet<StoreCapability> = new Set(['batch']);

/**
 * The store a leg writes its checkpoints through: reads pass through, every write is fenced on
 * `lease`, a `batch` as one transaction. A refused write marks the lease lost (which stops the leg) and throws.
 */
export function fencedStore(store: SharedStore, lease: RunLease): Store {
  const refused = (key: string): never => {
    lease.lose();
    throw new Error(`${LEASE_LOST_MESSAGE} (write of ${key} refused)`);
  };
  return {
    capabilities: BATCH_ONLY,
    // A multi-key transition is one transaction under the lease (`writeFenced`).
    batch: {
      write: async (writes: readonly BatchWrite[], options?: StoreOptions) => {
        const key = writes[0]?.key ?? lease.fence.runId;
        if (!(await store.fence.writeFenced(writes, lease.fence, options))) refused(key);
      },
    },
    get: (key: string, options?: StoreOptions) => store.get(key, options),
    list: (prefix: string, options?: StoreOptions) => store.list(prefix, options),
    put: async (key: string, value: string, options?: StoreOptions) => {
      if (!(await store.fence.putFenced(key, value, lease.fence, options))) refused(key);
    },
    delete: async (key: string, options?: DeleteOptions) => {
      if (!(await store.fence.deleteFenced(key, lease.fence, options))) refused(key);
    },
    // The shared store outlives every leg.
    close: async () => {},
  };
}

/**
 * Physical execution slots shared by direct tool calls, job targets and async runs
 * (`--max-active`, seed 002 "Parallel admission").
 *
 * Direct calls and jobs never wait: `tryAcquire` either hands out a slot or says why not, so
 * the caller can fail at once with a retryable `EXECUTION_CAPACITY_FULL`. Async runs are the
 * one exception: the run layer queues them (`acquire`), FIFO, and reports them `queued` until
 * a slot frees. A slot is released when the work physically ends, so a cancelled handler that
 * ignores cancellation keeps exactly its own slot until it exits.
 */

/** One held execution slot. `release` is idempotent. */
export interface Slot {
  release(): void;
}

/** Why `tryAcquire` handed out no slot. */
export type Refusal = 'full' | 'closed';

/** Thrown (as the rejection of `acquire`) once admission has closed for shutdown. */
export class AdmissionClosedError extends Error {
  constructor() {
    super('the server is shutting down and admits no new work');
    this.name = 'AdmissionClosedError';
  }
}

interface Waiter {
  readonly grant: (slot: Slot) => void;
  readonly refuse: (reason: unknown) => void;
}

export class Admission {
  readonly capacity: number;
  #active = 0;
  #closed = false;
  readonly #waiters: Waiter[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`admission capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  /** Slots held right now (including those of draining, uncooperative handlers). */
  get active(): number {
    return this.#active;
  }

  /** Runs waiting in `acquire` for a slot. */
  get queued(): number {
    return this.#waiters.length;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A slot now, or the reason there is none. Never waits. */
  tryAcquire(): Slot | Refusal {
    if (this.#closed) return 'closed';
    // Queued runs were first in line: a direct call must not overtake them.
    if (this.#active >= this.capacity || this.#waiters.length > 0) return 'full';
    return this.#grant();
  }

  /**
   * A slot as soon as one frees, in arrival order. Rejects with the signal's reason when
   * `signal` aborts first, and with `AdmissionClosedError` when admission closes first.
   */
  acquire(signal?: AbortSignal): Promise<Slot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.tryAcquire();
    if (typeof now !== 'string') return Promise.resolve(now);
    if (now === 'closed') return Promise.reject(new AdmissionClosedError());
    return new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(slot);
        },
        refuse: (reason) => {
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Refuses all new work from now on and rejects every queued `acquire`. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) waiter.refuse(new AdmissionClosedError());
  }

  #grant(): Slot {
    this.#active++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#active--;
        this.#next();
      },
    };
  }

  #next(): void {
    const waiter =
      !this.#closed && this.#active < this.capacity ? this.#waiters.shift() : undefined;
    if (waiter) waiter.grant(this.#grant());
  }
}

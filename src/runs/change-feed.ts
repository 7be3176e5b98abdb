/**
 * The run registry's change feed: every change to a held run's view (a state, a step) or to its
 * log (a line appended) is published here once, synchronously, and every subscriber is told.
 * Resource subscriptions and the live runs page both read it, so neither polls the registry.
 * A change names the run and what changed, nothing more: a subscriber reads what it needs back
 * from the registry through the caller-scoped accessors, so the feed itself carries no run data
 * and cannot leak one owner's run to another.
 */

/** What changed: the run view (state, step, error…) or the log (a line appended). */
export type RunChangeKind = 'view' | 'log';

export interface RunChange {
  readonly runId: string;
  readonly kind: RunChangeKind;
}

export type RunChangeListener = (change: RunChange) => void;

/** One feed per registry; subscribers are told in the order they subscribed. */
export class RunChangeFeed {
  readonly #listeners = new Set<RunChangeListener>();
  readonly #onFault: (error: unknown) => void;

  /** `onFault` hears a listener's throw; the publisher and the other listeners never do. */
  constructor(onFault: (error: unknown) => void = () => {}) {
    this.#onFault = onFault;
  }

  /** How many listeners are subscribed (for tests and metrics). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Adds `listener`; returns the function that removes it (idempotent). */
  subscribe(listener: RunChangeListener): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry: RunChangeListener = (change) => listener(change);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /**
   * Tells every listener, synchronously: listeners must be cheap (coalesce, then read later).
   * A listener that throws is reported to `onFault` and the rest are still told.
   */
  publish(change: RunChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#onFault(error);
      }
    }
  }
}

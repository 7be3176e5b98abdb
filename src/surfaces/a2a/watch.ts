/**
 * Wakes whoever waits on a run when it changes: a blocking send, a stream. The run registry
 * reports every change of a run's view or log by id (`onChange`, synchronous), and `next`
 * resolves on the following one, so a waiter re-reads the run only when something happened,
 * never on a timer. A waiter registers before it reads, so no change falls in between.
 */
export class RunWatch {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Told by the registry: the run changed. Cheap, never throws. */
  notify(runId: string): void {
    const waiters = this.#waiters.get(runId);
    if (waiters === undefined) return;
    this.#waiters.delete(runId);
    for (const wake of waiters) wake();
  }

  /** Resolves at the run's next change, or when `signal` aborts (never rejects). */
  next(runId: string, signal: AbortSignal): Promise<void> {
    return new Promise((done) => {
      if (signal.aborted) return done();
      let waiters = this.#waiters.get(runId);
      if (waiters === undefined) {
        waiters = new Set();
        this.#waiters.set(runId, waiters);
      }
      const set = waiters;
      const wake = () => {
        signal.removeEventListener('abort', abort);
        done();
      };
      const abort = () => {
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(runId) === set) this.#waiters.delete(runId);
        done();
      };
      set.add(wake);
      signal.addEventListener('abort', abort, { once: true });
    });
  }
}

/**
 * Background agent calls: the run-wide `spawn` concurrency ceiling and the `wait` modes (all,
 * any, N of) with timeouts and `on_error: "collect"`.
 */
import { LangError } from '../../lang/index.js';
import type { TaskHandle, Value } from './values.js';
import { wrapMessage } from './wrap-message.js';

/** A counting semaphore: at most `limit` spawned calls run at once in one run. */
export class SpawnLimiter {
  readonly #limit: number;
  #active = 0;
  readonly #queue: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = Math.max(1, limit);
  }

  async run(signal: AbortSignal, task: () => Promise<Value>): Promise<Value> {
    if (this.#active >= this.#limit) {
      await new Promise<void>((ready, cancel) => {
        const onAbort = () => cancel(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        this.#queue.push(() => {
          signal.removeEventListener('abort', onAbort);
          ready();
        });
      });
    }
    this.#active++;
    try {
      return await task();
    } finally {
      this.#active--;
      this.#queue.shift()?.();
    }
  }
}

export interface WaitOptions {
  readonly mode: 'all' | 'any' | number;
  readonly timeoutMs: number | undefined;
  /** `on_error: "collect"`: never fail; callers inspect `.ok` / `.error`. */
  readonly collect: boolean;
  readonly signal: AbortSignal;
}

/**
 * Waits for handles. `all` fails on the first error (cancelling the rest) unless collecting;
 * `any` succeeds on the first success (cancelling the rest); `N of` on the N-th success.
 */
export async function waitFor(handles: readonly TaskHandle[], options: WaitOptions): Promise<void> {
  const needed =
    options.mode === 'all' ? handles.length : options.mode === 'any' ? 1 : options.mode;
  if (needed > handles.length)
    throw new LangError('WAIT', `wait ${needed} of ${handles.length}: not enough handles`);
  const settled = new Promise<void>((done, fail) => {
    let ok = 0;
    let finished = 0;
    if (handles.length === 0 || needed === 0) return done();
    for (const h of handles) {
      void h.promise.then(() => {
        finished++;
        if (h.status === 'ok') ok++;
        else if (options.mode === 'all' && !options.collect)
          return fail(new LangError('WAIT', spawnFailure(h.agent, h.error)));
        if (ok >= needed) return done();
        if (finished === handles.length) {
          if (options.collect) return done();
          fail(
            new LangError(
              'WAIT',
              `only ${ok} of ${handles.length} spawned calls succeeded (needed ${needed})`,
            ),
          );
        }
      });
    }
  });
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const deadline = new Promise<never>((_, fail) => {
    if (options.timeoutMs !== undefined) {
      const message = `wait timed out after ${options.timeoutMs} ms`;
      timer = setTimeout(() => fail(new LangError('TIMEOUT', message)), options.timeoutMs);
    }
    onAbort = () => fail(options.signal.reason);
    options.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([settled, deadline]);
  } catch (e) {
    if (!options.collect || !(e instanceof LangError) || e.code !== 'TIMEOUT') throw e;
  } finally {
    clearTimeout(timer);
    // The step's signal outlives this wait: a listener left on it would pile up in loops.
    options.signal.removeEventListener('abort', onAbort);
    // Whatever still runs is no longer wanted.
    for (const h of handles) if (h.status === 'running') h.controller.abort();
  }
}

/** A spawned call's failure, naming the agent once (its error usually names it already). */
function spawnFailure(agent: string, error: string | null | undefined): string {
  const message = error ?? 'unknown error';
  return wrapMessage(`spawned ${agent} failed: `, `agent "${agent}"`, message);
}

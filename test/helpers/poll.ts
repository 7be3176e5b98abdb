/**
 * The one way tests wait for something they cannot be told about (a pid file, a process dying,
 * a run settling): `until` re-checks a condition with a short back-off and fails with what it
 * was waiting for and the last value seen. Never a fixed sleep: a test waits exactly as long as
 * the event takes, and no longer than its bound.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface UntilOptions {
  /** What the test waits for, as it reads in the failure: "the Hold step to start". */
  readonly what: string;
  /** Fails after this long (default 5 s). */
  readonly timeoutMs?: number;
}

/**
 * Resolves with the first value of `check` that is neither `undefined` nor `false`; `check` may
 * be async. Rejects after `timeoutMs` with `timed out after … waiting for <what>`.
 */
export async function until<T>(
  check: () => T | false | undefined | Promise<T | false | undefined>,
  options: UntilOptions,
): Promise<T> {
  const limit = options.timeoutMs ?? 5000;
  const deadline = Date.now() + limit;
  // Re-check quickly at first (most events are near), then every 25 ms at most.
  for (let wait = 1; ; wait = Math.min(wait * 2, 25)) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${limit} ms waiting for ${options.what}`);
    }
    await delay(wait);
  }
}

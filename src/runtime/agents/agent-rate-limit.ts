/**
 * Per-agent rate limits (spec §5.1 `rate_limit`, `on_exceeded: "queue"`): a FIFO concurrency
 * semaphore plus a sliding 60-second window of request starts. One limiter per agent is shared by
 * every call in the process; callers queue, and a cancelled caller leaves the queue. It does not
 * know what a request is; it only hands out and takes back slots.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentSpec, RateLimitPolicy } from './agent-spec.js';

const WINDOW_MS = 60_000;

/** Gives back a slot; calling it twice is harmless. */
export type Release = () => void;

/** One agent's semaphore and request window. */
export class AgentLimiter {
  readonly #concurrency: number;
  readonly #perMinute: number;
  readonly #now: () => number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #starts: number[] = [];

  constructor(policy: RateLimitPolicy, now: () => number = Date.now) {
    this.#concurrency = positiveOrInfinity(policy.concurrency);
    this.#perMinute = positiveOrInfinity(policy.requestsPerMinute);
    this.#now = now;
  }

  /**
   * Waits for a concurrency slot, then for room in the minute window, and records the start.
   * Honours `signal`: an aborted wait rejects with the abort reason and holds no slot.
   */
  async acquire(signal: AbortSignal): Promise<Release> {
    await this.#slot(signal);
    try {
      await this.#window(signal);
    } catch (e) {
      this.#release();
      throw e;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  #slot(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#active < this.#concurrency) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(grant);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal.reason);
      };
      this.#waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The slot passes straight to the next waiter, so a newcomer cannot overtake the queue. */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active--;
  }

  async #window(signal: AbortSignal): Promise<void> {
    if (this.#perMinute === Number.POSITIVE_INFINITY) return;
    for (;;) {
      const now = this.#now();
      while (this.#starts.length > 0 && (this.#starts[0] ?? 0) <= now - WINDOW_MS) {
        this.#starts.shift();
      }
      if (this.#starts.length < this.#perMinute) {
        this.#starts.push(now);
        return;
      }
      const wait = (this.#starts[0] ?? now) + WINDOW_MS - now;
      await sleep(Math.max(1, wait), undefined, { signal });
    }
  }
}

/** Limiters by agent, for one process (or one injected state). */
export class AgentLimiters {
  readonly #byKey = new Map<string, AgentLimiter>();

  /**
   * The limiter for `spec`, or undefined when it declares no `rate_limit`. Agents share by name;
   * inline agents (all named `<inline>`) share only with the same command, and a name declared
   * with two different policies gets one limiter per policy.
   */
  for(spec: AgentSpec, now: () => number): AgentLimiter | undefined {
    const policy = spec.rateLimit;
    if (policy === undefined) return undefined;
    const key = JSON.stringify([
      spec.name,
      spec.name === '<inline>' ? (spec.command ?? spec.engine ?? '') : '',
      policy.concurrency ?? null,
      policy.requestsPerMinute ?? null,
    ]);
    let limiter = this.#byKey.get(key);
    if (limiter === undefined) {
      limiter = new AgentLimiter(policy, now);
      this.#byKey.set(key, limiter);
    }
    return limiter;
  }
}

function positiveOrInfinity(n: number | undefined): number {
  return n === undefined || !(n > 0) ? Number.POSITIVE_INFINITY : n;
}

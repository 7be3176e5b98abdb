/**
 * The time limit a handler may put on the request it serves (`RequestContext.limit`), run on the
 * request's own cancellation: when the time is up it aborts with a `TimeoutError`, and the
 * dispatcher, seeing `expired`, still sends the handler's answer (a cancelled request gets none).
 * No second signal linked to the request's.
 */
import type { RequestLimit } from './context.js';
import type { RequestAbort } from './request-abort.js';

export class RequestTimer {
  readonly #abort: RequestAbort;
  #timer: NodeJS.Timeout | undefined;
  #expired = false;
  /** True until the handler has returned (a value, a promise or a throw). */
  #eager = true;
  /** A limit asked for before that, armed by `waiting` if the handler goes on to wait. */
  #asked: { readonly ms: number; readonly what: string; readonly at: number } | undefined;

  constructor(abort: RequestAbort) {
    this.#abort = abort;
  }

  /** Whether the time limit (not a cancel or a close) aborted the request. */
  get expired(): boolean {
    return this.#expired;
  }

  /**
   * `RequestContext.limit`: (re)arms the limit at `ms`; `what` names it in the abort reason.
   * Asked for while the handler is still running synchronously, the timer is armed only once
   * the handler returns a promise (`waiting`), for what is left of `ms` then: no timer can fire
   * during synchronous code anyway, so a call answered without waiting never sets one.
   */
  readonly limit = (ms: number, what: string): RequestLimit => {
    this.stop();
    if (this.#eager) this.#asked = { ms, what, at: performance.now() };
    else this.#arm(ms, what, ms);
    return { signal: this.#abort, expired: () => this.#expired, dispose: () => this.stop() };
  };

  /** The handler returned a promise: a limit it asked for until then starts counting down. */
  waiting(): void {
    this.#eager = false;
    const asked = this.#asked;
    if (asked === undefined) return;
    this.#asked = undefined;
    this.#arm(asked.ms, asked.what, Math.max(0, asked.ms - (performance.now() - asked.at)));
  }

  #arm(ms: number, what: string, left: number): void {
    const abort = this.#abort;
    this.#timer = setTimeout(() => {
      if (abort.aborted) return;
      this.#expired = true;
      abort.abort(new DOMException(`${what} timed out after ${ms} ms`, 'TimeoutError'));
    }, left);
  }

  /** Stops the timer (the request was answered, or the handler disposed of its limit). */
  stop(): void {
    this.#asked = undefined;
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The time limit a handler may put on the request it serves (`RequestContext.limit`), run on the
 * request's own AbortController: when the time is up the request's signal aborts with a
 * `TimeoutError`, and the dispatcher, seeing `expired`, still sends the handler's answer (a
 * cancelled request gets none). One signal per request instead of a second one linked to it.
 */
import type { RequestLimit } from './context.js';

export class RequestTimer {
  readonly #controller: AbortController;
  #timer: NodeJS.Timeout | undefined;
  #expired = false;
  /** True until the handler has returned (a value, a promise or a throw). */
  #eager = true;
  /** A limit asked for before that, armed by `waiting` if the handler goes on to wait. */
  #asked: { readonly ms: number; readonly what: string; readonly at: number } | undefined;

  constructor(controller: AbortController) {
    this.#controller = controller;
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
    const controller = this.#controller;
    return { signal: controller.signal, expired: () => this.#expired, dispose: () => this.stop() };
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
    const controller = this.#controller;
    this.#timer = setTimeout(() => {
      if (controller.signal.aborted) return;
      this.#expired = true;
      controller.abort(new DOMException(`${what} timed out after ${ms} ms`, 'TimeoutError'));
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

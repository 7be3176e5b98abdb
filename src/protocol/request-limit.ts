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

  constructor(controller: AbortController) {
    this.#controller = controller;
  }

  /** Whether the time limit (not a cancel or a close) aborted the request. */
  get expired(): boolean {
    return this.#expired;
  }

  /** `RequestContext.limit`: (re)arms the limit at `ms`; `what` names it in the abort reason. */
  readonly limit = (ms: number, what: string): RequestLimit => {
    clearTimeout(this.#timer);
    const controller = this.#controller;
    this.#timer = setTimeout(() => {
      if (controller.signal.aborted) return;
      this.#expired = true;
      controller.abort(new DOMException(`${what} timed out after ${ms} ms`, 'TimeoutError'));
    }, ms);
    return { signal: controller.signal, expired: () => this.#expired, dispose: () => this.stop() };
  };

  /** Stops the timer (the request was answered, or the handler disposed of its limit). */
  stop(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * A request's cancellation (`RequestContext.cancellation`): aborted by a cancel, a closed
 * session or the request's time limit, with an `AbortSignal` made only on the first read of
 * `signal`. A call answered without waiting is never cancelled (a cancel and a time limit
 * arrive as later events), and on Node 20 each `AbortSignal` costs a trivial call about 7 µs of
 * CPU (its maps are its own and outlive the young generation: docs/benchmarks.md), so such a
 * call makes none.
 */
import type { RequestCancellation } from './context.js';

export class RequestAbort implements RequestCancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  throwIfAborted(): void {
    if (this.#aborted) throw this.#reason;
  }

  get signal(): AbortSignal {
    let controller = this.#controller;
    if (controller === undefined) {
      controller = new AbortController();
      this.#controller = controller;
      if (this.#aborted) controller.abort(this.#reason);
    }
    return controller.signal;
  }

  /** Aborts with `reason` (the first abort wins, as an `AbortController`'s does). */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

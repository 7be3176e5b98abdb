/**
 * The methods a surface answers, as data: each method name with its handler and, when it exists
 * only in some eras, those eras. A server registers them with its dispatcher in one place, so a
 * surface never needs the dispatcher itself.
 */
import type { Dispatcher, EagerMethodHandler, Era, MethodHandler } from '../protocol/index.js';

/** One method a surface answers; its handler may be eager (`tools/call`'s is). */
export interface MethodEntry<H extends EagerMethodHandler = MethodHandler> {
  readonly method: string;
  readonly handler: H;
  /** The eras the method exists in; all of them when absent. */
  readonly eras?: readonly Era[];
}

/** Registers every entry with `dispatcher` (a name taken twice throws, as `register` does). */
export function registerMethods(
  dispatcher: Dispatcher,
  entries: readonly MethodEntry<EagerMethodHandler>[],
): void {
  for (const { method, handler, eras } of entries) {
    dispatcher.register(method, handler, eras === undefined ? {} : { eras });
  }
}

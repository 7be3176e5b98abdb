/**
 * A signal that aborts when a parent aborts or a time limit passes.
 *
 * Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on Node 20 the combined signal holds
 * the timeout signal weakly, and once the garbage collector takes it the deadline never fires
 * (seen here: a 1 s step timeout that let a 30 s command finish). The timer here is held until
 * `dispose()`, which callers run in a `finally`.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether it was the time limit (not the parent) that aborted. */
  readonly expired: () => boolean;
  readonly dispose: () => void;
}

// Shared by every deadline without a time limit (every step without `timeout:`).
const never = () => false;
const nothing = () => {};

export function deadline(
  parent: AbortSignal,
  ms: number | undefined,
  what = 'operation',
): Deadline {
  if (ms === undefined) return { signal: parent, expired: never, dispose: nothing };
  const controller = new AbortController();
  let expired = false;
  const onParent = () => controller.abort(parent.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`${what} timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  if (parent.aborted) onParent();
  else parent.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    expired: () => expired,
    dispose: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}

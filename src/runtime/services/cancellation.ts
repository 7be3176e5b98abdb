/**
 * What a run is cancelled by: an `AbortSignal`, or a deferred one that makes its `AbortSignal`
 * only when something needs one (a listener, a Node API). Checks (`aborted`, `reason`,
 * `throwIfAborted`) read either kind as is; `signalOf` gives the `AbortSignal`. A server
 * request's cancellation is deferred (`RequestAbort` in src/protocol, which says why).
 */
export interface DeferredSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  /** The `AbortSignal`, made on the first read (aborted already when the source is). */
  readonly signal: AbortSignal;
}

export type Cancellation = AbortSignal | DeferredSignal;

/** The `AbortSignal` of `cancellation`, made now for a deferred one that has none yet. */
export function signalOf(cancellation: Cancellation): AbortSignal {
  return cancellation instanceof AbortSignal ? cancellation : cancellation.signal;
}

/**
 * What the dispatcher hands a method handler (`RequestContext`), what a transport hands the
 * dispatcher (`Connection`), and the progress reporter bound to one request. Types and one small
 * factory; no dispatch logic, no I/O of its own (progress goes out through the transport's
 * `send`).
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress
 */
import type { Era } from './era.js';
import type { JsonRpcNotification, JsonRpcRequest, RequestId } from './jsonrpc.js';
import type { LogReporter } from './logging.js';
import type { Session } from './session.js';

/**
 * Sends a request to the client of a legacy session while the current request is being served
 * (e.g. `elicitation/create`) and resolves with the client's result. Rejects with an `RpcError`
 * for the client's error, and when `signal` or the current request is aborted, the current
 * request has been answered, or the session closes.
 */
export type ClientRequester = (
  method: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<Record<string, unknown>>;

/** Reports progress of the current request as `notifications/progress`. */
export type ProgressReporter = (progress: number, total?: number, message?: string) => void;

/**
 * A request's cancellation, read without making its `AbortSignal` (see `RequestAbort`): checks
 * read `aborted` and `throwIfAborted`; `signal` makes the `AbortSignal` on its first read.
 */
export interface RequestCancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  readonly signal: AbortSignal;
}

/**
 * A time limit on the request being served (`RequestContext.limit`): `signal` is the request's
 * own cancellation, aborted with a `TimeoutError` when the time is up (or by a cancel, as ever).
 */
export interface RequestLimit {
  readonly signal: RequestCancellation;
  /** Whether it was the time limit (not a cancel or a close) that aborted `signal`. */
  readonly expired: () => boolean;
  /** Stops the timer; call it in a `finally`. */
  readonly dispose: () => void;
}

/** What a method handler knows about the request it serves. */
export interface RequestContext {
  /** The request's era; modern requests are stateless. */
  readonly era: Era;
  /** `2026-07-28` for modern requests, else the session's negotiated revision. */
  readonly protocolVersion: string;
  /** The legacy session; undefined for modern requests, which have none. */
  readonly session: Session | undefined;
  /** Modern `_meta` client capabilities, or those the legacy client declared (else `{}`). */
  readonly clientCapabilities: Record<string, unknown>;
  readonly requestId: RequestId;
  /**
   * Aborted by `notifications/cancelled`, `closeSession` or `closeAll`. Pass it down. Reading it
   * makes the request's `AbortSignal`: code that can take `cancellation` should take that.
   */
  readonly signal: AbortSignal;
  /** The same cancellation, whose `AbortSignal` is made only when asked for (`RequestAbort`). */
  readonly cancellation: RequestCancellation;
  /**
   * Bounds the request to `ms` on its own signal: when the time is up `signal` aborts with a
   * `TimeoutError` naming `what`, and the handler's answer (a timeout result, say) is still
   * sent, which it is not after a cancel. Costs no second AbortSignal linked to this one.
   */
  readonly limit?: (ms: number, what: string) => RequestLimit;
  /** Present only when the request carried `params._meta.progressToken`. */
  readonly progress?: ProgressReporter;
  /**
   * Sends log entries as `notifications/message`, filtered by the level the client asked for: a
   * legacy session's `logging/setLevel` (nothing until it is called), or a modern request's
   * `_meta["io.modelcontextprotocol/logLevel"]` (absent without one).
   */
  readonly log?: LogReporter;
  /** The verified caller identity the transport supplied, if any. */
  readonly principal?: string;
  /** The transport's client key (see `Connection.client`), if it has one. */
  readonly client?: string;
  /** Legacy requests only: asks the client something while this request runs. */
  readonly request?: ClientRequester;
  /** Modern retries only: the `inputResponses` the client sent (2026-07-28 multi round-trip). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** Modern retries only: the opaque `requestState` echoed back by the client. */
  readonly requestState?: string;
}

/** A method handler: params (always an object) in, result object out; throw `RpcError` to refuse. */
export type MethodHandler = (
  params: Record<string, unknown>,
  ctx: RequestContext,
) => Promise<Record<string, unknown>>;

/**
 * A method handler that may answer without a promise when it has nothing to wait for (and may
 * then throw synchronously): the dispatcher takes either kind, and answers such a request with
 * no microtask of its own.
 */
export type EagerMethodHandler = (
  params: Record<string, unknown>,
  ctx: RequestContext,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** What a transport passes with each message. */
export interface Connection {
  /** The stdio connection's or HTTP session's state (a fresh one per stateless HTTP request). */
  readonly session: Session;
  /**
   * Sends a server message on this connection: a notification (progress) or a request to the
   * client (its response comes back through `Dispatcher.handle` like any inbound message).
   */
  send(message: JsonRpcNotification | JsonRpcRequest): void | Promise<void>;
  /** The verified caller identity, re-read by the transport for every message. */
  readonly principal?: string | undefined;
  /**
   * Who the caller is counted as for quotas, when the transport can tell callers apart (HTTP:
   * the principal, else the address block): an opaque digest, so one client's many sessions
   * share one quota. Absent over stdio, whose one connection is one client.
   */
  readonly client?: string | undefined;
}

/** Where an unexpected error was caught. */
export interface ErrorSite {
  method: string;
  id?: RequestId;
}

/** What `createProgressReporter` needs about its request. */
export interface ProgressBinding {
  progressToken: string | number;
  request: JsonRpcRequest;
  conn: Connection;
  cancellation: RequestCancellation;
  /** Set to true by the dispatcher once the request is answered. */
  live: { settled: boolean };
  /** Receives a failed `send`. */
  report: (error: unknown, site: ErrorSite) => void;
}

/**
 * A reporter that sends `notifications/progress {progressToken, progress, total?, message?}`.
 * Calls are dropped once the request is aborted or answered, and when `progress` is not finite or
 * not greater than the last one sent (the specification requires it to increase). Never throws;
 * a failed send goes to `report`.
 */
export function createProgressReporter(binding: ProgressBinding): ProgressReporter {
  const { progressToken, request, conn, cancellation, live, report } = binding;
  let last = Number.NEGATIVE_INFINITY;
  return (progress, total, message) => {
    if (live.settled || cancellation.aborted || !Number.isFinite(progress) || progress <= last)
      return;
    last = progress;
    // Built by assignment, not conditional spreads (an object made and copied for each).
    const params: Record<string, unknown> = { progressToken, progress };
    if (total !== undefined) params['total'] = total;
    if (message !== undefined) params['message'] = message;
    const notification: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params,
    };
    // Sent now, not from a microtask: a handler that answers without waiting (see
    // `EagerMethodHandler`) would have answered first, and the event would be lost.
    sendReported(conn, notification, request, report);
  };
}

/** Sends `notification` on `conn`; a failure, thrown or rejected, goes to `report`. */
export function sendReported(
  conn: Connection,
  notification: JsonRpcNotification,
  request: JsonRpcRequest,
  report: (error: unknown, site: ErrorSite) => void,
): void {
  // The site is made only for a failure: a send that works allocates nothing here.
  try {
    const sent = conn.send(notification);
    if (sent instanceof Promise) {
      sent.catch((error: unknown) => report(error, { method: request.method, id: request.id }));
    }
  } catch (error) {
    report(error, { method: request.method, id: request.id });
  }
}

// Over 500 lines: the dispatcher is one class whose private state (in-flight requests, cancellations, channels, handlers) every stage of a message reads, from its classification to its answer.
/**
 * The JSON-RPC core shared by every transport: validates each inbound message, decides its era,
 * answers the built-ins (`initialize`, `notifications/initialized`, `ping`, `server/discover`,
 * `notifications/cancelled`), routes everything else to the handler a surface registered (in the
 * eras it exists in), maps handler outcomes to responses, and sends notifications outside requests
 * through the channel a transport opened for a session (`openChannel`, `notify`). It owns
 * cancellation: one AbortController per inbound request id and session, aborted by
 * `notifications/cancelled` or by closing; a cancelled request gets no response. It never touches a
 * socket or a stream: a transport hands in decoded messages plus a `Connection`, sends back what
 * `handle` returns, and forwards notifications from `send`.
 *
 * Transports must not serialise `handle` calls on one connection: a `notifications/cancelled` can
 * only abort a request whose `handle` is still pending, and a client's response to a server request
 * (`outbound.ts`) can only reach a handler that is still waiting for it.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation
 */
import {
  answerDiscover,
  answerInitialize,
  cancelTarget,
  type ServerDescription,
} from './builtins.js';
import { type ChannelSend, SessionChannels } from './channels.js';
import {
  type Connection,
  createProgressReporter,
  type EagerMethodHandler,
  type ErrorSite,
  type RequestContext,
} from './context.js';
import {
  decideEra,
  decorateModernResult,
  type Era,
  type EraDecision,
  META_KEYS,
  metaOf,
  missingModernMeta,
  type ServerInfo,
} from './era.js';
import { internalError, RPC_ERROR_CODES, RpcError } from './errors.js';
import {
  classifyMessage,
  echoId,
  errorResponse,
  exceedsDepth,
  isRecord,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  MAX_NESTING_DEPTH,
  parseJson,
  type RequestId,
  resultResponse,
} from './jsonrpc.js';
import { createLogReporter, isLogLevel, type LogLevel, type LogReporter } from './logging.js';
import { OutboundRequests } from './outbound.js';
import { RequestAbort } from './request-abort.js';
import { RequestTimer } from './request-limit.js';
import { retryMaterial } from './retry.js';
import { Session, type SessionOptions } from './session.js';

/** Options for `new Dispatcher()`. */
export interface DispatcherOptions extends ServerDescription {
  /** Called with every exception that is answered as -32603, and with failed sends. */
  onError?: (error: unknown, site: ErrorSite) => void;
  /** Clock for session activity; `Date.now` by default. */
  now?: () => number;
  /** Deepest nesting accepted; `MAX_NESTING_DEPTH` by default. */
  maxDepth?: number;
}

/** Options for `Dispatcher.register`. */
export interface RegisterOptions {
  /** The eras the method exists in; all of them by default. */
  readonly eras?: readonly Era[];
}

/** What `handle` resolves to: a response, a batch of them, or nothing (notifications, cancels). */
export type DispatchResult = JsonRpcResponse | JsonRpcResponse[] | undefined;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const BUILT_IN = new Set(['initialize', 'ping', 'server/discover']);

function invalidRequest(message: string, data?: unknown): RpcError {
  return new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, message, data);
}

/** Longest method name echoed back in a -32601, so hostile names are not reflected in full. */
const MAX_ECHOED_METHOD = 128;

function methodNotFound(method: string): RpcError {
  const name =
    method.length > MAX_ECHOED_METHOD ? `${method.slice(0, MAX_ECHOED_METHOD)}…` : method;
  return new RpcError(RPC_ERROR_CODES.METHOD_NOT_FOUND, `method not found: ${name}`, {
    method: name,
  });
}

/** One request whose handler is running, as `#invoke` hands it to `#settle`. */
interface Invocation {
  readonly request: JsonRpcRequest;
  readonly decision: Exclude<EraDecision, { era: 'none' }>;
  readonly conn: Connection;
  readonly requests: Map<RequestId, RequestAbort>;
  readonly abort: RequestAbort;
  readonly timer: RequestTimer;
  readonly live: { settled: boolean };
}

/** The JSON-RPC dispatcher; one per server, shared by its transports. */
export class Dispatcher {
  readonly #server: ServerDescription;
  readonly #onError: ((error: unknown, site: ErrorSite) => void) | undefined;
  readonly #now: () => number;
  readonly #maxDepth: number;
  readonly #handlers = new Map<string, EagerMethodHandler>();
  /** Methods that exist only in some eras; a request of another era gets -32601. */
  readonly #eras = new Map<string, ReadonlySet<Era>>();
  /** Where each session's notifications outside requests go (stdio, an HTTP GET stream). */
  readonly #channels = new SessionChannels((error, method) => this.#report(error, { method }));
  readonly #closeListeners = new Set<(session: Session) => void>();
  readonly #inflight = new Map<Session, Map<RequestId, RequestAbort>>();
  /**
   * Requests cancelled or closed (never answered), as opposed to aborted by their own time limit
   * (answered): a cancel that comes after the time limit fired must still drop the answer.
   */
  readonly #cancelled = new WeakSet<RequestAbort>();
  readonly #outbound = new OutboundRequests();

  constructor(options: DispatcherOptions) {
    this.#server = {
      // Frozen: every 2026-07-28 answer carries it as is, with no copy (decorateModernResult).
      serverInfo: Object.freeze({ ...options.serverInfo }),
      capabilities: options.capabilities,
      legacyCapabilities: options.legacyCapabilities,
      instructions: options.instructions,
    };
    this.#onError = options.onError;
    this.#now = options.now ?? Date.now;
    this.#maxDepth = options.maxDepth ?? MAX_NESTING_DEPTH;
  }

  /** The server's name and version. */
  get serverInfo(): ServerInfo {
    return { ...this.#server.serverInfo };
  }

  /** Requests whose handlers are running, over all sessions. */
  get inFlight(): number {
    let count = 0;
    for (const requests of this.#inflight.values()) count += requests.size;
    return count;
  }

  /** Requests whose handlers are running on `session` (a transport keeps such a session). */
  inFlightOn(session: Session): number {
    return this.#inflight.get(session)?.size ?? 0;
  }

  /**
   * Registers the handler of a request method; with `eras`, requests of any other era are
   * answered -32601 as for an unknown method (e.g. `logging/setLevel`, removed in 2026-07-28).
   * Throws a plain `Error` (a programming fault) for a built-in, a `notifications/` name or a
   * method registered twice.
   */
  register(method: string, handler: EagerMethodHandler, options: RegisterOptions = {}): this {
    if (BUILT_IN.has(method) || method.startsWith('notifications/') || this.#handlers.has(method)) {
      throw new Error(`cannot register method ${JSON.stringify(method)}`);
    }
    this.#handlers.set(method, handler);
    if (options.eras !== undefined) this.#eras.set(method, new Set(options.eras));
    return this;
  }

  /**
   * Gives `session` a way to receive notifications outside any request (the stdio connection,
   * or an HTTP session's GET stream). Returns the function that takes it away again; a newer
   * channel replaces an older one.
   */
  openChannel(session: Session, send: ChannelSend): () => void {
    return this.#channels.open(session, send);
  }

  /**
   * Sends a notification to `session` outside any request. A session without an open channel
   * (an HTTP client that has not opened its GET stream yet) has it held, once (an identical one
   * already held is not held twice) and at most `MAX_HELD` of them, until it opens one or ends.
   * Returns true when it was sent now. Never throws.
   */
  notify(session: Session, notification: JsonRpcNotification): boolean {
    return this.#channels.notify(session, notification);
  }

  /** Calls `listener` with each session `closeSession` ends (surfaces drop per-session state). */
  onSessionClose(listener: (session: Session) => void): void {
    this.#closeListeners.add(listener);
  }

  /** Parses one line or body and handles it; unparseable text answers -32700 with a null id. */
  async handleText(text: string, conn: Connection): Promise<DispatchResult> {
    conn.session.touch(this.#now());
    const parsed = parseJson(text);
    return parsed.ok ? this.handle(parsed.value, conn) : parsed.response;
  }

  /**
   * Handles one decoded message or batch. Resolves to the response(s) to send, or undefined for
   * notifications, peer responses and cancelled requests. Never rejects.
   */
  async handle(message: unknown, conn: Connection): Promise<DispatchResult> {
    // Awaited, not returned: an async function resolving to a returned promise takes two more
    // microtask turns than one awaiting it.
    return await this.handleNow(message, conn);
  }

  /**
   * `handle` for a transport that awaits only a promise: a message answered without waiting
   * (a built-in, a refusal, or an eager handler's answer, such as a one-step workflow's) is
   * answered at once, with no promise and no microtask. Never throws.
   */
  handleNow(message: unknown, conn: Connection): DispatchResult | Promise<DispatchResult> {
    conn.session.touch(this.#now());
    if (exceedsDepth(message, this.#maxDepth)) {
      const error = invalidRequest('message nested too deeply', { maxDepth: this.#maxDepth });
      // A request's own id, when its top level has one, so the client can match the refusal.
      return errorResponse(echoId(message), error);
    }
    if (!Array.isArray(message)) return this.#single(message, conn, false);
    return this.#batch(message, conn);
  }

  async #batch(message: unknown[], conn: Connection): Promise<DispatchResult> {
    if (!conn.session.allowsBatch) {
      const error = invalidRequest('batch requests are only allowed on 2025-03-26 sessions', {
        protocolVersion: conn.session.protocolVersion ?? null,
      });
      return errorResponse(null, error);
    }
    if (message.length === 0) return errorResponse(null, invalidRequest('empty batch'));
    const answers = await Promise.all(message.map((item) => this.#single(item, conn, true)));
    const responses = answers.filter((answer) => answer !== undefined);
    return responses.length > 0 ? responses : undefined;
  }

  /**
   * A fresh, not yet negotiated session (its creation time from the dispatcher's clock unless
   * given), so transports get session state without constructing protocol objects themselves.
   */
  newSession(options: SessionOptions = {}): Session {
    return new Session({ now: this.#now(), ...options });
  }

  /** Server requests waiting for a client's answer, over all sessions. */
  get awaitingClient(): number {
    return this.#outbound.size;
  }

  /**
   * Aborts every request in flight on `session` and every server request waiting for its
   * client (HTTP DELETE, stream or connection closed), drops its channel and tells the
   * `onSessionClose` listeners.
   */
  closeSession(session: Session, reason = 'session closed'): void {
    for (const abort of this.#inflight.get(session)?.values() ?? []) {
      this.#cancelled.add(abort);
      abort.abort(new DOMException(reason, 'AbortError'));
    }
    this.#outbound.closeSession(session, reason);
    this.#channels.drop(session);
    for (const listener of this.#closeListeners) {
      try {
        listener(session);
      } catch (error) {
        this.#report(error, { method: 'session/close' });
      }
    }
  }

  /** Aborts every request in flight on every session (transport close, shutdown). */
  closeAll(reason = 'connection closed'): void {
    const sessions = new Set([...this.#inflight.keys(), ...this.#channels.sessions()]);
    for (const session of sessions) this.closeSession(session, reason);
  }

  // Not async: only a request has anything to wait for (one async frame less per message).
  #single(
    value: unknown,
    conn: Connection,
    inBatch: boolean,
  ): Promise<JsonRpcResponse | undefined> | JsonRpcResponse | undefined {
    const inbound = classifyMessage(value);
    switch (inbound.kind) {
      case 'invalid':
        return inbound.response;
      case 'response':
        // An answer to a server request; one nobody waits for (late, unknown) is ignored.
        this.#outbound.settle(conn.session, inbound.message);
        return undefined;
      case 'notification':
        this.#notify(inbound.message, conn.session);
        return undefined;
      case 'request':
        if (inBatch && inbound.message.method === 'initialize') {
          return errorResponse(inbound.message.id, invalidRequest('initialize in a batch'));
        }
        return this.#request(inbound.message, conn);
    }
  }

  #notify(notification: JsonRpcNotification, session: Session): void {
    if (notification.method === 'notifications/initialized') {
      if (session.negotiated) session.markInitialized();
    } else if (notification.method === 'notifications/cancelled') {
      // Unknown, late or malformed cancels are ignored, as the specification asks.
      const target = cancelTarget(notification.params);
      const abort = target && this.#inflight.get(session)?.get(target.requestId);
      if (abort) this.#cancelled.add(abort);
      abort?.abort(new DOMException(target?.reason ?? 'request cancelled', 'AbortError'));
    }
    // Other notifications have no handler here and are ignored.
  }

  // Not async: what is refused here is answered at once, and `#invoke` answers its own errors,
  // so a call has one async frame (a promise and its microtasks) less, or none at all.
  #request(
    request: JsonRpcRequest,
    conn: Connection,
  ): Promise<JsonRpcResponse | undefined> | JsonRpcResponse | undefined {
    try {
      const { method } = request;
      if (Array.isArray(request.params)) {
        throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'params must be an object');
      }
      const params = request.params ?? {};
      const decision = decideEra(params, conn.session);
      const modern = decision.era === 'modern';
      if (method === 'server/discover') {
        // A 2026-07-28 method: a probe without the modern `_meta` is refused as any modern
        // request missing it is (-32602, HTTP 400), even on a legacy session.
        if (!modern) throw missingModernMeta(params);
        return resultResponse(request.id, answerDiscover(this.#server));
      }
      if (method === 'initialize' && !modern) {
        return resultResponse(request.id, answerInitialize(params, conn.session, this.#server));
      }
      if (method === 'ping' && !modern) return resultResponse(request.id, {});
      const handler = this.#handlers.get(method);
      if (handler === undefined || BUILT_IN.has(method)) throw methodNotFound(method);
      if (decision.era === 'none') throw decision.error();
      if (this.#eras.get(method)?.has(decision.era) === false) throw methodNotFound(method);
      return this.#invoke(request, params, decision, handler, conn);
    } catch (error) {
      return errorResponse(request.id, this.#toRpcError(error, request));
    }
  }

  /**
   * Runs a request's handler. Never rejects: an error is its error response. Not async: a
   * handler that answers without a promise (an eager one with nothing to wait for) is answered
   * at once, with no microtask; a promise is awaited by `#await`.
   */
  #invoke(
    request: JsonRpcRequest,
    params: Record<string, unknown>,
    decision: Exclude<EraDecision, { era: 'none' }>,
    handler: EagerMethodHandler,
    conn: Connection,
  ): Promise<JsonRpcResponse | undefined> | JsonRpcResponse | undefined {
    const { id } = request;
    let requests = this.#inflight.get(conn.session);
    if (requests?.has(id)) {
      return errorResponse(id, invalidRequest('request id already in flight', { id }));
    }
    if (requests === undefined) {
      requests = new Map();
      this.#inflight.set(conn.session, requests);
    }
    const abort = new RequestAbort();
    requests.set(id, abort);
    const live = { settled: false };
    // Aborted by the handler's own time limit (`ctx.limit`) rather than cancelled: answered.
    const timer = new RequestTimer(abort);
    const run: Invocation = { request, decision, conn, requests, abort, timer, live };
    let result: Record<string, unknown> | Promise<Record<string, unknown>>;
    try {
      const ctx = this.#context(request, params, decision, conn, abort, live);
      ctx.limit = timer.limit;
      // Called at once, not from a later microtask: a throw is caught here all the same.
      result = handler(params, ctx);
    } catch (error) {
      return this.#settle(run, false, error);
    }
    if (!(result instanceof Promise)) return this.#settle(run, true, result);
    timer.waiting();
    return this.#await(run, result);
  }

  async #await(
    run: Invocation,
    pending: Promise<Record<string, unknown>>,
  ): Promise<JsonRpcResponse | undefined> {
    let result: Record<string, unknown>;
    try {
      result = await pending;
    } catch (error) {
      return this.#settle(run, false, error);
    }
    return this.#settle(run, true, result);
  }

  /** The answer to a handler's result (`ok`) or throw, once it has one; the request is done. */
  #settle(run: Invocation, ok: boolean, value: unknown): JsonRpcResponse | undefined {
    const { request, abort, timer, requests, conn } = run;
    const { id, method } = request;
    try {
      if (!ok) throw value;
      if (this.#dropped(abort, timer)) return undefined;
      if (!isRecord(value)) throw new Error(`handler for ${method} returned a non-object`);
      const body = run.decision.era === 'modern' ? this.#decorate(method, value) : value;
      return resultResponse(id, body);
    } catch (error) {
      // A cancelled request gets no response, whatever its handler did after the abort.
      if (this.#dropped(abort, timer)) return undefined;
      // Answered here rather than by `#request`, which does not wait (see there).
      return errorResponse(id, this.#toRpcError(error, request));
    } finally {
      timer.stop();
      run.live.settled = true;
      if (requests.get(id) === abort) requests.delete(id);
      if (requests.size === 0 && this.#inflight.get(conn.session) === requests) {
        this.#inflight.delete(conn.session);
      }
    }
  }

  /** A cancel always aborts (or finds the signal aborted already), so `aborted` comes first. */
  #dropped(abort: RequestAbort, timer: RequestTimer): boolean {
    return abort.aborted && (!timer.expired || this.#cancelled.has(abort));
  }

  #context(
    request: JsonRpcRequest,
    params: Record<string, unknown>,
    decision: Exclude<EraDecision, { era: 'none' }>,
    conn: Connection,
    abort: RequestAbort,
    live: { settled: boolean },
  ): Mutable<RequestContext> {
    const modern = decision.era === 'modern';
    const token = metaOf(params)?.['progressToken'];
    const hasToken = typeof token === 'string' || typeof token === 'number';
    // Built by assignment, not conditional spreads (an object made and copied for each).
    const ctx: Mutable<RequestContext> = {
      era: decision.era,
      protocolVersion: modern ? decision.meta.protocolVersion : decision.protocolVersion,
      session: modern ? undefined : conn.session,
      clientCapabilities: modern
        ? decision.meta.clientCapabilities
        : (conn.session.clientCapabilities ?? {}),
      requestId: request.id,
      // A getter: the AbortSignal is made only for a handler that reads it (see RequestAbort).
      get signal() {
        return abort.signal;
      },
      cancellation: abort,
    };
    if (hasToken) {
      ctx.progress = createProgressReporter({
        progressToken: token,
        request,
        conn,
        cancellation: abort,
        live,
        report: (error, site) => this.#report(error, site),
      });
    }
    const log = this.#logReporter(request, params, decision, conn, abort, live);
    if (log !== undefined) ctx.log = log;
    if (conn.principal !== undefined) ctx.principal = conn.principal;
    if (conn.client !== undefined) ctx.client = conn.client;
    if (modern) {
      const retry = retryMaterial(params);
      if (retry.inputResponses !== undefined) ctx.inputResponses = retry.inputResponses;
      if (retry.requestState !== undefined) ctx.requestState = retry.requestState;
    } else {
      ctx.request = this.#requester(conn, abort, live);
    }
    return ctx;
  }

  /** Sends requests to the client of `conn` while the request behind `abort` is unanswered. */
  #requester(
    conn: Connection,
    abort: RequestAbort,
    live: { settled: boolean },
  ): NonNullable<RequestContext['request']> {
    return async (method, params, own) => {
      if (live.settled) throw new Error('the request that would ask the client was answered');
      const bound = own === undefined ? abort.signal : AbortSignal.any([abort.signal, own]);
      return this.#outbound.request(conn, method, params, bound);
    };
  }

  /**
   * The log reporter of every legacy request (it reads the session's level at each entry, so a
   * `logging/setLevel` during a long call takes effect), and of a modern request whose `_meta`
   * names a level; else undefined.
   */
  #logReporter(
    request: JsonRpcRequest,
    params: Record<string, unknown>,
    decision: Exclude<EraDecision, { era: 'none' }>,
    conn: Connection,
    cancellation: RequestAbort,
    live: { settled: boolean },
  ): LogReporter | undefined {
    let threshold: () => LogLevel | undefined;
    if (decision.era === 'modern') {
      const asked = metaOf(params)?.[META_KEYS.LOG_LEVEL];
      if (!isLogLevel(asked)) return undefined;
      threshold = () => asked;
    } else {
      const session = conn.session;
      threshold = () => session.logLevel;
    }
    const report = (error: unknown, site: ErrorSite) => this.#report(error, site);
    return createLogReporter({ threshold, request, conn, cancellation, live, report });
  }

  #decorate(method: string, result: Record<string, unknown>): Record<string, unknown> {
    return decorateModernResult(method, result, this.#server.serverInfo);
  }

  #toRpcError(error: unknown, request: JsonRpcRequest): RpcError {
    if (error instanceof RpcError) return error;
    this.#report(error, { method: request.method, id: request.id });
    return internalError(error);
  }

  #report(error: unknown, site: ErrorSite): void {
    try {
      this.#onError?.(error, site);
    } catch {
      // A failing error sink must not break dispatch; there is nowhere left to report to.
    }
  }
}

/**
 * One `POST /mcp` (or `POST /mcp/<method>`) exchange: content type, body cap, JSON parse, the
 * 2026-07-28 header checks (`MCP-Protocol-Version`, `Mcp-Method`), legacy session resolution
 * (`initialize` creates a session and answers its `Mcp-Session-Id`; a request naming a session must
 * name a live one, and one naming none is answered as stdio answers it), dispatch, and the HTTP
 * status of the answer. Modern requests get a fresh session each. A client that disconnects cancels
 * its request. The answer is one JSON body, unless the client accepts `text/event-stream` and the
 * server has messages for the request before its answer (progress notifications, or requests to the
 * client such as `elicitation/create`): then it is an event stream (`sse.ts`). A POST whose body is
 * the client's response to such a request goes to the dispatcher like any message (which routes it
 * to the waiting request by session) and is answered 202.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Connection,
  type DispatchResult,
  errorResponse,
  isRecord,
  type JsonRpcNotification,
  LEGACY_VERSIONS,
  META_KEYS,
  MODERN_VERSION,
  metaOf,
  parseJson,
  RPC_ERROR_CODES,
  RpcError,
  type RpcErrorCode,
  type Session,
  type SessionOptions,
} from '../protocol/index.js';
import { type BodyLimits, isJsonContentType, MAX_BODY_BYTES, readBody } from './body.js';
import { socketClientKey } from './client-key.js';
import { refuseBody, refuseSession, statusOf } from './mcp-answers.js';
import { sendJson } from './respond.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionRefusal, SessionTable } from './sessions.js';
import { acceptsEventStream, EventStream } from './sse.js';
import { withOwed } from './unanswered.js';

/** The dispatcher calls the HTTP transport needs (`Dispatcher` satisfies it). */
export interface McpDispatcher {
  handle(message: unknown, conn: Connection): Promise<DispatchResult>;
  /** `handle`, answering without a promise what needs no waiting (see `Dispatcher.handleNow`). */
  handleNow(message: unknown, conn: Connection): DispatchResult | Promise<DispatchResult>;
  newSession(options?: SessionOptions): Session;
  closeSession(session: Session, reason?: string): void;
  closeAll(reason?: string): void;
  /** Routes a session's notifications outside any request to `send`; returns the undo. */
  openChannel(session: Session, send: (notification: JsonRpcNotification) => void): () => void;
}

/** What one POST exchange needs from the transport. */
export interface McpPostContext {
  readonly dispatcher: McpDispatcher;
  readonly sessions: SessionTable;
  readonly principalHeader: string | undefined;
  readonly shuttingDown: () => boolean;
  readonly now: () => number;
  /** Told each `initialize` refused at a session cap. */
  readonly onRefused?: (cap: SessionRefusal['cap']) => void;
  readonly body: BodyLimits;
  /** Sessions shared with other replicas: looked up on a miss, published once initialized. */
  readonly directory?: SessionDirectory | undefined;
  /**
   * When each session was last published, and how often one in use is published again, so
   * its shared record outlives the idle TTL while any replica serves it.
   */
  readonly published?: { readonly at: WeakMap<Session, number>; readonly everyMs: number };
}

/** A refusal answered before dispatch: HTTP status plus the JSON-RPC error. */
class Refusal {
  readonly status: number;
  readonly error: RpcError;

  constructor(status: number, error: RpcError) {
    this.status = status;
    this.error = error;
  }
}

const KNOWN_VERSIONS = new Set<string>([...LEGACY_VERSIONS, MODERN_VERSION]);

function refuse(status: number, code: RpcErrorCode, message: string, data?: unknown): Refusal {
  return new Refusal(status, new RpcError(code, message, data));
}

function idOf(message: unknown): string | number | null {
  const id = isRecord(message) ? message['id'] : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The modern `_meta` protocol version of a single message, if it carries one. */
function modernVersion(message: unknown): unknown {
  if (!isRecord(message)) return undefined;
  const params = message['params'];
  const meta = isRecord(params) ? metaOf(params) : undefined;
  return meta !== undefined && Object.hasOwn(meta, META_KEYS.PROTOCOL_VERSION)
    ? meta[META_KEYS.PROTOCOL_VERSION]
    : undefined;
}

/**
 * Handles one POST to the MCP endpoint; `methodPath` is the `<method>` of `/mcp/<method>`. Not
 * async: the body is the one thing every POST waits for, and what follows it runs in that
 * promise's callback, which waits again only for what has to (see `dispatch`).
 */
export function handleMcpPost(
  req: IncomingMessage,
  res: ServerResponse,
  methodPath: string | undefined,
  ctx: McpPostContext,
): void | Promise<void> {
  if (ctx.shuttingDown()) {
    const error = new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'server is shutting down');
    return sendJson(res, 503, errorResponse(null, error));
  }
  if (!isJsonContentType(header(req, 'content-type'))) {
    const error = new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Content-Type must be JSON');
    return sendJson(res, 415, errorResponse(null, error));
  }
  return readBody(req, MAX_BODY_BYTES, ctx.body).then((body) =>
    body.ok
      ? handleBody(req, res, body.text, methodPath, ctx)
      : refuseBody(req, res, body.reason, ctx.body),
  );
}

/** A POST whose body was read whole: parse, check, resolve its session, dispatch. */
function handleBody(
  req: IncomingMessage,
  res: ServerResponse,
  text: string,
  methodPath: string | undefined,
  ctx: McpPostContext,
): void | Promise<void> {
  const parsed = parseJson(text);
  if (!parsed.ok) return sendJson(res, 400, parsed.response);
  const message = parsed.value;
  try {
    checkHeaders(req, message, methodPath);
    // Who sent it, read once: the session lookup, the session caps and the quotas all use it.
    const principal = principalOf(req, ctx.principalHeader);
    // Hashed once per connection; one string per client however many sessions it opens.
    const client = ctx.sessions.sharedKey(socketClientKey(principal, req.socket));
    const caller: Caller = { principal, client };
    const found = resolveSession(req, message, caller, ctx);
    if ('missing' in found) {
      return adopt(found.missing, caller, ctx).then(
        ({ session }) => withSession(req, res, message, session, undefined, caller, ctx),
        (error: unknown) => refused(res, message, error),
      );
    }
    return withSession(req, res, message, found.session, found.created, caller, ctx);
  } catch (error) {
    return refused(res, message, error);
  }
}

/** Answers a `Refusal` thrown before dispatch; anything else is thrown on. */
function refused(res: ServerResponse, message: unknown, error: unknown): void {
  if (!(error instanceof Refusal)) throw error;
  sendJson(res, error.status, errorResponse(idOf(message), error.error));
}

/** The exchange once its session is known: the session caps, then dispatch. */
function withSession(
  req: IncomingMessage,
  res: ServerResponse,
  message: unknown,
  session: Session,
  created: 'initialize' | 'ephemeral' | undefined,
  caller: Caller,
  ctx: McpPostContext,
): void | Promise<void> {
  if (created === undefined && ctx.directory !== undefined) refresh(session, caller.principal, ctx);
  // Room for the session is reserved before the `initialize` runs: a refusal costs nothing.
  const admitting = created === 'initialize' && idOf(message) !== null;
  const full = admitting ? ctx.sessions.admit(ctx.now(), caller.client) : undefined;
  if (full !== undefined) {
    ctx.onRefused?.(full.cap);
    return refuseSession(res, idOf(message), full);
  }
  if (!admitting) return dispatch(req, res, message, session, created, caller, ctx);
  const release = () => {
    if (!ctx.sessions.holds(session)) ctx.sessions.release(caller.client);
  };
  let dispatched: void | Promise<void>;
  try {
    dispatched = dispatch(req, res, message, session, created, caller, ctx);
  } catch (error) {
    release();
    throw error;
  }
  if (dispatched === undefined) return release();
  return dispatched.finally(release);
}

function checkHeaders(req: IncomingMessage, message: unknown, methodPath: string | undefined) {
  const method = isRecord(message) ? message['method'] : undefined;
  if (methodPath !== undefined && method !== methodPath) {
    throw refuse(400, RPC_ERROR_CODES.INVALID_REQUEST, 'body method does not match the path', {
      path: methodPath,
    });
  }
  const methodHeader = header(req, 'mcp-method');
  if (methodHeader !== undefined && methodHeader !== method) {
    throw refuse(400, RPC_ERROR_CODES.HEADER_MISMATCH, 'Mcp-Method header does not match', {
      header: 'Mcp-Method',
    });
  }
  const versionHeader = header(req, 'mcp-protocol-version');
  const modern = modernVersion(message);
  if (modern !== undefined && versionHeader !== modern) {
    throw refuse(400, RPC_ERROR_CODES.HEADER_MISMATCH, 'MCP-Protocol-Version header mismatch', {
      header: 'MCP-Protocol-Version',
    });
  }
  if (modern === undefined && versionHeader !== undefined && !KNOWN_VERSIONS.has(versionHeader)) {
    throw refuse(400, RPC_ERROR_CODES.INVALID_PARAMS, 'unsupported MCP-Protocol-Version', {
      supported: [...KNOWN_VERSIONS],
      requested: versionHeader,
    });
  }
}

/** Who sent a POST: the verified principal, if any, and the client key the caps count by. */
interface Caller {
  readonly principal: string | undefined;
  readonly client: string;
}

function resolveSession(
  req: IncomingMessage,
  message: unknown,
  { principal, client }: Caller,
  ctx: McpPostContext,
): { session: Session; created: 'initialize' | 'ephemeral' | undefined } | { missing: string } {
  // A throwaway session's id is never sent or looked up: a counter spares a random UUID.
  const fresh = () => ctx.dispatcher.newSession({ id: ctx.sessions.ephemeralId(), now: ctx.now() });
  const modern = modernVersion(message) !== undefined;
  const method = isRecord(message) ? message['method'] : undefined;
  if (modern) return { session: fresh(), created: 'ephemeral' };
  if (method === 'initialize') {
    const session = ctx.dispatcher.newSession({ now: ctx.now(), principal, client });
    return { session, created: 'initialize' };
  }
  const id = header(req, 'mcp-session-id');
  // Neither a session nor modern `_meta`: the dispatcher answers on a throwaway session, so the
  // client gets the -32602 (and its hint) stdio gives for the same request, with status 400.
  if (id === undefined) return { session: fresh(), created: 'ephemeral' };
  const session = ctx.sessions.get(id, principal);
  if (session === undefined) {
    if (ctx.directory !== undefined) return { missing: id };
    throw refuse(404, RPC_ERROR_CODES.INVALID_REQUEST, 'unknown or ended session');
  }
  return { session, created: undefined };
}

/** Publishes a session in use again once its record is older than `published.everyMs`. */
function refresh(session: Session, principal: string | undefined, ctx: McpPostContext): void {
  const published = ctx.published;
  const now = ctx.now();
  if (published === undefined || now - (published.at.get(session) ?? 0) < published.everyMs) return;
  published.at.set(session, now);
  void publish(session, principal, ctx);
}

/** Writes the session's shared record; a failure leaves it usable on this replica. */
async function publish(
  session: Session,
  principal: string | undefined,
  ctx: McpPostContext,
): Promise<void> {
  const protocol = session.protocolVersion;
  if (ctx.directory === undefined || protocol === undefined) return;
  const digest = principalDigest(principal);
  ctx.published?.at.set(session, ctx.now());
  await ctx.directory
    .publish({
      id: session.id,
      ...(digest !== undefined ? { principalDigest: digest } : {}),
      protocol,
      initialized: session.initialized,
      lastUsed: ctx.now(),
    })
    .catch(() => {});
}

/** The digest a shared session record keeps of its principal. */
export function principalDigest(principal: string | undefined): string | undefined {
  return principal === undefined
    ? undefined
    : createHash('sha256').update(`principal:${principal}`).digest('hex');
}

/**
 * A session another replica minted, found in the shared directory and filed here as if this
 * replica had answered its `initialize`; the same answer as an unknown id otherwise (another
 * caller's session included).
 */
async function adopt(
  id: string,
  { principal, client }: Caller,
  ctx: McpPostContext,
): Promise<{ session: Session; created: undefined }> {
  const shared = await ctx.directory?.lookup(id).catch(() => undefined);
  if (shared === undefined || shared.principalDigest !== principalDigest(principal)) {
    throw refuse(404, RPC_ERROR_CODES.INVALID_REQUEST, 'unknown or ended session');
  }
  // Another request of the same client may have filed it while the directory answered.
  const filed = ctx.sessions.get(id, principal);
  if (filed !== undefined) return { session: filed, created: undefined };
  const full = ctx.sessions.admit(ctx.now(), client);
  if (full !== undefined) {
    ctx.onRefused?.(full.cap);
    throw refuse(503, RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'too many sessions on this replica');
  }
  const session = ctx.dispatcher.newSession({ id, now: ctx.now(), principal, client });
  session.negotiate({ protocolVersion: shared.protocol });
  if (shared.initialized) session.markInitialized();
  ctx.sessions.add(session);
  ctx.published?.at.set(session, shared.lastUsed);
  return { session, created: undefined };
}

/**
 * Dispatches the message and sends its answer. Not async: an answer the dispatcher gives
 * without a promise is sent at once (a one-step workflow's, progress events and all).
 */
function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  message: unknown,
  session: Session,
  created: 'initialize' | 'ephemeral' | undefined,
  { principal, client }: Caller,
  ctx: McpPostContext,
): void | Promise<void> {
  // The first notification for this request (progress) turns the answer into an event stream
  // when the client accepts one; without that, notifications have nowhere to go and are dropped.
  // Decided then, not now: most requests never notify, and pay nothing for the choice.
  let stream: EventStream | null | undefined;
  const send = (outbound: unknown) => {
    stream ??= acceptsEventStream(header(req, 'accept')) ? new EventStream(res) : null;
    // A server request (it has an id) needs an answer: fail it at once rather than let the
    // handler wait for a response that cannot come. A notification is simply dropped.
    if (stream === null && isRecord(outbound) && 'id' in outbound) {
      throw new Error('the client does not accept an event stream on this POST');
    }
    stream?.send(outbound);
  };
  const conn: Connection = { session, send, principal, client };
  const answer = ctx.dispatcher.handleNow(message, conn);
  if (answer instanceof Promise) {
    // Listened for only now: a close is an event, so none can come while the dispatcher runs
    // synchronously, and an answer that needs no promise pays for no listener.
    const onClose = () => {
      if (res.writableEnded) return;
      if (created === 'ephemeral') ctx.dispatcher.closeSession(session, 'client disconnected');
      else cancelOne(message, conn, ctx.dispatcher);
    };
    // `on`, not `once`: it is taken off as soon as the answer is in, and `once` wraps it.
    res.on('close', onClose);
    return answer.then(
      (settled) => {
        res.off('close', onClose);
        return respond(res, message, settled, stream, session, created, principal, ctx);
      },
      (error: unknown) => {
        res.off('close', onClose);
        throw error;
      },
    );
  }
  return respond(res, message, answer, stream, session, created, principal, ctx);
}

/** Sends the dispatcher's answer: as the last events of a started stream, else as JSON. */
function respond(
  res: ServerResponse,
  message: unknown,
  answer: DispatchResult,
  stream: EventStream | null | undefined,
  session: Session,
  created: 'initialize' | 'ephemeral' | undefined,
  principal: string | undefined,
  ctx: McpPostContext,
): void | Promise<void> {
  if (res.destroyed) return;
  // The end of a request is activity too: a long call does not leave its session looking idle.
  if (created === undefined) session.touch(ctx.now());
  const gone = created === undefined && !ctx.sessions.holds(session);
  const ended = ctx.shuttingDown() ? 'shutdown' : gone ? 'session' : undefined;
  const final = withOwed(message, answer, ended);
  if (stream?.started) {
    // The status (200) is already on the wire: errors travel in the last event.
    return stream.end(final === undefined ? [] : Array.isArray(final) ? final : [final]);
  }
  if (final === undefined) {
    res.writeHead(202).end();
    return;
  }
  // Nothing but owed errors: the status of a single one (shutdown 503, an ended session 404).
  if (answer === undefined) return sendJson(res, ended === 'shutdown' ? 503 : 404, final);
  if (created === 'initialize' && !Array.isArray(answer) && 'result' in answer) {
    ctx.sessions.add(session);
    // Published before the client learns the id, so its next request resolves on any replica;
    // a directory that failed leaves the session usable here, as a single replica's is.
    return publish(session, principal, ctx).then(() => {
      res.setHeader('mcp-session-id', session.id);
      sendJson(res, statusOf(final, false), final);
    });
  }
  sendJson(res, statusOf(final, created === 'ephemeral'), final);
}

function cancelOne(message: unknown, conn: Connection, dispatcher: McpDispatcher): void {
  const requestId = idOf(message);
  if (requestId === null) return;
  const cancel = {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'client disconnected' },
  };
  void dispatcher.handle(cancel, conn);
}

/** The caller identity the principal header names (only read behind the bearer token). */
export function principalOf(req: IncomingMessage, name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const value = header(req, name.toLowerCase())?.trim();
  return value === undefined || value === '' ? undefined : value;
}

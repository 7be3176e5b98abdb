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
  type RequestId,
  RPC_ERROR_CODES,
  RpcError,
  type RpcErrorCode,
  type Session,
  type SessionOptions,
  tooLargeResponse,
} from '../protocol/index.js';
import {
  type BodyLimits,
  discardRest,
  isJsonContentType,
  MAX_BODY_BYTES,
  readBody,
} from './body.js';
import { socketClientKey } from './client-key.js';
import { sendJson } from './respond.js';
import type { SessionDirectory } from './session-directory.js';
import type { SessionRefusal, SessionTable } from './sessions.js';
import { acceptsEventStream, EventStream } from './sse.js';
import { withOwed } from './unanswered.js';

/** The dispatcher calls the HTTP transport needs (`Dispatcher` satisfies it). */
export interface McpDispatcher {
  handle(message: unknown, conn: Connection): Promise<DispatchResult>;
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

/** Handles one POST to the MCP endpoint; `methodPath` is the `<method>` of `/mcp/<method>`. */
export async function handleMcpPost(
  req: IncomingMessage,
  res: ServerResponse,
  methodPath: string | undefined,
  ctx: McpPostContext,
): Promise<void> {
  if (ctx.shuttingDown()) {
    const error = new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'server is shutting down');
    return sendJson(res, 503, errorResponse(null, error));
  }
  if (!isJsonContentType(header(req, 'content-type'))) {
    const error = new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'Content-Type must be JSON');
    return sendJson(res, 415, errorResponse(null, error));
  }
  const body = await readBody(req, MAX_BODY_BYTES, ctx.body);
  if (!body.ok) return refuseBody(req, res, body.reason, ctx.body);
  const parsed = parseJson(body.text);
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
    const { session, created } =
      'missing' in found ? await adopt(found.missing, caller, ctx) : found;
    if (created === undefined && ctx.directory !== undefined) refresh(session, principal, ctx);
    // Room for the session is reserved before the `initialize` runs: a refusal costs nothing.
    const admitting = created === 'initialize' && idOf(message) !== null;
    const full = admitting ? ctx.sessions.admit(ctx.now(), caller.client) : undefined;
    if (full !== undefined) {
      ctx.onRefused?.(full.cap);
      return refuseSession(res, idOf(message), full);
    }
    try {
      await dispatch(req, res, message, session, created, caller, ctx);
    } finally {
      if (admitting && !ctx.sessions.holds(session)) ctx.sessions.release(caller.client);
    }
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    sendJson(res, error.status, errorResponse(idOf(message), error.error));
  }
}

/** Answers a body that was not read whole. */
function refuseBody(
  req: IncomingMessage,
  res: ServerResponse,
  reason: 'too-large' | 'aborted' | 'timeout' | 'stalled' | 'busy',
  limits: BodyLimits,
): void {
  switch (reason) {
    case 'aborted':
      return void res.destroy();
    case 'too-large':
      discardRest(req);
      return sendJson(res, 413, tooLargeResponse(MAX_BODY_BYTES));
    case 'busy': {
      // Other requests' bodies fill the budget: the client may retry once they are read. The
      // rest is not read (reading only to throw it away is what a flood of bodies costs), so
      // the connection closes after the answer; a small body has usually arrived whole with its
      // headers, so closing does not reset its client before it reads the 503.
      res.setHeader('connection', 'close');
      const error = new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'server busy reading bodies', {
        code: 'BODY_BUFFER_FULL',
        retryable: true,
      });
      return sendJson(res, 503, errorResponse(null, error));
    }
    case 'timeout':
    case 'stalled': {
      // The client stopped sending (past the deadline, or long enough that another body needed
      // its room, see body.ts): nothing more is read, and the connection closes once the
      // answer is out, which frees its slot under the connection caps.
      const error =
        reason === 'timeout'
          ? new RpcError(
              RPC_ERROR_CODES.INVALID_REQUEST,
              `request body not received within ${limits.timeoutMs} ms`,
              { code: 'BODY_TIMEOUT', timeoutMs: limits.timeoutMs },
            )
          : new RpcError(
              RPC_ERROR_CODES.INVALID_REQUEST,
              'request body stalled while other bodies needed its room; send it again',
              { code: 'BODY_STALLED', retryable: true },
            );
      res.setHeader('connection', 'close');
      return sendJson(res, 408, errorResponse(null, error));
    }
  }
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

async function dispatch(
  req: IncomingMessage,
  res: ServerResponse,
  message: unknown,
  session: Session,
  created: 'initialize' | 'ephemeral' | undefined,
  { principal, client }: Caller,
  ctx: McpPostContext,
): Promise<void> {
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
  const onClose = () => {
    if (res.writableEnded) return;
    if (created === 'ephemeral') ctx.dispatcher.closeSession(session, 'client disconnected');
    else cancelOne(message, conn, ctx.dispatcher);
  };
  res.once('close', onClose);
  let answer: DispatchResult;
  try {
    answer = await ctx.dispatcher.handle(message, conn);
  } finally {
    res.off('close', onClose);
  }
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
    await publish(session, principal, ctx);
    res.setHeader('mcp-session-id', session.id);
  }
  sendJson(res, statusOf(final, created === 'ephemeral'), final);
}

/**
 * Refuses an `initialize` at a session cap: `-32000` (no capacity, as every capacity refusal
 * is) with `data.code`, 429 for the client's own cap and 503 for the server's, and Retry-After
 * (seconds) for when an idle session may have made room.
 */
function refuseSession(res: ServerResponse, id: RequestId | null, refusal: SessionRefusal): void {
  const own = refusal.cap === 'client';
  const error = new RpcError(
    RPC_ERROR_CODES.SERVER_UNAVAILABLE,
    own
      ? `this client already holds ${refusal.limit} sessions (--max-sessions-per-client): end unused ones with DELETE /mcp, or retry later`
      : `the server holds ${refusal.limit} sessions (--max-sessions), none idle long enough to end: retry later`,
    {
      code: own ? 'CLIENT_SESSION_LIMIT' : 'SESSION_CAPACITY_FULL',
      retryable: true,
      limit: refusal.limit,
    },
  );
  res.setHeader('retry-after', String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))));
  sendJson(res, own ? 429 : 503, errorResponse(id, error));
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

/**
 * The HTTP status of an answer. Malformed requests are 400 in both eras; modern (stateless)
 * errors follow the 2026-07-28 table (-32601 → 404, params/header/version → 400, -32000 → 503);
 * legacy JSON-RPC errors ride on 200, as 2025 clients expect.
 */
function statusOf(answer: Exclude<DispatchResult, undefined>, modern: boolean): number {
  if (Array.isArray(answer) || !('error' in answer)) return 200;
  const code = answer.error.code;
  if (code === RPC_ERROR_CODES.PARSE_ERROR || code === RPC_ERROR_CODES.INVALID_REQUEST) return 400;
  if (!modern) return 200;
  if (code === RPC_ERROR_CODES.METHOD_NOT_FOUND) return 404;
  if (code === RPC_ERROR_CODES.SERVER_UNAVAILABLE) return 503;
  return code === RPC_ERROR_CODES.INTERNAL_ERROR ? 500 : 400;
}

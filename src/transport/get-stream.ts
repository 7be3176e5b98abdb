/**
 * `GET /mcp`: the standing event stream of a legacy HTTP session (2025 revisions), which carries
 * what the server has to say outside any request, such as `notifications/resources/updated`.
 * One stream per session (a second GET gets 409); it ends when the client goes away or the
 * session ends. Events carry no `id`, so nothing is replayed after a reconnect: a client that
 * reconnects re-reads what it subscribed to. Knows nothing of what the notifications mean.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Session } from '../protocol/index.js';
import type { McpDispatcher } from './mcp-post.js';
import { plain } from './respond.js';
import type { SessionTable } from './sessions.js';
import { acceptsEventStream, messageEvent, STREAM_HEADERS } from './sse.js';

/** A comment line now and then keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 25_000;

/** What one GET needs from the transport. */
export interface GetStreamContext {
  readonly dispatcher: McpDispatcher;
  readonly sessions: SessionTable;
  /** The open stream of each session; the transport ends them when their session ends. */
  readonly streams: Map<Session, ServerResponse>;
  /** The session table's clock: a client listening on its stream is not idle. */
  readonly now: () => number;
  /** The verified caller of this request, who must be the one that opened the session. */
  readonly principal: string | undefined;
}

/** Answers one `GET /mcp`: 406, 400, 404 or 409 when refused, else a standing event stream. */
export function openSessionStream(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: GetStreamContext,
): void {
  if (!acceptsEventStream(req.headers.accept)) return plain(res, 406, 'Accept text/event-stream');
  const id = req.headers['mcp-session-id'];
  if (typeof id !== 'string') return plain(res, 400, 'missing Mcp-Session-Id');
  const session = ctx.sessions.get(id, ctx.principal);
  if (session === undefined) return plain(res, 404, 'unknown or ended session');
  if (ctx.streams.has(session)) return plain(res, 409, 'this session already has a stream');
  res.writeHead(200, STREAM_HEADERS);
  res.flushHeaders();
  ctx.streams.set(session, res);
  const write = (text: string) => {
    if (!res.destroyed && !res.writableEnded) res.write(text);
  };
  const detach = ctx.dispatcher.openChannel(session, (n) => write(messageEvent(n)));
  const keepalive = setInterval(() => {
    // A client that only listens (waiting for resource updates) is still there: keep its
    // session from the idle sweep while the stream is open.
    session.touch(ctx.now());
    write(': keepalive\n\n');
  }, KEEPALIVE_MS);
  keepalive.unref();
  res.once('close', () => {
    clearInterval(keepalive);
    detach();
    if (ctx.streams.get(session) === res) ctx.streams.delete(session);
  });
}

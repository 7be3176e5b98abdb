/**
 * MCP over Streamable HTTP on `node:http`: `POST /mcp` and `POST /mcp/<method>` carry one
 * JSON-RPC message each (JSON responses), `GET /mcp` opens a legacy session's standing event
 * stream, `DELETE /mcp` ends a legacy session, other verbs get 405, and the ops endpoints (`/health/ready`, `/healthz`, `/readyz`, `/control/shutdown`) sit
 * beside them. Every path passes the Host (DNS rebinding) and Origin guards first; MCP requests
 * also need the bearer token when one is set. Idle legacy sessions are swept on a timer.
 *
 * Knows nothing of workflows: it moves messages between sockets and the dispatcher.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Session } from '../protocol/index.js';
import { openSessionStream } from './get-stream.js';
import { bearerMatches, hostAllowed, originAllowed } from './guards.js';
import { handleMcpPost, type McpDispatcher } from './mcp-post.js';
import type { Metrics } from './metrics.js';
import type { OpsHandler } from './ops.js';
import { SessionTable } from './sessions.js';

/** How often idle legacy sessions are swept. */
const SWEEP_INTERVAL_MS = 60_000;

/** Options for `new HttpTransport()`. */
export interface HttpTransportOptions {
  /** The address to bind; also what the `Host` header must name. */
  readonly host: string;
  /** The port to bind; 0 picks a free one. */
  readonly port: number;
  readonly dispatcher: McpDispatcher;
  /** Bearer token every MCP request must carry, if set. */
  readonly token?: string | undefined;
  /** Header carrying the caller identity (only honoured with a token). */
  readonly principalHeader?: string | undefined;
  readonly ops: OpsHandler;
  /** Records each MCP request's duration. */
  readonly metrics: Metrics;
  /** True once shutdown has begun: MCP requests get 503 and connections are not kept alive. */
  readonly shuttingDown: () => boolean;
  readonly onError: (error: unknown) => void;
  /** Clock for session activity; `Date.now` by default. */
  readonly now?: () => number;
}

/** The HTTP transport; `listen` once, then `close`. */
export class HttpTransport {
  readonly #options: HttpTransportOptions;
  readonly #server: Server;
  readonly #sessions: SessionTable;
  /** Each legacy session's standing `GET /mcp` stream. */
  readonly #streams = new Map<Session, ServerResponse>();
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | undefined;
  /** Responses not yet closed, so shutdown can stop their connections from being kept alive. */
  readonly #open = new Set<ServerResponse>();
  /**
   * Connections that have not carried a request yet. `closeIdleConnections` leaves them open
   * (Node 20), and a client pool opens them ahead of use (undici does after an aborted
   * stream), so shutdown closes them itself.
   */
  readonly #unused = new Set<Socket>();
  #closing = false;

  constructor(options: HttpTransportOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#sessions = new SessionTable({
      onEnd: (session) => {
        options.dispatcher.closeSession(session, 'session ended');
        this.#streams.get(session)?.end();
      },
    });
    this.#server = createServer((req, res) => {
      this.#open.add(res);
      res.once('close', () => {
        this.#open.delete(res);
        // A stream sent its headers (keep-alive) before shutdown began: once it ends during
        // shutdown its connection is idle and must be closed, or close() would wait for it.
        if (this.#closing) setImmediate(() => this.#server.closeIdleConnections());
      });
      this.#unused.delete(req.socket);
      this.#route(req, res).catch((error: unknown) => this.#fail(error, res));
    });
    this.#server.on('connection', (socket: Socket) => {
      if (this.#closing) return void socket.destroy();
      this.#unused.add(socket);
      socket.once('close', () => this.#unused.delete(socket));
    });
  }

  /** Legacy sessions currently open. */
  get sessionsActive(): number {
    return this.#sessions.size;
  }

  /** Binds; resolves with the bound address. Rejects on a bind failure (e.g. port in use). */
  listen(): Promise<AddressInfo> {
    return new Promise((done, fail) => {
      this.#server.once('error', fail);
      this.#server.listen(this.#options.port, this.#options.host, () => {
        this.#server.off('error', fail);
        this.#server.on('error', this.#options.onError);
        this.#sweeper = setInterval(() => this.#sessions.sweep(this.#now()), SWEEP_INTERVAL_MS);
        this.#sweeper.unref();
        done(this.#server.address() as AddressInfo);
      });
    });
  }

  /**
   * Stops accepting, ends every legacy session and closes idle keep-alive connections. Resolves
   * once every open request has been answered and the server is closed.
   */
  close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    const closed = new Promise<void>((done) => this.#server.close(() => done()));
    this.#sessions.clear();
    for (const res of this.#open) if (!res.headersSent) res.setHeader('connection', 'close');
    this.#server.closeIdleConnections();
    for (const socket of this.#unused) socket.destroy();
    return closed;
  }

  /** Drops every connection, answered or not (after the shutdown budget ran out). */
  destroy(): void {
    this.#server.closeAllConnections();
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (!hostAllowed(req.headers.host, this.#options.host)) return plain(res, 403, 'bad Host');
    if (!originAllowed(req.headers.origin)) return plain(res, 403, 'Origin not allowed');
    if (this.#options.shuttingDown()) res.setHeader('connection', 'close');
    if (path === '/mcp' || path.startsWith('/mcp/')) {
      const started = performance.now();
      // A GET stream lasts as long as its session: not a request latency.
      if (req.method !== 'GET')
        res.once('finish', () =>
          this.#options.metrics.observeRequest((performance.now() - started) / 1000),
        );
      return this.#mcp(req, res, path);
    }
    if (!(await this.#options.ops(req, res, path))) plain(res, 404, 'not found');
  }

  async #mcp(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const methodPath = path === '/mcp' ? undefined : methodOfPath(path.slice('/mcp/'.length));
    if (methodPath === null) return plain(res, 400, 'malformed method path');
    const allowed = methodPath === undefined ? ['POST', 'GET', 'DELETE'] : ['POST'];
    if (!allowed.includes(req.method ?? '')) {
      res.setHeader('allow', allowed.join(', '));
      return plain(res, 405, 'method not allowed');
    }
    const token = this.#options.token;
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return plain(res, 401, 'unauthorized');
    }
    if (req.method === 'DELETE') return this.#delete(req, res);
    if (req.method === 'GET') {
      const { dispatcher } = this.#options;
      return openSessionStream(req, res, {
        dispatcher,
        sessions: this.#sessions,
        streams: this.#streams,
      });
    }
    await handleMcpPost(req, res, methodPath, {
      dispatcher: this.#options.dispatcher,
      sessions: this.#sessions,
      principalHeader: token === undefined ? undefined : this.#options.principalHeader,
      shuttingDown: this.#options.shuttingDown,
      now: this.#now,
    });
  }

  #delete(req: IncomingMessage, res: ServerResponse): void {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') return plain(res, 400, 'missing Mcp-Session-Id');
    if (!this.#sessions.delete(id)) return plain(res, 404, 'unknown session');
    res.writeHead(204).end();
  }

  #fail(error: unknown, res: ServerResponse): void {
    this.#options.onError(error);
    if (res.headersSent) res.destroy();
    else plain(res, 500, 'internal error');
  }
}

/** The method named by a `/mcp/<method>` suffix, or null when it is not valid percent-encoding. */
function methodOfPath(suffix: string): string | null {
  try {
    return decodeURIComponent(suffix);
  } catch {
    // Malformed percent-encoding: no method can match it.
    return null;
  }
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

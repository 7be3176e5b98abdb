/**
 * HTTP on `node:http`, driven by a route table (`routes.ts`): every request passes the Host
 * (DNS rebinding) and Origin guards first, then its row's verb and auth checks (the bearer
 * token for `bearer` rows when one is set, the row's own check for `capability` rows), then
 * the row's handler. Unknown paths get 404. During shutdown connections are not kept alive.
 *
 * Knows nothing of MCP or workflows: the rows do (`mcp-endpoint.ts`, `ops.ts`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AddressCaps } from './connections.js';
import { bearerMatches, hostAllowed, originAllowed } from './guards.js';
import { plain } from './respond.js';
import { checkRoutes, findRoute, type Route } from './routes.js';

/**
 * What slow or numerous clients may hold: the deadlines for a request's headers and for the
 * whole request (headers and body; the answer is not covered, so event streams and long calls
 * outlive it), and the connection caps.
 */
export interface HttpLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
}

/** Node's defaults, set explicitly so `--max-http-header-size` in NODE_OPTIONS cannot raise them. */
const MAX_HEADER_BYTES = 16 * 1024;
const KEEP_ALIVE_MS = 5000;

/** Connection counts for `/metrics`. */
export interface ConnectionStats {
  readonly open: number;
  readonly refused: { readonly total: number; readonly per_address: number };
}

/** Options for `new HttpTransport()`. */
export interface HttpTransportOptions {
  /** The address to bind; also what the `Host` header must name. */
  readonly host: string;
  /** The port to bind; 0 picks a free one. */
  readonly port: number;
  /**
   * Host names vouched for as the server's own (`--public-url`'s): on a wildcard bind, a
   * same-origin request by one of these names passes the Origin guard.
   */
  readonly ownNames?: readonly string[];
  readonly routes: readonly Route[];
  /** Bearer token `bearer` rows require, if set. */
  readonly token?: string | undefined;
  readonly limits: HttpLimits;
  /** True once shutdown has begun: connections are not kept alive. */
  readonly shuttingDown: () => boolean;
  readonly onError: (error: unknown) => void;
}

/** The HTTP transport; `listen` once, then `close`. */
export class HttpTransport {
  readonly #options: HttpTransportOptions;
  readonly #server: Server;
  /** Responses not yet closed, so shutdown can stop their connections from being kept alive. */
  readonly #open = new Set<ServerResponse>();
  /**
   * Connections that have not carried a request yet. `closeIdleConnections` leaves them open
   * (Node 20), and a client pool opens them ahead of use (undici does after an aborted
   * stream), so shutdown closes them itself.
   */
  readonly #unused = new Set<Socket>();
  readonly #caps: AddressCaps;
  #connections = 0;
  #refusedTotal = 0;
  #closing = false;

  constructor(options: HttpTransportOptions) {
    checkRoutes(options.routes);
    this.#options = options;
    const { limits } = options;
    this.#caps = new AddressCaps(limits.maxConnectionsPerAddress);
    const serverOptions = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks both deadlines on this interval (30 s by default, which would let a 10 s
      // deadline run to 40 s): a quarter of the shorter one, within 50 ms to 1 s.
      connectionsCheckingInterval: Math.min(
        1000,
        Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
      ),
      keepAliveTimeout: KEEP_ALIVE_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
    };
    const open = this.#open;
    // One listener for every response (`this` is the response), not a closure per request.
    const closed = (res: ServerResponse) => {
      open.delete(res);
      // A stream sent its headers (keep-alive) before shutdown began: once it ends during
      // shutdown its connection is idle and must be closed, or close() would wait for it.
      if (this.#closing) setImmediate(() => this.#server.closeIdleConnections());
    };
    function onClose(this: ServerResponse): void {
      closed(this);
    }
    this.#server = createServer(serverOptions, (req, res) => {
      open.add(res);
      // `on`, not `once` (which wraps the listener): a response closes once.
      res.on('close', onClose);
      this.#unused.delete(req.socket);
      let routed: void | Promise<void>;
      try {
        routed = this.#route(req, res);
      } catch (error) {
        return this.#fail(error, res);
      }
      routed?.catch((error: unknown) => this.#fail(error, res));
    });
    this.#server.maxConnections = limits.maxConnections;
    this.#server.on('drop', () => this.#refusedTotal++);
    this.#server.on('connection', (socket: Socket) => {
      if (this.#closing || !this.#caps.admit(socket)) return void socket.destroy();
      this.#connections++;
      this.#unused.add(socket);
      socket.once('close', () => {
        this.#connections--;
        this.#unused.delete(socket);
      });
    });
  }

  /** Open connections, and those refused by the total and the per-address cap. */
  stats(): ConnectionStats {
    return {
      open: this.#connections,
      refused: { total: this.#refusedTotal, per_address: this.#caps.refused },
    };
  }

  /** Binds; resolves with the bound address. Rejects on a bind failure (e.g. port in use). */
  listen(): Promise<AddressInfo> {
    return new Promise((done, fail) => {
      this.#server.once('error', fail);
      this.#server.listen(this.#options.port, this.#options.host, () => {
        this.#server.off('error', fail);
        this.#server.on('error', this.#options.onError);
        done(this.#server.address() as AddressInfo);
      });
    });
  }

  /**
   * Stops accepting and closes idle keep-alive connections. Resolves once every open request
   * has been answered and the server is closed.
   */
  close(): Promise<void> {
    this.#closing = true;
    const closed = new Promise<void>((done) => this.#server.close(() => done()));
    for (const res of this.#open) {
      // A request still arriving has started no work: waiting for a stalled client to finish
      // it would only spend the shutdown budget.
      if (!res.req.complete) res.destroy();
      else if (!res.headersSent) res.setHeader('connection', 'close');
    }
    this.#server.closeIdleConnections();
    for (const socket of this.#unused) socket.destroy();
    return closed;
  }

  /** Drops every connection, answered or not (after the shutdown budget ran out). */
  destroy(): void {
    this.#server.closeAllConnections();
  }

  // Not async: a row answered without waiting leaves no promise (the caller catches a throw).
  #route(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const route = findRoute(this.#options.routes, path);
    // Two Host headers are a malformed request (RFC 9112 §3.2); Node keeps the first.
    if (hostLines(req.rawHeaders) > 1) return refuseIn(route, res, 400, 'two Host headers');
    if (!hostAllowed(req.headers.host, this.#options.host))
      return refuseIn(route, res, 403, 'bad Host');
    const { host, ownNames } = this.#options;
    if (!originAllowed(req.headers.origin, req.headers.host, host, ownNames))
      return refuseIn(route, res, 403, 'Origin not allowed');
    if (this.#options.shuttingDown()) res.setHeader('connection', 'close');
    if (route === undefined) return plain(res, 404, 'not found');
    const verb = req.method ?? '';
    if (!route.methods.includes(verb)) {
      res.setHeader('allow', route.methods.join(', '));
      return refuseIn(route, res, 405, 'method not allowed');
    }
    if (!this.#authorised(route, req)) {
      if (route.auth === 'bearer') res.setHeader('www-authenticate', 'Bearer');
      return refuseIn(route, res, route.auth === 'bearer' ? 401 : 403, 'unauthorized');
    }
    return route.handle(req, res, path);
  }

  #authorised(route: Route, req: IncomingMessage): boolean {
    switch (route.auth) {
      case 'public':
        return true;
      case 'bearer': {
        const { token } = this.#options;
        return token === undefined || bearerMatches(req.headers.authorization, token);
      }
      case 'capability':
        return route.capability?.(req) === true;
    }
  }

  #fail(error: unknown, res: ServerResponse): void {
    this.#options.onError(error);
    if (res.headersSent) res.destroy();
    else plain(res, 500, 'internal error');
  }
}

/**
 * How many Host lines a request has, from its raw header list (name, value, name, value…).
 * Not `headersDistinct`: that builds an array per header of every request to read one.
 */
function hostLines(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** A refusal in the row's own form (the MCP rows answer JSON-RPC errors), else plain text. */
function refuseIn(route: Route | undefined, res: ServerResponse, status: number, text: string) {
  return route?.refuse ? route.refuse(res, status, text) : plain(res, status, text);
}

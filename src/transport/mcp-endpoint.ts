/**
 * The MCP endpoint's rows of the route table: `POST /mcp` and `POST /mcp/<method>` carry one
 * JSON-RPC message each, `GET /mcp` opens a legacy session's standing event stream (what the server
 * says outside any request, such as resource updates), `DELETE /mcp` ends a session. Holds the
 * legacy session table (`Mcp-Session-Id` → session, capped per client and in all, idle ones
 * swept on a timer), counts refused `initialize`s and records each request's duration. Knows
 * nothing of workflows: it moves messages between requests and the dispatcher.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorResponse, RPC_ERROR_CODES, RpcError, type Session } from '../protocol/index.js';
import type { BodyLimits } from './body.js';
import { openSessionStream } from './get-stream.js';
import {
  handleMcpPost,
  type McpDispatcher,
  type McpPostContext,
  principalDigest,
  principalOf,
} from './mcp-post.js';
import type { Metrics } from './metrics.js';
import { sendJson } from './respond.js';
import type { Route } from './routes.js';
import type { SessionDirectory } from './session-directory.js';
import { SESSION_IDLE_TTL_MS, SessionTable, type SessionTableOptions } from './sessions.js';

/**
 * How often idle legacy sessions are swept: once a minute, or twice per idle TTL when that is
 * shorter (so a session outlives its TTL by at most half of it; 250 ms at the least).
 */
export function sweepIntervalMs(ttlMs: number): number {
  return Math.min(60_000, Math.max(250, Math.floor(ttlMs / 2)));
}

export interface McpEndpointOptions {
  readonly dispatcher: McpDispatcher;
  /** Header carrying the caller identity; set only when a bearer token guards the endpoint. */
  readonly principalHeader?: string | undefined;
  readonly metrics: Metrics;
  /** True once shutdown has begun: MCP requests are refused. */
  readonly shuttingDown: () => boolean;
  /** Clock for session activity; `Date.now` by default. */
  readonly now?: () => number;
  /** The session caps, idle TTL and what keeps a session (`--max-sessions`, `--max-sessions-per-client`). */
  readonly sessions?: Omit<SessionTableOptions, 'onEnd'>;
  /** The deadline and shared budget of every POST body. */
  readonly body: BodyLimits;
  /** Sessions shared with other replicas (a shared store), if any. */
  readonly directory?: SessionDirectory | undefined;
}

/** The `/mcp` rows and the legacy sessions behind them; `start` once, then `close`. */
export class McpEndpoint {
  readonly #options: McpEndpointOptions;
  readonly #sessions: SessionTable;
  /** Each legacy session's standing `GET /mcp` stream. */
  readonly #streams = new Map<Session, ServerResponse>();
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | undefined;
  /** Refused `initialize`s, by the cap that refused them (`/metrics`). */
  readonly #refused = { client: 0, server: 0 };
  /** What every POST exchange is handed: the same for all of them, so made once. */
  readonly #post: McpPostContext;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    options.metrics.register({
      name: 'mhl_sessions_refused_total',
      type: 'counter',
      help: 'Legacy initialize requests refused at a session cap, by cap (client or server).',
      label: 'cap',
      read: () => ({ ...this.#refused }),
    });
    this.#sessions = new SessionTable({
      ...options.sessions,
      onEnd: (session) => {
        options.dispatcher.closeSession(session, 'session ended');
        this.#streams.get(session)?.end();
      },
    });
    this.#post = {
      dispatcher: options.dispatcher,
      sessions: this.#sessions,
      principalHeader: options.principalHeader,
      shuttingDown: options.shuttingDown,
      now: this.#now,
      onRefused: (cap) => {
        this.#refused[cap]++;
      },
      body: options.body,
      directory: options.directory,
      published: {
        at: new WeakMap(),
        // A quarter of the idle TTL, and at most every five minutes.
        everyMs: Math.min(5 * 60_000, (options.sessions?.ttlMs ?? SESSION_IDLE_TTL_MS) / 4),
      },
    };
  }

  /** Legacy sessions currently open. */
  get sessionsActive(): number {
    return this.#sessions.size;
  }

  /** The rows: `/mcp` (POST, GET, DELETE) and `/mcp/<method>` (POST), behind the bearer token. */
  routes(): Route[] {
    return [
      {
        path: '/mcp',
        methods: ['POST', 'GET', 'DELETE'],
        auth: 'bearer',
        refuse: refuseJsonRpc,
        handle: (req, res) => this.#handle(req, res, undefined),
      },
      {
        path: '/mcp/',
        prefix: true,
        methods: ['POST'],
        auth: 'bearer',
        refuse: refuseJsonRpc,
        handle: (req, res, path) => {
          const method = methodOfPath(path.slice('/mcp/'.length));
          if (method === null) return refuseJsonRpc(res, 400, 'malformed method path');
          return this.#handle(req, res, method);
        },
      },
    ];
  }

  /** Starts sweeping idle sessions. */
  start(): void {
    const every = sweepIntervalMs(this.#options.sessions?.ttlMs ?? SESSION_IDLE_TTL_MS);
    this.#sweeper = setInterval(() => this.#sessions.sweep(this.#now()), every);
    this.#sweeper.unref();
  }

  /** Ends every legacy session (their requests are cancelled) and stops the sweep. */
  close(): void {
    clearInterval(this.#sweeper);
    this.#sessions.clear();
  }

  // Not async: the POST's promise is handed back as it is (one async frame less per request);
  // the transport's router awaits it and answers a throw.
  #handle(
    req: IncomingMessage,
    res: ServerResponse,
    method: string | undefined,
  ): void | Promise<void> {
    if (req.method === 'GET') {
      // A standing stream lasts as long as its session: not a request latency.
      return openSessionStream(req, res, {
        dispatcher: this.#options.dispatcher,
        sessions: this.#sessions,
        streams: this.#streams,
        now: this.#now,
        principal: principalOf(req, this.#options.principalHeader),
      });
    }
    const started = performance.now();
    // `on`, not `once` (which wraps the listener): a response finishes once.
    res.on('finish', () =>
      this.#options.metrics.observeRequest((performance.now() - started) / 1000),
    );
    if (req.method === 'DELETE') return this.#delete(req, res);
    return handleMcpPost(req, res, method, this.#post);
  }

  async #delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') return refuseJsonRpc(res, 400, 'missing Mcp-Session-Id');
    const principal = principalOf(req, this.#options.principalHeader);
    // Only the caller that opened a session may end it, on whichever replica it was minted.
    const here = this.#sessions.get(id, principal) !== undefined;
    if (!here && !(await this.#sharedWith(id, principal))) {
      return refuseJsonRpc(res, 404, 'unknown session');
    }
    if (here) this.#sessions.delete(id);
    // Ended for every replica: none adopts it from the directory again (one that already did
    // keeps it until its idle sweep).
    await this.#options.directory?.remove(id).catch(() => {});
    res.writeHead(204).end();
  }

  /** Whether the directory holds session `id`, opened by `principal`. */
  async #sharedWith(id: string, principal: string | undefined): Promise<boolean> {
    const shared = await this.#options.directory?.lookup(id).catch(() => undefined);
    return shared !== undefined && shared.principalDigest === principalDigest(principal);
  }
}

/** A refusal of an MCP request as a JSON-RPC error (`-32600`, no id) with the HTTP status. */
function refuseJsonRpc(res: ServerResponse, status: number, text: string): void {
  sendJson(res, status, errorResponse(null, new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, text)));
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

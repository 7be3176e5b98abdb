/**
 * Legacy (2025 revisions) session state for one stdio connection or one HTTP `Mcp-Session-Id`: the
 * version `initialize` negotiated, the client's declared info and capabilities, whether
 * `notifications/initialized` arrived, the log level `logging/setLevel` chose, and when the session
 * was created and last seen so a transport can sweep idle ones. Pure state: it holds no timers,
 * sockets or requests in flight (the dispatcher owns cancellation), and it reads no clock itself —
 * callers pass `now`. A server may hold tens of thousands of idle sessions, so a session keeps
 * only its own few fields: what `initialize` declared is a record shared by every session with
 * the same declaration (`negotiations.ts`), and nothing else is allocated until it is used.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle
 */
import { randomUUID } from 'node:crypto';
import type { LogLevel } from './logging.js';
import { type SharedNegotiation, sharedNegotiation } from './negotiations.js';

/** A legacy protocol revision that `initialize` can negotiate. */
export type LegacyVersion = '2025-11-25' | '2025-06-18' | '2025-03-26';

/** What the client said about itself in `initialize`. */
export interface ClientInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}

/** Options for `new Session()`. */
export interface SessionOptions {
  /** The session id; a random UUID (visible ASCII, cryptographically random) by default. */
  id?: string;
  /** Creation time in epoch milliseconds; `Date.now()` by default. */
  now?: number;
  /**
   * The verified caller that opened the session, when the transport verifies one: the session
   * then serves that caller alone (an id is not a credential).
   */
  principal?: string | undefined;
  /**
   * The transport's key for the client that opened it (HTTP: see `Connection.client`), under
   * which its session caps count it; absent over stdio.
   */
  client?: string | undefined;
}

/** What a successful `initialize` records. */
export interface Negotiation {
  protocolVersion: LegacyVersion;
  clientInfo?: ClientInfo | undefined;
  clientCapabilities?: Record<string, unknown> | undefined;
}

/**
 * The state of one legacy session. A fresh session is not negotiated: until `initialize` is
 * answered, only modern (`_meta`-carrying) requests and the era-free built-ins are served on it.
 */
export class Session {
  /** The id sent as `Mcp-Session-Id` over HTTP. */
  readonly id: string;
  /** Who opened it, when verified (see `SessionOptions.principal`). */
  readonly principal: string | undefined;
  /** The client key it counts under (see `SessionOptions.client`). */
  readonly client: string | undefined;
  /** Creation time, epoch milliseconds. */
  readonly createdAt: number;
  #lastSeenAt: number;
  /** Shared and frozen: never written through. */
  #negotiation: SharedNegotiation | undefined;
  #initialized = false;
  #logLevel: LogLevel | undefined;

  constructor(options: SessionOptions = {}) {
    this.id = options.id ?? randomUUID();
    this.principal = options.principal;
    this.client = options.client;
    this.createdAt = options.now ?? Date.now();
    this.#lastSeenAt = this.createdAt;
  }

  /** The negotiated revision, or undefined before `initialize`. */
  get protocolVersion(): LegacyVersion | undefined {
    return this.#negotiation?.protocolVersion;
  }

  /** True once `initialize` has been answered: legacy requests are served from then on. */
  get negotiated(): boolean {
    return this.#negotiation !== undefined;
  }

  /** True once `notifications/initialized` has arrived (informational; not a gate). */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** The client's `clientInfo` from `initialize`, if it sent one (a frozen copy). */
  get clientInfo(): ClientInfo | undefined {
    return this.#negotiation?.clientInfo;
  }

  /** The client's `capabilities` from `initialize`, if it sent them (a frozen copy). */
  get clientCapabilities(): Record<string, unknown> | undefined {
    return this.#negotiation?.clientCapabilities;
  }

  /** Last activity, epoch milliseconds. */
  get lastSeenAt(): number {
    return this.#lastSeenAt;
  }

  /** True when JSON-RPC batch arrays are allowed: only a 2025-03-26 session accepts them. */
  get allowsBatch(): boolean {
    return this.#negotiation?.protocolVersion === '2025-03-26';
  }

  /**
   * Records a successful `initialize` (as a shared frozen copy: later changes to the objects
   * passed in are not seen). A repeated `initialize` renegotiates.
   * @throws RpcError -32602 when what it declares is too large to keep (`negotiations.ts`).
   */
  negotiate(negotiation: Negotiation): void {
    this.#negotiation = sharedNegotiation(negotiation);
  }

  /** The level `logging/setLevel` asked for; undefined (nothing sent) until it is called. */
  get logLevel(): LogLevel | undefined {
    return this.#logLevel;
  }

  /** Records `logging/setLevel`: log entries at or above `level` go to this client from now on. */
  setLogLevel(level: LogLevel): void {
    this.#logLevel = level;
  }

  /** Records `notifications/initialized`. */
  markInitialized(): void {
    this.#initialized = true;
  }

  /** Records activity at `now` (epoch milliseconds); time never moves backwards. */
  touch(now: number): void {
    if (now > this.#lastSeenAt) this.#lastSeenAt = now;
  }

  /** Milliseconds since the last activity, as of `now`. */
  idleFor(now: number): number {
    return Math.max(0, now - this.#lastSeenAt);
  }
}

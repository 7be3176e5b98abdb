/**
 * The legacy HTTP session table: `Mcp-Session-Id` → `Session`. Sessions idle longer than the TTL
 * are swept, and the table is capped: creating one past the cap evicts the least recently seen.
 * Every removal is reported through `onEnd`, so the owner can cancel the session's requests.
 * Reads no clock itself: callers pass `now`.
 */
import type { Session } from '../protocol/index.js';

/** Idle legacy sessions are swept after this long. */
export const SESSION_IDLE_TTL_MS = 30 * 60 * 1000;
/** Most legacy sessions held at once. */
export const MAX_SESSIONS = 1000;

/** Options for `new SessionTable()`. */
export interface SessionTableOptions {
  readonly ttlMs?: number;
  readonly max?: number;
  /** Called with each session that is deleted, swept or evicted. */
  readonly onEnd: (session: Session) => void;
}

/** The live legacy sessions of one HTTP transport, by id. */
export class SessionTable {
  readonly #sessions = new Map<string, Session>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #onEnd: (session: Session) => void;
  #ephemeral = 0;

  constructor(options: SessionTableOptions) {
    this.#ttlMs = options.ttlMs ?? SESSION_IDLE_TTL_MS;
    this.#max = options.max ?? MAX_SESSIONS;
    this.#onEnd = options.onEnd;
  }

  /** Live sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * The live session with this id, for the caller that opened it; undefined otherwise. Another
   * verified caller gets exactly what an unknown id gets: a session id is not a credential.
   */
  get(id: string, principal: string | undefined): Session | undefined {
    const session = this.#sessions.get(id);
    return session?.principal === principal ? session : undefined;
  }

  /**
   * An id for a throwaway session (a stateless request's, or a notification's without a
   * session): unique in this table's process, never a valid `Mcp-Session-Id` (not a UUID).
   */
  ephemeralId(): string {
    this.#ephemeral++;
    return `ephemeral-${this.#ephemeral}`;
  }

  /** Adds a session (after its `initialize` succeeded), sweeping and evicting first. */
  add(session: Session, now: number): void {
    this.sweep(now);
    while (this.#sessions.size >= this.#max) this.#evictStalest();
    this.#sessions.set(session.id, session);
  }

  /** Ends one session; false when the id is unknown. */
  delete(id: string): boolean {
    const session = this.#sessions.get(id);
    if (session === undefined) return false;
    this.#sessions.delete(id);
    this.#onEnd(session);
    return true;
  }

  /** Ends every session idle for longer than the TTL. */
  sweep(now: number): void {
    for (const [id, session] of this.#sessions) {
      if (session.idleFor(now) > this.#ttlMs) this.delete(id);
    }
  }

  /** Ends every session. */
  clear(): void {
    for (const id of [...this.#sessions.keys()]) this.delete(id);
  }

  #evictStalest(): void {
    let stalest: Session | undefined;
    for (const session of this.#sessions.values()) {
      if (stalest === undefined || session.lastSeenAt < stalest.lastSeenAt) stalest = session;
    }
    if (stalest !== undefined) this.delete(stalest.id);
  }
}

/**
 * The legacy HTTP session table: `Mcp-Session-Id` → `Session`, each filed under the client that
 * opened it (`client-key.ts`). Two caps bound it: sessions per client and sessions in all. A
 * session that is *pinned* (a request in flight, or background work only it can reach; the
 * owner of the table says which through `pins`) is never removed by the sweep or by eviction,
 * and counts as seen at every look, so its idle time starts when the pin goes. An unpinned
 * session idle longer than the TTL is swept. At a cap, room is made by evicting the stalest
 * unpinned session idle at least `evictableAfterMs` (of that client at the per-client cap, of
 * anyone at the global cap); when there is none, the new session is refused: a flood never
 * drops a session that is busy or was used a moment ago. Every removal is reported through
 * `onEnd`, so the owner can cancel the session's requests. Reads no clock itself: callers pass
 * `now`.
 */
import type { Session } from '../protocol/index.js';

/** Idle legacy sessions are swept after this long. */
export const SESSION_IDLE_TTL_MS = 30 * 60 * 1000;
/** Most legacy sessions held at once (`--max-sessions`). */
export const MAX_SESSIONS = 1000;
/**
 * Most legacy sessions one client holds at once (`--max-sessions-per-client`): a client needs
 * one per connection, so 100 is far above any honest client, and ten clients are needed to
 * fill the default table.
 */
export const MAX_SESSIONS_PER_CLIENT = 100;
/** A session seen more recently than this is never evicted to make room (capped by the TTL). */
export const EVICTABLE_AFTER_MS = 5 * 60 * 1000;
/** Retry-After when every candidate is pinned: pins end when work does, so check back soon. */
const PINNED_RETRY_MS = 60_000;

/** Whether a session must be kept; made once per sweep or admission, so it may use a snapshot. */
export type PinTest = (session: Session) => boolean;

/** Options for `new SessionTable()`. */
export interface SessionTableOptions {
  readonly ttlMs?: number;
  readonly max?: number;
  readonly maxPerClient?: number;
  readonly evictableAfterMs?: number;
  /** The test of what is pinned right now; nothing is pinned by default. */
  readonly pins?: () => PinTest;
  /** Called with each session that is deleted, swept or evicted. */
  readonly onEnd: (session: Session) => void;
}

/** Why `add` refused a session: which cap, and when trying again may succeed. */
export interface SessionRefusal {
  readonly cap: 'client' | 'server';
  readonly limit: number;
  readonly retryAfterMs: number;
}

interface Entry {
  readonly session: Session;
  readonly client: string;
}

const NOTHING_PINNED: PinTest = () => false;

/** The live legacy sessions of one HTTP transport, by id. */
export class SessionTable {
  readonly #sessions = new Map<string, Entry>();
  readonly #perClient = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #maxPerClient: number;
  readonly #evictableAfterMs: number;
  readonly #pins: () => PinTest;
  readonly #onEnd: (session: Session) => void;
  #ephemeral = 0;

  constructor(options: SessionTableOptions) {
    this.#ttlMs = options.ttlMs ?? SESSION_IDLE_TTL_MS;
    this.#max = options.max ?? MAX_SESSIONS;
    this.#maxPerClient = Math.min(options.maxPerClient ?? MAX_SESSIONS_PER_CLIENT, this.#max);
    this.#evictableAfterMs = Math.min(options.evictableAfterMs ?? EVICTABLE_AFTER_MS, this.#ttlMs);
    this.#pins = options.pins ?? (() => NOTHING_PINNED);
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
    const session = this.#sessions.get(id)?.session;
    return session?.principal === principal ? session : undefined;
  }

  /** True while `session` itself (not merely its id) is in the table. */
  holds(session: Session): boolean {
    return this.#sessions.get(session.id)?.session === session;
  }

  /**
   * An id for a throwaway session (a stateless request's, or a notification's without a
   * session): unique in this table's process, never a valid `Mcp-Session-Id` (not a UUID).
   */
  ephemeralId(): string {
    this.#ephemeral++;
    return `ephemeral-${this.#ephemeral}`;
  }

  /**
   * Files a session (after its `initialize` succeeded) under `client`, sweeping first and, at a
   * cap, evicting one idle session to make room. Returns the refusal when there is no room: the
   * session is then not in the table.
   */
  add(session: Session, now: number, client: string): SessionRefusal | undefined {
    const pinned = this.#pins();
    this.#sweep(now, pinned);
    if ((this.#perClient.get(client) ?? 0) >= this.#maxPerClient) {
      const refusal = this.#makeRoom(now, pinned, client);
      if (refusal !== undefined) return refusal;
    }
    if (this.#sessions.size >= this.#max) {
      const refusal = this.#makeRoom(now, pinned, undefined);
      if (refusal !== undefined) return refusal;
    }
    this.#sessions.set(session.id, { session, client });
    this.#perClient.set(client, (this.#perClient.get(client) ?? 0) + 1);
    return undefined;
  }

  /** Ends one session; false when the id is unknown. */
  delete(id: string): boolean {
    const entry = this.#sessions.get(id);
    if (entry === undefined) return false;
    this.#sessions.delete(id);
    const left = (this.#perClient.get(entry.client) ?? 1) - 1;
    if (left > 0) this.#perClient.set(entry.client, left);
    else this.#perClient.delete(entry.client);
    this.#onEnd(entry.session);
    return true;
  }

  /** Ends every unpinned session idle for longer than the TTL. */
  sweep(now: number): void {
    this.#sweep(now, this.#pins());
  }

  /** Ends every session. */
  clear(): void {
    for (const id of [...this.#sessions.keys()]) this.delete(id);
  }

  #sweep(now: number, pinned: PinTest): void {
    for (const [id, { session }] of this.#sessions) {
      if (pinned(session)) session.touch(now);
      else if (session.idleFor(now) > this.#ttlMs) this.delete(id);
    }
  }

  /**
   * Evicts the stalest evictable session (of `client`, or of anyone when undefined); the
   * refusal when none is evictable, with the time until the stalest unpinned one will be.
   */
  #makeRoom(now: number, pinned: PinTest, client: string | undefined): SessionRefusal | undefined {
    let stalest: Session | undefined;
    for (const entry of this.#sessions.values()) {
      if (client !== undefined && entry.client !== client) continue;
      const { session } = entry;
      if (pinned(session)) session.touch(now);
      else if (stalest === undefined || session.lastSeenAt < stalest.lastSeenAt) stalest = session;
    }
    if (stalest !== undefined && stalest.idleFor(now) >= this.#evictableAfterMs) {
      this.delete(stalest.id);
      return undefined;
    }
    const retryAfterMs =
      stalest === undefined ? PINNED_RETRY_MS : this.#evictableAfterMs - stalest.idleFor(now);
    return client === undefined
      ? { cap: 'server', limit: this.#max, retryAfterMs }
      : { cap: 'client', limit: this.#maxPerClient, retryAfterMs };
  }
}

/**
 * The legacy HTTP session table: `Mcp-Session-Id` → `Session`, each filed under the client that
 * opened it (`client-key.ts`). Two caps bound it: sessions per client and sessions in all. A
 * session is *busy* while a request is in flight on it (`busy`): it is never swept or evicted,
 * and counts as seen at every look, so its idle time starts when the request ends. A session
 * that owns background work only it can reach (a live run or job; `keeps` says which) is spared
 * only from eviction at a cap, and is not counted as active: its client's silence still ends it
 * at the idle TTL (its runs are then released to whoever names them), so work with no time
 * limit cannot hold a slot forever. At a cap, room is made by evicting the stalest session that
 * is neither busy nor kept and idle at least `evictableAfterMs` (of that client at the
 * per-client cap, of anyone at the global cap); when there is none, the new session is refused:
 * a flood never drops a session that is busy, owns work or was used a moment ago. Room is
 * reserved (`admit`) before the `initialize` is dispatched, so a refusal costs nothing, and the
 * work test (`keeps`, which may scan every run) is only made when an eviction candidate exists.
 * Each client's sessions are also indexed under it, so the per-client cap looks only at that
 * client's sessions (at most the per-client cap of them), never at the whole table: a client
 * hammering `initialize` at its cap costs the same at 10,000 sessions as at 10. At the global
 * cap, the sweep is made in the same pass as the look for an eviction candidate, so a refusal
 * there costs one pass over the table, not two; and a pass that finds no session past the grace
 * knows when the first can be (the stalest one's time; a busy one was just seen), so until then
 * a refusal at the global cap makes no pass at all (`#quiet`). Every removal is reported
 * through `onEnd`, so the owner can cancel the session's requests.
 * Reads no clock itself: callers pass `now`.
 */
import type { Session } from '../protocol/index.js';

/** Idle legacy sessions are swept after this long. */
export const SESSION_IDLE_TTL_MS = 30 * 60 * 1000;
/**
 * Most legacy sessions held at once (`--max-sessions`). An idle session costs a few hundred
 * bytes (its fields; what `initialize` declared is shared), so ten thousand fit with the whole
 * process under 100 MB (`bench/idle-sessions.bench.mjs`).
 */
export const MAX_SESSIONS = 10_000;
/**
 * Most legacy sessions one client holds at once (`--max-sessions-per-client`): a client needs
 * one per connection, so 100 is far above any honest client, and a hundred clients are needed
 * to fill the default table.
 */
export const MAX_SESSIONS_PER_CLIENT = 100;
/** A session seen more recently than this is never evicted to make room (capped by the TTL). */
export const EVICTABLE_AFTER_MS = 5 * 60 * 1000;
/** Retry-After when every candidate is busy or kept: requests end, and idle sessions get swept. */
const NO_CANDIDATE_RETRY_MS = 60_000;

/** Whether a session must be kept; made once per eviction, so it may use a snapshot. */
export type KeepTest = (session: Session) => boolean;

/** Options for `new SessionTable()`. */
export interface SessionTableOptions {
  readonly ttlMs?: number;
  readonly max?: number;
  readonly maxPerClient?: number;
  readonly evictableAfterMs?: number;
  /**
   * True while a request is in flight on the session: asked of every session at each sweep and
   * eviction, so it must be cheap. Nothing is busy by default.
   */
  readonly busy?: (session: Session) => boolean;
  /**
   * The test of sessions that own live background work, spared from eviction (not from the idle
   * sweep). Made only when an eviction candidate exists; nothing is kept by default.
   */
  readonly keeps?: () => KeepTest;
  /** Called with each session that is deleted, swept or evicted. */
  readonly onEnd: (session: Session) => void;
}

/** Why `admit` refused a session: which cap, and when trying again may succeed. */
export interface SessionRefusal {
  readonly cap: 'client' | 'server';
  readonly limit: number;
  readonly retryAfterMs: number;
}

/** One client's sessions and reserved slots. */
interface ClientSlots {
  readonly key: string;
  /** Its filed sessions and its reserved slots. */
  count: number;
  /** Its filed sessions, in filing order: all the per-client cap ever looks at. */
  readonly sessions: Set<Session>;
}

const NOTHING: KeepTest = () => false;

/** The live legacy sessions of one HTTP transport, by id. */
export class SessionTable {
  /** Each filed under `session.client` (the empty key when it has none). */
  readonly #sessions = new Map<string, Session>();
  /** Sessions and reserved slots per client, with the first instance of its key string. */
  readonly #perClient = new Map<string, ClientSlots>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #maxPerClient: number;
  readonly #evictableAfterMs: number;
  readonly #busy: (session: Session) => boolean;
  readonly #keeps: () => KeepTest;
  readonly #onEnd: (session: Session) => void;
  /** Slots admitted whose `initialize` has not been filed or released yet. */
  #reserved = 0;
  #ephemeral = 0;
  /**
   * After a pass of the whole table at time `from` found no session past the grace: none can be
   * before `until` (idle time only grows by the clock, a busy session was seen at `from`, a new
   * one is fresh, and the TTL is past the grace), so a refusal at the global cap needs no pass.
   * `allBusy`: there was no session to wait for (the refusal then says a minute, as a pass does).
   */
  #quiet = { from: Number.POSITIVE_INFINITY, until: Number.NEGATIVE_INFINITY, allBusy: false };

  constructor(options: SessionTableOptions) {
    this.#ttlMs = options.ttlMs ?? SESSION_IDLE_TTL_MS;
    this.#max = options.max ?? MAX_SESSIONS;
    this.#maxPerClient = Math.min(options.maxPerClient ?? MAX_SESSIONS_PER_CLIENT, this.#max);
    this.#evictableAfterMs = Math.min(options.evictableAfterMs ?? EVICTABLE_AFTER_MS, this.#ttlMs);
    this.#busy = options.busy ?? NOTHING;
    this.#keeps = options.keeps ?? (() => NOTHING);
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

  /** True while `session` itself (not merely its id) is in the table. */
  holds(session: Session): boolean {
    return this.#sessions.get(session.id) === session;
  }

  /**
   * `client` as the table already holds it, when it holds a session of that client: a client
   * key is a 64-character digest made afresh for every request, and 10,000 sessions of 100
   * clients should hold 100 of them, not 10,000. `client` itself otherwise.
   */
  sharedKey(client: string): string {
    return this.#perClient.get(client)?.key ?? client;
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
   * Reserves a slot for one more session of `client`, before its `initialize` is dispatched:
   * under both caps at once (the common case costs nothing); at a cap, after sweeping, by
   * evicting one idle session. At the per-client cap only that client's sessions are swept and
   * looked at; at the global cap, all of them. Returns the refusal when there is no room. A
   * reservation is then filled by `add` or given back by `release`.
   */
  admit(now: number, client: string): SessionRefusal | undefined {
    const atClientCap = () => (this.#perClient.get(client)?.count ?? 0) >= this.#maxPerClient;
    const atCap = () => this.#sessions.size + this.#reserved >= this.#max;
    const refusal =
      (atClientCap() ? this.#makeRoom(now, client, atClientCap) : undefined) ??
      (atCap() ? this.#makeRoom(now, undefined, atCap) : undefined);
    if (refusal !== undefined) return refusal;
    this.#reserved++;
    this.#slotsOf(client).count++;
    return undefined;
  }

  /**
   * Files a session (its `initialize` succeeded) in the slot `admit` reserved for its client
   * (`session.client`, which must be the key `admit` was given).
   */
  add(session: Session): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
    this.#sessions.set(session.id, session);
    const slots = this.#slotsOf(session.client ?? '');
    // Filed without `admit` (a caller's slip): counted now, so `delete` uncounts what was counted.
    if (slots.count === 0) slots.count = 1;
    slots.sessions.add(session);
    // Made when its `initialize` arrived, maybe before the last pass: it bounds the quiet too.
    const quiet = this.#quiet;
    quiet.until = Math.min(quiet.until, session.lastSeenAt + this.#evictableAfterMs);
  }

  /** Gives back a slot `admit` reserved for `client` whose `initialize` made no session. */
  release(client: string): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
    this.#uncount(client);
  }

  /** Ends one session; false when the id is unknown. */
  delete(id: string): boolean {
    const session = this.#sessions.get(id);
    if (session === undefined) return false;
    this.#sessions.delete(id);
    this.#perClient.get(session.client ?? '')?.sessions.delete(session);
    this.#uncount(session.client ?? '');
    this.#onEnd(session);
    return true;
  }

  /**
   * Ends every session idle for longer than the TTL and not busy, whatever work it owns: its
   * client has been silent that long. A busy session is seen now.
   */
  sweep(now: number): void {
    for (const [id, session] of this.#sessions) {
      if (this.#busy(session)) session.touch(now);
      else if (session.idleFor(now) > this.#ttlMs) this.delete(id);
    }
  }

  /** Ends every session. */
  clear(): void {
    for (const id of [...this.#sessions.keys()]) this.delete(id);
  }

  /** `client`'s slots, made empty when it has none. */
  #slotsOf(client: string): ClientSlots {
    let slots = this.#perClient.get(client);
    if (slots === undefined) {
      slots = { key: client, count: 0, sessions: new Set() };
      this.#perClient.set(client, slots);
    }
    return slots;
  }

  #uncount(client: string): void {
    const slots = this.#perClient.get(client);
    if (slots !== undefined && --slots.count <= 0) this.#perClient.delete(client);
  }

  /**
   * Sweeps the sessions of `client` (of anyone when undefined), and when that leaves it `full`,
   * evicts the stalest evictable one: idle at least the grace, not busy, not kept. The refusal
   * when there is none, with the time until the stalest session not yet idle long enough will
   * be (a minute when there is none). The sweep and the look for a candidate are one pass.
   */
  #makeRoom(
    now: number,
    client: string | undefined,
    full: () => boolean,
  ): SessionRefusal | undefined {
    const quiet = this.#quiet;
    if (client === undefined && now >= quiet.from && now < quiet.until) {
      return this.#refusal(undefined, quiet.allBusy ? NO_CANDIDATE_RETRY_MS : quiet.until - now);
    }
    // A client's own set, held across deletions (the last one drops it from `#perClient`).
    const mine = client === undefined ? undefined : this.#perClient.get(client)?.sessions;
    const pool = (): Iterable<Session> =>
      mine ?? (client === undefined ? this.#sessions.values() : []);
    let swept = false;
    let candidates = 0;
    let waiting: Session | undefined;
    for (const session of pool()) {
      // What `sweep` does, in the same pass (deleting while iterating a Map or a Set is safe).
      if (this.#busy(session)) {
        session.touch(now);
        continue;
      }
      const idle = session.idleFor(now);
      if (idle > this.#ttlMs) {
        this.delete(session.id);
        swept = true;
      } else if (idle >= this.#evictableAfterMs) candidates++;
      else if (waiting === undefined || session.lastSeenAt < waiting.lastSeenAt) waiting = session;
    }
    if (swept && !full()) return undefined;
    if (candidates > 0) {
      // Only now is the work snapshot worth making: a flood of fresh sessions never gets here.
      const kept = this.#keeps();
      let stalest: Session | undefined;
      for (const session of pool()) {
        if (session.idleFor(now) < this.#evictableAfterMs) continue;
        if (this.#busy(session) || kept(session)) continue;
        if (stalest === undefined || session.lastSeenAt < stalest.lastSeenAt) stalest = session;
      }
      if (stalest !== undefined) {
        this.delete(stalest.id);
        return undefined;
      }
    }
    const untilCandidate = this.#evictableAfterMs - (waiting?.idleFor(now) ?? 0);
    if (client === undefined && candidates === 0) {
      this.#quiet = { from: now, until: now + untilCandidate, allBusy: waiting === undefined };
    }
    return this.#refusal(client, waiting === undefined ? NO_CANDIDATE_RETRY_MS : untilCandidate);
  }

  #refusal(client: string | undefined, retryAfterMs: number): SessionRefusal {
    return client === undefined
      ? { cap: 'server', limit: this.#max, retryAfterMs }
      : { cap: 'client', limit: this.#maxPerClient, retryAfterMs };
  }
}

/**
 * Where a session's notifications go outside any request: the stdio connection, or an HTTP
 * session's standing GET stream. A transport opens a channel for a session; surfaces send
 * through the dispatcher, which asks this table. A session without an open channel has its
 * notifications held (deduplicated, bounded) until it opens one or ends, because an HTTP client
 * opens its stream only after `initialize`, racing the first notification. No I/O of its own.
 */
import type { JsonRpcNotification } from './jsonrpc.js';
import type { Session } from './session.js';

/** Most notifications held for one session that has no channel yet; the oldest go first. */
export const MAX_HELD = 64;

/** Sends one notification on a channel; a throw is reported, never propagated. */
export type ChannelSend = (notification: JsonRpcNotification) => void;

/** The channels of one dispatcher's sessions. */
export class SessionChannels {
  readonly #channels = new Map<Session, ChannelSend>();
  readonly #held = new Map<Session, JsonRpcNotification[]>();
  readonly #report: (error: unknown, method: string) => void;

  constructor(report: (error: unknown, method: string) => void) {
    this.#report = report;
  }

  /** Sessions with an open channel. */
  sessions(): Session[] {
    return [...this.#channels.keys()];
  }

  /** Opens (or replaces) `session`'s channel and sends what was held; returns the undo. */
  open(session: Session, send: ChannelSend): () => void {
    this.#channels.set(session, send);
    const held = this.#held.get(session) ?? [];
    this.#held.delete(session);
    for (const notification of held) this.notify(session, notification);
    return () => {
      if (this.#channels.get(session) === send) this.#channels.delete(session);
    };
  }

  /** Sends now (true), or holds for a session without a channel (false). Never throws. */
  notify(session: Session, notification: JsonRpcNotification): boolean {
    const send = this.#channels.get(session);
    if (send === undefined) {
      this.#hold(session, notification);
      return false;
    }
    try {
      send(notification);
    } catch (error) {
      this.#report(error, notification.method);
      return false;
    }
    return true;
  }

  /** Forgets `session`: its channel and whatever it held. */
  drop(session: Session): void {
    this.#channels.delete(session);
    this.#held.delete(session);
  }

  #hold(session: Session, notification: JsonRpcNotification): void {
    const held = this.#held.get(session) ?? [];
    const text = JSON.stringify(notification);
    if (held.some((n) => JSON.stringify(n) === text)) return;
    held.push(notification);
    if (held.length > MAX_HELD) held.shift();
    this.#held.set(session, held);
  }
}

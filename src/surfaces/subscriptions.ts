/**
 * Resource subscriptions of the 2025 revisions: `resources/subscribe` / `resources/unsubscribe`
 * on legacy sessions (2026-07-28 dropped them: -32601 there), and
 * `notifications/resources/updated {uri}` to each subscribed session when a resource changes.
 * Workflow resources never change; a run's `mhl://run/<id>/logs` and `/result` change as it
 * progresses. A subscription is accepted only for a URI the caller could read, so a run that
 * belongs to someone else is refused exactly like a URI that does not exist.
 *
 * Updates go out through the session's own channel (the stdio connection, an HTTP GET
 * stream), coalesced to at most one per URI per `UPDATE_INTERVAL_MS`: a client re-reads the
 * resource anyway. Knows nothing of transports beyond that channel.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions
 */
import {
  type JsonRpcNotification,
  RPC_ERROR_CODES,
  RpcError,
  type Session,
} from '../protocol/index.js';
import type { MethodEntry } from './methods.js';
import { findResource, type ResourceProvider, resourceNotFound } from './resources.js';

/** Shortest gap between two updates of one URI. */
export const UPDATE_INTERVAL_MS = 100;

/** Most URIs one session may subscribe to (each is a small entry, but not an unbounded one). */
const MAX_SUBSCRIPTIONS_PER_SESSION = 1000;

/** What subscriptions need from the dispatcher (`Dispatcher` satisfies it). */
export interface SessionNotifier {
  notify(session: Session, notification: JsonRpcNotification): boolean;
  onSessionClose(listener: (session: Session) => void): void;
}

/** The subscriptions of every legacy session of one server. */
export class Subscriptions {
  readonly #notifier: SessionNotifier;
  readonly #providers: readonly ResourceProvider[];
  readonly #bySession = new Map<Session, Set<string>>();
  /** The same, by URI: a change finds its subscribers without a scan. */
  readonly #byUri = new Map<string, Set<Session>>();
  readonly #pending = new Map<string, NodeJS.Timeout>();

  constructor(notifier: SessionNotifier, providers: readonly ResourceProvider[]) {
    this.#notifier = notifier;
    this.#providers = providers;
    notifier.onSessionClose((session) => {
      for (const uri of this.#bySession.get(session) ?? []) this.#drop(session, uri);
    });
  }

  /** `resources/subscribe` and `resources/unsubscribe`, legacy only. */
  methods(): MethodEntry[] {
    return [
      {
        method: 'resources/subscribe',
        eras: ['legacy'],
        handler: async (params, ctx) => {
          const uri = uriOf(params);
          const session = ctx.session as Session;
          if ((await findResource(this.#providers, uri, ctx)) === undefined)
            throw resourceNotFound(uri, ctx);
          const uris = this.#bySession.get(session) ?? new Set<string>();
          if (!uris.has(uri) && uris.size >= MAX_SUBSCRIPTIONS_PER_SESSION)
            throw new RpcError(
              RPC_ERROR_CODES.INVALID_PARAMS,
              `at most ${MAX_SUBSCRIPTIONS_PER_SESSION} subscriptions per session`,
            );
          uris.add(uri);
          this.#bySession.set(session, uris);
          const sessions = this.#byUri.get(uri) ?? new Set<Session>();
          sessions.add(session);
          this.#byUri.set(uri, sessions);
          return {};
        },
      },
      {
        method: 'resources/unsubscribe',
        eras: ['legacy'],
        // Unsubscribing from something never subscribed is not an error: the end state holds.
        handler: async (params, ctx) => {
          this.#drop(ctx.session as Session, uriOf(params));
          return {};
        },
      },
    ];
  }

  /** Says `uri` changed: its subscribers get one update soon (bursts are coalesced). */
  changed(uri: string): void {
    if (this.#pending.has(uri) || !this.#byUri.has(uri)) return;
    const timer = setTimeout(() => {
      this.#pending.delete(uri);
      this.#send(uri);
    }, UPDATE_INTERVAL_MS);
    this.#pending.set(uri, timer);
  }

  /** Says run `runId` changed (its view, its log, or both). */
  runChanged(runId: string): void {
    this.changed(`mhl://run/${runId}/logs`);
    this.changed(`mhl://run/${runId}/result`);
  }

  /** Cancels pending updates (shutdown). */
  close(): void {
    for (const timer of this.#pending.values()) clearTimeout(timer);
    this.#pending.clear();
  }

  #drop(session: Session, uri: string): void {
    const uris = this.#bySession.get(session);
    uris?.delete(uri);
    if (uris?.size === 0) this.#bySession.delete(session);
    const sessions = this.#byUri.get(uri);
    sessions?.delete(session);
    if (sessions?.size === 0) this.#byUri.delete(uri);
  }

  #send(uri: string): void {
    const notification: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri },
    };
    for (const session of this.#byUri.get(uri) ?? []) this.#notifier.notify(session, notification);
  }
}

function uriOf(params: Record<string, unknown>): string {
  const uri = params['uri'];
  if (typeof uri !== 'string' || uri === '')
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'uri must be a non-empty string', {
      field: 'uri',
    });
  return uri;
}

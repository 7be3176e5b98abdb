/**
 * Server→client requests (legacy sessions): the server's own id space, one table of requests
 * waiting for an answer per session, and the routing of the client's responses back to them.
 * A request goes out through the `Connection` the inbound request came on (a stdio line, or an
 * event on the HTTP request's own stream); its response may arrive on another exchange of the
 * same session (a later HTTP POST), so waiters are keyed by session, not by connection.
 *
 * Knows no method names beyond `notifications/cancelled` and nothing of what is asked: the
 * caller builds `method` and `params` and reads the result. Never touches a socket or a stream.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic#requests
 */
import type { Connection } from './context.js';
import { RPC_ERROR_CODES, RpcError, type RpcErrorCode } from './errors.js';
import { isRecord, type RequestId } from './jsonrpc.js';
import type { Session } from './session.js';

/** A response the peer sent: its id and either `result` or `error`. */
export interface PeerResponse {
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

interface Waiter {
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: unknown) => void;
}

/** Most requests one session may have waiting at once; more are refused, not queued. */
export const MAX_PENDING_PER_SESSION = 64;

/** The pending server→client requests of every session. */
export class OutboundRequests {
  readonly #pending = new Map<Session, Map<RequestId, Waiter>>();
  #next = 0;

  /** Requests waiting for an answer, over all sessions. */
  get size(): number {
    let count = 0;
    for (const waiters of this.#pending.values()) count += waiters.size;
    return count;
  }

  /**
   * Sends `method` to the client of `conn` and resolves with the result of its response. Rejects
   * with an `RpcError` carrying the client's error, with `signal.reason` when the signal aborts
   * first (and then tells the client with `notifications/cancelled`), and with an `AbortError`
   * when the session closes.
   */
  request(
    conn: Connection,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    signal.throwIfAborted();
    const session = conn.session;
    let waiters = this.#pending.get(session);
    if ((waiters?.size ?? 0) >= MAX_PENDING_PER_SESSION) {
      return Promise.reject(new Error('too many server requests waiting on this session'));
    }
    if (waiters === undefined) {
      waiters = new Map();
      this.#pending.set(session, waiters);
    }
    // A prefix the client's own ids are unlikely to use makes logs easy to read; the id spaces
    // of the two directions are separate anyway.
    this.#next += 1;
    const id = `mhl-${this.#next}`;
    const table = waiters;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#forget(session, id)) return;
        const cancel = {
          jsonrpc: '2.0' as const,
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'the request that needed it ended' },
        };
        Promise.resolve()
          .then(() => conn.send(cancel))
          .catch(() => undefined);
        reject(signal.reason);
      };
      table.set(id, {
        resolve: (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      Promise.resolve()
        .then(() => conn.send({ jsonrpc: '2.0', id, method, params }))
        .catch((error: unknown) => {
          if (this.#forget(session, id)) {
            signal.removeEventListener('abort', onAbort);
            reject(error);
          }
        });
    });
  }

  /**
   * Routes a response from the client of `session` to the request waiting for it. Returns false
   * for a response nobody waits for (unknown, late or foreign ids are ignored).
   */
  settle(session: Session, response: PeerResponse): boolean {
    const id = response.id;
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    const waiter = this.#pending.get(session)?.get(id);
    if (waiter === undefined) return false;
    this.#forget(session, id);
    if ('error' in response && response.error !== undefined) {
      waiter.reject(peerError(response.error));
    } else if (isRecord(response.result)) {
      waiter.resolve(response.result);
    } else {
      waiter.reject(
        new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'the client answered a non-object'),
      );
    }
    return true;
  }

  /** Rejects every request waiting on `session` (the session or its connection closed). */
  closeSession(session: Session, reason: string): void {
    const waiters = this.#pending.get(session);
    if (waiters === undefined) return;
    this.#pending.delete(session);
    for (const waiter of waiters.values()) waiter.reject(new DOMException(reason, 'AbortError'));
  }

  /** Drops one waiter; true when it was still there. */
  #forget(session: Session, id: RequestId): boolean {
    const waiters = this.#pending.get(session);
    if (waiters === undefined || !waiters.delete(id)) return false;
    if (waiters.size === 0) this.#pending.delete(session);
    return true;
  }
}

/** The client's error object as an `RpcError` (its code kept when it is a number). */
function peerError(error: unknown): RpcError {
  // The client's code is passed on as data for the caller to read, never sent on.
  const code = isRecord(error) && typeof error['code'] === 'number' ? error['code'] : -32603;
  const message =
    isRecord(error) && typeof error['message'] === 'string'
      ? error['message'].slice(0, 200)
      : 'the client answered with an error';
  return new RpcError(code as RpcErrorCode, message);
}

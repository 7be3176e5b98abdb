/**
 * The answers of a POST exchange that are not the dispatcher's: the refusal of a body that was
 * not read whole, of an `initialize` at a session cap, and the HTTP status of an answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type DispatchResult,
  errorResponse,
  type RequestId,
  RPC_ERROR_CODES,
  RpcError,
  tooLargeResponse,
} from '../protocol/index.js';
import { type BodyLimits, discardRest, MAX_BODY_BYTES } from './body.js';
import { sendJson } from './respond.js';
import type { SessionRefusal } from './sessions.js';

/** Answers a body that was not read whole. */
export function refuseBody(
  req: IncomingMessage,
  res: ServerResponse,
  reason: 'too-large' | 'aborted' | 'timeout' | 'stalled' | 'busy',
  limits: BodyLimits,
): void {
  switch (reason) {
    case 'aborted':
      return void res.destroy();
    case 'too-large':
      discardRest(req);
      return sendJson(res, 413, tooLargeResponse(MAX_BODY_BYTES));
    case 'busy': {
      // Other requests' bodies fill the budget: the client may retry once they are read. The
      // rest is not read (reading only to throw it away is what a flood of bodies costs), so
      // the connection closes after the answer; a small body has usually arrived whole with its
      // headers, so closing does not reset its client before it reads the 503.
      res.setHeader('connection', 'close');
      const error = new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'server busy reading bodies', {
        code: 'BODY_BUFFER_FULL',
        retryable: true,
      });
      return sendJson(res, 503, errorResponse(null, error));
    }
    case 'timeout':
    case 'stalled': {
      // The client stopped sending (past the deadline, or long enough that another body needed
      // its room, see body.ts): nothing more is read, and the connection closes once the
      // answer is out, which frees its slot under the connection caps.
      const error =
        reason === 'timeout'
          ? new RpcError(
              RPC_ERROR_CODES.INVALID_REQUEST,
              `request body not received within ${limits.timeoutMs} ms`,
              { code: 'BODY_TIMEOUT', timeoutMs: limits.timeoutMs },
            )
          : new RpcError(
              RPC_ERROR_CODES.INVALID_REQUEST,
              'request body stalled while other bodies needed its room; send it again',
              { code: 'BODY_STALLED', retryable: true },
            );
      res.setHeader('connection', 'close');
      return sendJson(res, 408, errorResponse(null, error));
    }
  }
}

/**
 * Refuses an `initialize` at a session cap: `-32000` (no capacity, as every capacity refusal
 * is) with `data.code`, 429 for the client's own cap and 503 for the server's, and Retry-After
 * (seconds) for when an idle session may have made room.
 */
export function refuseSession(
  res: ServerResponse,
  id: RequestId | null,
  refusal: SessionRefusal,
): void {
  const own = refusal.cap === 'client';
  const error = new RpcError(
    RPC_ERROR_CODES.SERVER_UNAVAILABLE,
    own
      ? `this client already holds ${refusal.limit} sessions (--max-sessions-per-client): end unused ones with DELETE /mcp, or retry later`
      : `the server holds ${refusal.limit} sessions (--max-sessions), none idle long enough to end: retry later`,
    {
      code: own ? 'CLIENT_SESSION_LIMIT' : 'SESSION_CAPACITY_FULL',
      retryable: true,
      limit: refusal.limit,
    },
  );
  res.setHeader('retry-after', String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))));
  sendJson(res, own ? 429 : 503, errorResponse(id, error));
}

/**
 * The HTTP status of an answer. Malformed requests are 400 in both eras; modern (stateless)
 * errors follow the 2026-07-28 table (-32601 → 404, params/header/version → 400, -32000 → 503);
 * legacy JSON-RPC errors ride on 200, as 2025 clients expect.
 */
export function statusOf(answer: Exclude<DispatchResult, undefined>, modern: boolean): number {
  if (Array.isArray(answer) || !('error' in answer)) return 200;
  const code = answer.error.code;
  if (code === RPC_ERROR_CODES.PARSE_ERROR || code === RPC_ERROR_CODES.INVALID_REQUEST) return 400;
  if (!modern) return 200;
  if (code === RPC_ERROR_CODES.METHOD_NOT_FOUND) return 404;
  if (code === RPC_ERROR_CODES.SERVER_UNAVAILABLE) return 503;
  return code === RPC_ERROR_CODES.INTERNAL_ERROR ? 500 : 400;
}

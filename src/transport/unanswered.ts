/**
 * The answers owed for requests that went unanswered because their session ended under them:
 * shutdown (`-32000`, HTTP 503) or a `DELETE` of their legacy session (`-32600` `SESSION_ENDED`,
 * HTTP 404, as for a request naming an ended session). The dispatcher answers nothing for an
 * aborted request, so the transport fills in one error per request id the answer lacks, for a
 * single request and for each item of a 2025-03-26 batch, so every request with an id gets a
 * response. The exception is a request the client cancelled itself in the same batch
 * (`notifications/cancelled`): MCP says a cancelled request gets no response.
 */
import {
  cancelTarget,
  type DispatchResult,
  errorResponse,
  isRecord,
  type JsonRpcResponse,
  type RequestId,
  RPC_ERROR_CODES,
  RpcError,
} from '../protocol/index.js';

/** What ended the requests of one exchange, if anything did. */
export type EndedBy = 'shutdown' | 'session';

function endedError(ended: EndedBy): RpcError {
  return ended === 'shutdown'
    ? new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, 'server is shutting down')
    : new RpcError(
        RPC_ERROR_CODES.INVALID_REQUEST,
        'the session ended while this request was in flight; initialize a new one',
        { code: 'SESSION_ENDED' },
      );
}

/** The id of a request (a record with a method and a string or number id); null otherwise. */
function requestIdOf(item: unknown): RequestId | null {
  if (!isRecord(item) || typeof item['method'] !== 'string') return null;
  const id = item['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function cancelledIdOf(item: unknown): RequestId[] {
  if (!isRecord(item) || item['method'] !== 'notifications/cancelled' || 'id' in item) return [];
  const target = cancelTarget(item['params']);
  return target === undefined ? [] : [target.requestId];
}

/**
 * `answer` completed with an error for each request of `message` it does not answer, when
 * `ended` says the requests were cut short; `answer` itself otherwise. A batch refused whole (one
 * error, not an array) owes nothing more.
 */
export function withOwed(
  message: unknown,
  answer: DispatchResult,
  ended: EndedBy | undefined,
): DispatchResult {
  if (ended === undefined) return answer;
  const batch = Array.isArray(message);
  if (batch && answer !== undefined && !Array.isArray(answer)) return answer;
  const items: unknown[] = batch ? message : [message];
  const given: JsonRpcResponse[] =
    answer === undefined ? [] : Array.isArray(answer) ? answer : [answer];
  const answered = new Set<RequestId | null>(given.map((response) => response.id));
  const cancelled = new Set(items.flatMap(cancelledIdOf));
  const owed: JsonRpcResponse[] = [];
  for (const item of items) {
    const id = requestIdOf(item);
    if (id === null || answered.has(id) || (batch && cancelled.has(id))) continue;
    answered.add(id);
    owed.push(errorResponse(id, endedError(ended)));
  }
  if (owed.length === 0) return answer;
  return batch ? [...given, ...owed] : owed[0];
}

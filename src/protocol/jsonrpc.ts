/**
 * The JSON-RPC 2.0 codec: turns text or an already-parsed JSON value into one classified inbound
 * message, and builds the responses that go back. Envelopes are validated with zod as loose
 * objects (unknown members from other SDKs pass), and `params` is handed on by reference, never
 * copied, so keys such as `__proto__` stay plain own data. It must not touch sockets or streams,
 * know about eras or sessions, or decide whether batches are allowed (the dispatcher does).
 *
 * @see https://www.jsonrpc.org/specification
 */
import { z } from 'zod';
import { RPC_ERROR_CODES, RpcError, type RpcErrorObject } from './errors.js';

/** Deepest nesting of arrays and objects accepted in one message (a batch counts as a level). */
export const MAX_NESTING_DEPTH = 128;

/** A request id. MCP forbids `null`; a message with `id: null` is read as a notification. */
export type RequestId = string | number;
/** Structured params: MCP methods take an object, JSON-RPC also allows an array. */
export type Params = Record<string, unknown> | unknown[];

/** A request: it has an id and is answered exactly once (unless cancelled). */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Params;
}

/** A notification: no id, never answered. */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Params;
}

/** A successful response. */
export interface JsonRpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}

/** An error response; `id` is null when the request's id could not be read. */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: RpcErrorObject;
}

/** Any response the server sends. */
export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;

/** One inbound message after validation. */
export type InboundMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  /** A response from the peer to a request the server sent (see `outbound.ts`). */
  | { kind: 'response'; message: { id: unknown; result?: unknown; error?: unknown } }
  | { kind: 'invalid'; response: JsonRpcErrorResponse };

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The envelope's schemas, built on first use: nearly every message takes the hand-read path
 * (`plainEnvelope`), so a server need not build them at start-up.
 */
function buildEnvelopeSchemas() {
  /** A request id: a string or a number. */
  const requestId = z
    .union([z.string(), z.number()])
    .describe('JSON-RPC request id: a string or a number (null marks a notification)');
  const params = z
    .custom<Params>((value) => typeof value === 'object' && value !== null, {
      message: 'params must be an object or an array',
    })
    .describe('Method parameters, passed on by reference');
  /** The envelope of a request or notification, loose so other SDKs' extra members pass. */
  const message = z
    .looseObject({
      jsonrpc: z.literal('2.0').describe('Always "2.0"'),
      id: requestId.nullable().optional().describe('Absent or null for a notification'),
      method: z.string().min(1).describe('The method name, e.g. "tools/call"'),
      params: params.optional(),
    })
    .describe('A JSON-RPC 2.0 request or notification');
  return { requestId, message };
}
let envelope: ReturnType<typeof buildEnvelopeSchemas> | undefined;

/** The schemas of a request id and of a request or notification. */
export function envelopeSchemas(): ReturnType<typeof buildEnvelopeSchemas> {
  envelope ??= buildEnvelopeSchemas();
  return envelope;
}

/** A successful response with `result`. */
export function resultResponse(
  id: RequestId,
  result: Record<string, unknown>,
): JsonRpcResultResponse {
  return { jsonrpc: '2.0', id, result };
}

/** An error response; pass `null` when the request's id is unknown. */
export function errorResponse(
  id: RequestId | null,
  error: RpcError | RpcErrorObject,
): JsonRpcErrorResponse {
  const object = error instanceof RpcError ? error.toJSON() : error;
  return { jsonrpc: '2.0', id, error: object };
}

/** The answer to unparseable text: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,…}}`. */
export function parseErrorResponse(): JsonRpcErrorResponse {
  return errorResponse(null, new RpcError(RPC_ERROR_CODES.PARSE_ERROR, 'parse error'));
}

/**
 * The answer to a message over a transport's size limit, read no further: -32600 with
 * `data.maxBytes`, the same on every transport (an HTTP body, a stdio line).
 */
export function tooLargeResponse(
  maxBytes: number,
  id: RequestId | null = null,
): JsonRpcErrorResponse {
  const mib = maxBytes / (1024 * 1024);
  const size = Number.isInteger(mib) ? `${mib} MiB` : `${maxBytes} bytes`;
  const message = `message exceeds ${size}`;
  return errorResponse(id, new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, message, { maxBytes }));
}

const ID_VALUE = String.raw`(-?\d{1,15}|"[^"\\]{0,200}")`;
/** `id` among the leading scalar members of the top-level object (before any nested value). */
const HEAD_ID = new RegExp(
  String.raw`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*${ID_VALUE}`,
);
/** `id` as the last member: exactly one `}` after it, so it cannot be a nested object's. */
const TAIL_ID = new RegExp(String.raw`[{,]\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

/**
 * The request id of a message too large to parse, from its first and last bytes: SDKs write
 * `id` either first (after `jsonrpc`/`method`) or last. Null when neither edge names it
 * unambiguously; then the client learns of the refusal only by its id-less error.
 */
export function recoverRequestId(head: string, tail: string): RequestId | null {
  const found = HEAD_ID.exec(head)?.[1] ?? TAIL_ID.exec(tail)?.[1];
  return found === undefined ? null : (JSON.parse(found) as RequestId);
}

/** Parses text as JSON; on failure returns the -32700 response to send. Never throws. */
export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; response: JsonRpcErrorResponse } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // Any JSON.parse failure is a parse error; the exception's text is not sent.
    return { ok: false, response: parseErrorResponse() };
  }
}

/**
 * True when arrays and objects in `value` nest deeper than `maxDepth` (the value itself is level
 * 1). It stops at the first level too deep, so hostile nesting cannot overflow the stack (the
 * recursion goes at most `maxDepth` deep; past `RECURSION_LIMIT` the walk is iterative) and a
 * cyclic in-process value terminates as well.
 */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  // Recursion with `for…in` allocates nothing per node; every message passes here.
  if (maxDepth <= RECURSION_LIMIT) return deeper(value, 1, maxDepth);
  return exceedsDepthIteratively(value, maxDepth);
}

// Well within any stack: a frame of `deeper` is small.
const RECURSION_LIMIT = 1024;

function deeper(node: unknown, depth: number, maxDepth: number): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (depth > maxDepth) return true;
  if (Array.isArray(node)) {
    for (const child of node) if (deeper(child, depth + 1, maxDepth)) return true;
    return false;
  }
  const record = node as Record<string, unknown>;
  for (const key in record) {
    if (Object.hasOwn(record, key) && deeper(record[key], depth + 1, maxDepth)) return true;
  }
  return false;
}

function exceedsDepthIteratively(value: unknown, maxDepth: number): boolean {
  // Two parallel stacks rather than a [node, depth] pair per node.
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop() as number;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return true;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** The id to echo in an error for a malformed message: its own id when that id is valid. */
export function echoId(value: unknown): RequestId | null {
  if (!isRecord(value)) return null;
  const id = value['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A reply from the peer rather than a request: an id, `result` or `error`, and no `method`. */
function isPeerResponse(value: Record<string, unknown>): boolean {
  return !('method' in value) && 'id' in value && ('result' in value || 'error' in value);
}

/**
 * Validates one decoded JSON value (not a batch) and classifies it. A malformed message yields
 * the -32600 response to send, echoing the message's id when it has a valid one; `data.field`
 * names the first offending member. Never throws.
 */
export function classifyMessage(value: unknown): InboundMessage {
  if (isRecord(value) && isPeerResponse(value)) {
    const { id, result, error } = value;
    return { kind: 'response', message: 'error' in value ? { id, error } : { id, result } };
  }
  const plain = plainEnvelope(value);
  if (plain !== undefined) return classified(plain.id, plain.method, plain.params);
  const parsed = envelopeSchemas().message.safeParse(value);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join('.') ?? '';
    const error = new RpcError(RPC_ERROR_CODES.INVALID_REQUEST, 'invalid request', { field });
    return { kind: 'invalid', response: errorResponse(echoId(value), error) };
  }
  const { id, method, params } = parsed.data;
  return classified(id, method, params);
}

function classified(
  id: RequestId | null | undefined,
  method: string,
  params: Params | undefined,
): InboundMessage {
  const base = params === undefined ? { method } : { method, params };
  if (id === undefined || id === null) {
    return { kind: 'notification', message: { jsonrpc: '2.0', ...base } };
  }
  return { kind: 'request', message: { jsonrpc: '2.0', id, ...base } };
}

/**
 * The envelope of a message that `envelopeSchemas().message` accepts, read by hand: nearly every
 * message is well formed, and the schema's parse was 1% of a trivial call's CPU. Anything this
 * does not accept (undefined) goes through the schema, which names the offending field.
 */
function plainEnvelope(
  value: unknown,
): { id: RequestId | null | undefined; method: string; params: Params | undefined } | undefined {
  if (!isRecord(value) || value['jsonrpc'] !== '2.0') return undefined;
  const { id, method, params } = value;
  if (typeof method !== 'string' || method.length === 0) return undefined;
  const idOk = id === undefined || id === null || typeof id === 'string' || Number.isFinite(id);
  if (!idOk) return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null)) return undefined;
  return { id: id as RequestId | null | undefined, method, params: params as Params | undefined };
}

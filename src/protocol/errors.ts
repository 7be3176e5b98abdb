/**
 * The JSON-RPC error family: `RpcError` carries a numeric code and crosses the wire as the `error`
 * member of a response. The codes are the ones mcp-wire.md and mhl-serve.md §10 name; nothing
 * else may be sent. This module must not map HTTP statuses (that is the transport's table) nor
 * know about surfaces.
 */

/**
 * Every JSON-RPC error code mhl sends.
 * @see https://www.jsonrpc.org/specification#error_object
 * @see https://modelcontextprotocol.io/specification/draft/basic (2026-07-28 codes -32020..-32022)
 */
export const RPC_ERROR_CODES = {
  /** The text is not JSON. */
  PARSE_ERROR: -32700,
  /** The JSON is not a valid request object (or a batch where batches are not allowed). */
  INVALID_REQUEST: -32600,
  /** No such method, or a method that does not exist in the request's era. */
  METHOD_NOT_FOUND: -32601,
  /** Bad params: missing modern `_meta`, unknown tool, invalid inputs, unknown resource (2026). */
  INVALID_PARAMS: -32602,
  /** A fault of the server; the message never carries internals. */
  INTERNAL_ERROR: -32603,
  /** Resource not found (2025 revisions; 2026-07-28 uses -32602). */
  RESOURCE_NOT_FOUND: -32002,
  /** `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header missing or not matching the body. */
  HEADER_MISMATCH: -32020,
  /** The request needs a client capability the client did not declare. */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
  /** A modern request names a protocol version this server does not speak. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022,
  /** The server is draining or has no capacity (HTTP 503). */
  SERVER_UNAVAILABLE: -32000,
} as const;

/** One of `RPC_ERROR_CODES`. */
export type RpcErrorCode = (typeof RPC_ERROR_CODES)[keyof typeof RPC_ERROR_CODES];

/** The `error` member of a JSON-RPC error response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * An error that is answered to the peer as is: `code`, `message` and optional `data` become the
 * response's `error` object. Throw it from a method handler for a client fault; any other
 * exception is answered as -32603 "internal error".
 */
export class RpcError extends Error {
  readonly code: RpcErrorCode;
  readonly data: unknown;

  constructor(code: RpcErrorCode, message: string, data?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }

  /** The wire form: `{code, message, data?}`. */
  toJSON(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** The error answered for any exception that is not an `RpcError`; it never leaks internals. */
export function internalError(cause?: unknown): RpcError {
  return new RpcError(RPC_ERROR_CODES.INTERNAL_ERROR, 'internal error', undefined, { cause });
}

/**
 * A2A's JSON-RPC errors: the standard codes plus A2A's own (-32001 TaskNotFound, -32002
 * TaskNotCancelable, …, -32009 VersionNotSupported), and the one mapping from the run layer's
 * refusals to them. An unknown task and another owner's task get the same error, built by
 * `taskNotFound`, so the answer is no existence oracle.
 *
 * @see https://a2a-protocol.org/latest/specification/ (section "Error Handling")
 */
import { ArgumentError, RunError } from '../../runs/index.js';

export const A2A_ERROR_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** The server is draining or has no capacity now; retry later (as on MCP). */
  SERVER_UNAVAILABLE: -32000,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  EXTENDED_CARD_NOT_CONFIGURED: -32007,
  VERSION_NOT_SUPPORTED: -32009,
} as const;

export type A2aErrorCode = (typeof A2A_ERROR_CODES)[keyof typeof A2A_ERROR_CODES];

/** An error answered to the A2A client as is (`code`, `message`, `data`). */
export class A2aError extends Error {
  readonly code: A2aErrorCode;
  readonly data: unknown;

  constructor(code: A2aErrorCode, message: string, data?: unknown) {
    super(message);
    this.name = 'A2aError';
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC `error` member. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** The one answer for an unknown task and for someone else's, byte for byte. */
export function taskNotFound(): A2aError {
  return new A2aError(A2A_ERROR_CODES.TASK_NOT_FOUND, 'task not found');
}

/** A refused parameter: -32602 naming the field in `data.field`. */
export function invalidParams(field: string, message: string, data?: object): A2aError {
  return new A2aError(A2A_ERROR_CODES.INVALID_PARAMS, message, { field, ...data });
}

/** Run errors that are the server's condition, not the request's. */
const UNAVAILABLE = new Set([
  'SHUTTING_DOWN',
  'CAPACITY_FULL',
  'QUOTA_EXCEEDED',
  'STATE_STORAGE_FULL',
  'STATE_STORE_FAILED',
]);

/**
 * The A2A error for what the run layer threw; anything else is rethrown (an internal fault,
 * answered -32603 without detail by the caller).
 */
export function a2aErrorOf(error: unknown): A2aError {
  if (error instanceof A2aError) return error;
  if (error instanceof ArgumentError) {
    return new A2aError(A2A_ERROR_CODES.INVALID_PARAMS, error.message, {
      code: error.code,
      // The run layer names fields from its `arguments`; an A2A client sent them as the input.
      field: error.field.replace(/^arguments(?=\.|$)/, 'input'),
      ...error.details,
    });
  }
  if (!(error instanceof RunError)) throw error;
  if (error.code === 'RUN_NOT_FOUND') return taskNotFound();
  if (UNAVAILABLE.has(error.code)) {
    return new A2aError(A2A_ERROR_CODES.SERVER_UNAVAILABLE, error.message, {
      code: error.code,
      retryable: true,
      ...error.data,
    });
  }
  // RUN_ACTIVE, RUN_NOT_RESUMABLE: the task exists but cannot take this message.
  return new A2aError(A2A_ERROR_CODES.UNSUPPORTED_OPERATION, error.message, { code: error.code });
}

/**
 * MCP logging, as far as the protocol goes: the eight RFC 5424 levels, the level a request asks
 * for (a legacy session's `logging/setLevel`, or a modern request's
 * `_meta["io.modelcontextprotocol/logLevel"]`), and the reporter bound to one request that sends
 * `notifications/message` at or above it. No level asked for means nothing is sent: a client
 * that never opted in gets no stream of log lines it has to discard. Sends only through the
 * connection; knows nothing of runs.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging
 */
import {
  type Connection,
  type ErrorSite,
  type RequestCancellation,
  sendReported,
} from './context.js';
import type { JsonRpcNotification, JsonRpcRequest } from './jsonrpc.js';

/** The levels, least severe first. */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;

/** One MCP log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** True for one of the eight level names. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** Sends one log entry of the current request as `notifications/message`, if its level passes. */
export type LogReporter = (level: LogLevel, data: unknown, logger?: string) => void;

/** What `createLogReporter` needs about its request. */
export interface LogBinding {
  /**
   * The least severe level sent, read at each entry (a legacy session may change it while a call
   * runs); undefined sends nothing.
   */
  readonly threshold: () => LogLevel | undefined;
  readonly request: JsonRpcRequest;
  readonly conn: Connection;
  readonly cancellation: RequestCancellation;
  /** Set to true by the dispatcher once the request is answered. */
  readonly live: { settled: boolean };
  /** Receives a failed `send`. */
  readonly report: (error: unknown, site: ErrorSite) => void;
}

/**
 * A reporter that sends `notifications/message {level, logger?, data}` for entries at or above
 * the threshold, until the request is answered or aborted. Never throws.
 */
export function createLogReporter(binding: LogBinding): LogReporter {
  const { request, conn, cancellation, live, report, threshold } = binding;
  return (level, data, logger) => {
    if (live.settled || cancellation.aborted) return;
    const floor = threshold();
    if (floor === undefined || LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(floor)) return;
    const notification: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level, ...(logger === undefined ? {} : { logger }), data },
    };
    // Sent now, not from a microtask, as progress is (see `createProgressReporter`).
    sendReported(conn, notification, request, report);
  };
}

/**
 * The server's log: JSON lines on stderr (stdout belongs to the protocol on stdio), through
 * pino, written synchronously so nothing is lost when the process exits. Secrets must be
 * redacted before they reach a log call.
 */
import { type Logger, pino } from 'pino';

export type { Logger };

/** A logger writing JSON lines to file descriptor 2. */
export function createLogger(level: string = process.env['MHL_LOG_LEVEL'] ?? 'info'): Logger {
  return pino(
    { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ fd: 2, sync: true }),
  );
}

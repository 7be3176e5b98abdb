/**
 * MCP logging for served workflows: `logging/setLevel` on legacy sessions (the method is gone
 * in 2026-07-28, where a request carries `_meta["io.modelcontextprotocol/logLevel"]` instead,
 * which the dispatcher reads), and the mapping of a run's output lines to log entries:
 * `log.info|warn|error(…)` lines by their prefix, a bare `log(…)` line as `info`. Lines arrive
 * redacted; this module only classifies and forwards them, through the request's reporter.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging
 */
import {
  isLogLevel,
  LOG_LEVELS,
  type LogLevel,
  type LogReporter,
  RPC_ERROR_CODES,
  RpcError,
} from '../protocol/index.js';
import type { MethodEntry } from './methods.js';

/** The `logging` capability, said on legacy sessions only. */
export const LOGGING_CAPABILITY = { logging: {} } as const;

/** `logging/setLevel {level}`: stores the level on the session; legacy only. */
export function loggingMethods(): MethodEntry[] {
  return [
    {
      method: 'logging/setLevel',
      eras: ['legacy'],
      handler: async (params, ctx) => {
        const level = params['level'];
        if (!isLogLevel(level))
          throw new RpcError(
            RPC_ERROR_CODES.INVALID_PARAMS,
            `level must be one of ${LOG_LEVELS.join(', ')}`,
            { field: 'level' },
          );
        ctx.session?.setLogLevel(level);
        return {};
      },
    },
  ];
}

/** The prefixes `log.info|warn|error` put before a line, and the levels they stand for. */
const PREFIXES: readonly (readonly [string, LogLevel])[] = [
  ['[INFO] ', 'info'],
  ['[WARN] ', 'warning'],
  ['[ERROR] ', 'error'],
];

/** A run's output line as a log entry: its level and its text without the level prefix. */
export function outputEntry(line: string): { level: LogLevel; text: string } {
  for (const [prefix, level] of PREFIXES) {
    if (line.startsWith(prefix)) return { level, text: line.slice(prefix.length) };
  }
  return { level: 'info', text: line };
}

/**
 * Forwards one (already redacted) output line of `workflow`'s run to the client as
 * `notifications/message {level, logger: workflow, data: text}`, when it asked for logs.
 */
export function forwardOutput(log: LogReporter | undefined, workflow: string, line: string): void {
  if (log === undefined) return;
  const { level, text } = outputEntry(line);
  log(level, text, workflow);
}

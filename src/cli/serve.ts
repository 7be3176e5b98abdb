/**
 * `mhl serve mcp [DIR]`: loads every workflow under DIR once, then serves them over MCP on
 * stdio (stdout carries only protocol lines; logs are JSON lines on stderr). EOF on stdin,
 * SIGINT and SIGTERM all enter one shutdown path: in-flight calls are cancelled, and the process
 * exits 0 once they have answered, or 1 (`MCP_SHUTDOWN_TIMEOUT`) after a 5 s budget.
 */
import { resolve } from 'node:path';
import { loadCatalog } from '../catalog/index.js';
import { formatDiagnostic, sourceExcerpt } from '../lang/index.js';
import { createLogger } from '../log/logger.js';
import { Dispatcher, parseErrorResponse, Session } from '../protocol/index.js';
import { childEnvironment } from '../runtime/child-env.js';
import { registerPipelineSurface } from '../surfaces/pipelines.js';
import { StdioTransport } from '../transport/stdio.js';
import { displayPath } from './files.js';
import type { Output } from './lint.js';

export interface ServeOptions {
  readonly transport?: string;
  readonly http?: boolean;
  readonly defaultTimeoutMs: string;
}

/** Shutdown gets this long to let cancelled calls answer. */
const SHUTDOWN_BUDGET_MS = 5000;

export async function runServe(
  dir: string | undefined,
  options: ServeOptions,
  io: Output,
  version: string,
): Promise<number> {
  if (options.http || (options.transport !== undefined && options.transport !== 'stdio')) {
    io.err(
      'mhl serve mcp: only the stdio transport is available in this build; run without --http',
    );
    return 2;
  }
  const timeout = Number(options.defaultTimeoutMs);
  if (!Number.isInteger(timeout) || timeout < 1) {
    io.err('mhl serve mcp: --default-timeout-ms takes a positive whole number of milliseconds');
    return 2;
  }
  const root = resolve(dir ?? '.');
  const loaded = loadCatalog(root);
  if (!loaded.ok) {
    for (const p of loaded.problems) {
      if (p.diagnostic) {
        io.err(formatDiagnostic(p.diagnostic, displayPath(p.diagnostic.span.file)));
        const text = loaded.texts.get(p.diagnostic.span.file);
        if (text !== undefined) io.err(sourceExcerpt(text, p.diagnostic.span));
      } else {
        io.err(`mhl serve mcp: ${p.message}`);
      }
    }
    return 1;
  }
  const logger = createLogger();
  const dispatcher = new Dispatcher({
    serverInfo: { name: 'mhl', version },
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
    },
    onError: (error, site) => logger.error({ err: error, method: site.method }, 'internal error'),
  });
  registerPipelineSurface(dispatcher, {
    catalog: loaded.catalog,
    logger,
    defaultTimeoutMs: timeout,
    defaultCwd: process.cwd(),
    requireCwd: false,
    childEnv: childEnvironment((process.env['MHL_PASS_ENV'] ?? '').split(',').filter(Boolean)),
    env: process.env,
  });
  const session = new Session();
  const transport: StdioTransport = new StdioTransport({
    input: process.stdin,
    output: process.stdout,
    handle: async (line) => {
      const answer = await dispatcher.handleText(line, {
        session,
        send: (n) => transport.send(JSON.stringify(n)),
      });
      return answer === undefined ? undefined : JSON.stringify(answer);
    },
    tooLong: () => JSON.stringify(parseErrorResponse()),
    onError: (error) => logger.error({ err: error }, 'stdio handler failed'),
  });
  logger.info({ workflows: [...loaded.catalog.workflows.keys()], root }, 'serving over stdio');
  const stop = () => {
    process.stdin.destroy();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const reading = transport.run();
  const ended = await Promise.race([
    reading.then(() => 'drained' as const),
    new Promise<'input-closed'>((done) => process.stdin.once('close', () => done('input-closed'))),
  ]);
  // One shutdown path: cancel what runs, then give it the budget to answer.
  dispatcher.closeAll('shutting down');
  if (ended !== 'drained') {
    const timer = new Promise<'timeout'>((done) =>
      setTimeout(() => done('timeout'), SHUTDOWN_BUDGET_MS).unref(),
    );
    if ((await Promise.race([reading.then(() => 'drained' as const), timer])) === 'timeout') {
      logger.error(
        { code: 'MCP_SHUTDOWN_TIMEOUT' },
        'in-flight calls did not finish within the shutdown budget',
      );
      return 1;
    }
  }
  transport.close();
  return 0;
}

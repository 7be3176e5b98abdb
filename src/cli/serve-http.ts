/**
 * The HTTP half of `mhl serve mcp --http`, loaded only when serving HTTP: async runs (their
 * state directory, registry and surface) and the Streamable HTTP transport with its ops
 * endpoints, guards and two-phase shutdown (drain, then cancel and close within the budget).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log/logger.js';
import type { Dispatcher } from '../protocol/index.js';
import type { Admission } from '../runs/admission.js';
import type { RunRegistry } from '../runs/registry.js';
import type { PipelineSurfaceOptions } from '../surfaces/pipelines.js';
import type { ResourceProvider } from '../surfaces/resources.js';
import type { ToolTable } from '../surfaces/tools.js';
import { isLoopback } from '../transport/guards.js';
import { HttpTransport } from '../transport/http.js';
import type { Metrics } from '../transport/metrics.js';
import { createOps } from '../transport/ops.js';
import { type Lifecycle, type Served, withinBudget } from './serve-lifecycle.js';
import { setupRuns } from './serve-runs.js';

/** Where and how the HTTP transport listens, after flags and environment are merged. */
export interface HttpConfig {
  readonly host: string;
  readonly port: number;
  readonly token: string | undefined;
  readonly principalHeader: string | undefined;
  /** `--drain-timeout`: how long working async runs may finish at shutdown. */
  readonly drainMs: number;
  /** `MHL_SERVE_TERMINAL_RUN_TTL`: how long a finished run stays pollable. */
  readonly terminalRunTtlMs: number | undefined;
}

/** What the HTTP half needs from the shared set-up. */
export interface HttpParts {
  readonly dispatcher: Dispatcher;
  readonly tools: ToolTable;
  readonly admission: Admission;
  readonly logger: Logger;
  readonly lifecycle: Lifecycle;
  readonly metrics: Metrics;
  readonly pipelines: PipelineSurfaceOptions;
  /** `--state-dir` merged with `MHL_SERVE_STATE_DIR`; undefined for a temporary one. */
  readonly stateDir: string | undefined;
  /** Told each run whose view or log changed (resource subscriptions). */
  readonly onRunChange?: (runId: string) => void;
}

/**
 * Sets up async runs (their tools and methods join `parts.tools` and the dispatcher, their
 * shutdown joins the lifecycle) and returns their resources and the function that serves.
 */
export function prepareHttp(
  http: HttpConfig,
  parts: HttpParts,
): { resources: ResourceProvider; serve: (served: Served) => Promise<number> } {
  const runs = setupRuns(parts.dispatcher, parts.tools, {
    stateDir: parts.stateDir,
    terminalTtlMs: http.terminalRunTtlMs,
    catalog: parts.pipelines.catalog,
    admission: parts.admission,
    logger: parts.logger,
    pipelines: parts.pipelines,
    ...(parts.onRunChange ? { onChange: parts.onRunChange } : {}),
  });
  registerRunMetrics(parts.metrics, runs.registry, parts.admission);
  parts.lifecycle.drain.push(() => runs.registry.drain(http.drainMs));
  parts.lifecycle.cancel.push(() => runs.registry.cancelAll());
  return {
    resources: runs.resources,
    serve: async (served) => {
      try {
        return await runHttp(http, served);
      } finally {
        runs.close();
      }
    },
  };
}

function registerRunMetrics(metrics: Metrics, registry: RunRegistry, admission: Admission): void {
  metrics.register({
    name: 'mhl_runs_active',
    type: 'gauge',
    help: 'Async runs working now.',
    read: () => registry.counts.working,
  });
  metrics.register({
    name: 'mhl_runs_queued',
    type: 'gauge',
    help: 'Async runs waiting for an execution slot.',
    read: () => registry.counts.queued,
  });
  metrics.register({
    name: 'mhl_runs_total',
    type: 'counter',
    help: 'Async run legs ended, by the state they ended in.',
    label: 'outcome',
    read: () => registry.ended,
  });
  metrics.register({
    name: 'mhl_execution_slots_active',
    type: 'gauge',
    help: 'Execution slots held (direct calls, jobs and runs; --max-active bounds them).',
    read: () => admission.active,
  });
}

async function runHttp(http: HttpConfig, served: Served): Promise<number> {
  const { dispatcher, logger, io } = served;
  // Draining: not ready, no new work admitted, but runs can still be polled while they finish.
  let stopping = false;
  // Closing: the transport refuses every request.
  let closing = false;
  let requestStop = () => {};
  const stopRequested = new Promise<void>((done) => {
    requestStop = done;
  });
  const transport: HttpTransport = new HttpTransport({
    ...http,
    dispatcher,
    metrics: served.metrics,
    ops: createOps({
      version: served.version,
      pid: process.pid,
      instanceId: randomUUID(),
      shuttingDown: () => stopping,
      requestShutdown: () => requestStop(),
      metrics: (): string => served.metrics.render(transport.sessionsActive),
    }),
    shuttingDown: () => closing,
    onError: (error) => logger.error({ err: error }, 'http handler failed'),
  });
  // Handlers go in before the server says it is listening: a SIGTERM that arrived in between
  // would otherwise kill the process outright (Node's default), skipping the shutdown path.
  const onSignal = () => requestStop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await serveUntilStopped();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  async function serveUntilStopped(): Promise<number> {
    let bound: { address: string; port: number };
    try {
      bound = await transport.listen();
    } catch (error) {
      logger.error({ err: error, code: 'MCP_SERVER_FAILED' }, 'could not listen');
      io.err(`mhl serve mcp: MCP_SERVER_FAILED: cannot listen on ${http.host}:${http.port}`);
      return 1;
    }
    if (!isLoopback(http.host) && http.token === undefined) {
      io.err('mhl serve mcp: warning: non-loopback address without --token; unauthenticated');
    }
    const url = `http://${bound.address.includes(':') ? `[${bound.address}]` : bound.address}`;
    logger.info({ workflows: served.workflows, root: served.root }, 'serving over http');
    io.err(`listening on ${url}:${bound.port}`);
    await stopRequested;
    stopping = true;
    logger.info({ drain_ms: http.drainMs }, 'shutting down');
    return await drainHttp(transport, served, () => {
      closing = true;
    });
  }
}

/**
 * The HTTP shutdown path: close admission and let async runs drain (`--drain-timeout`), then
 * cancel what still runs and close the server, all within one budget.
 */
async function drainHttp(
  transport: HttpTransport,
  served: Served,
  close: () => void,
): Promise<number> {
  const { dispatcher, logger, lifecycle } = served;
  for (const drain of lifecycle.drain) await drain();
  close();
  dispatcher.closeAll('shutting down');
  const closed = Promise.all([transport.close(), ...lifecycle.cancel.map((cancel) => cancel())]);
  if ((await withinBudget(closed)) === 'timeout') {
    logger.error({ code: 'MCP_SHUTDOWN_TIMEOUT' }, 'work did not stop within the shutdown budget');
    transport.destroy();
    return 1;
  }
  return 0;
}

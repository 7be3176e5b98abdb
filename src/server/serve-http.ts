/**
 * Serves an `MhlServer` over Streamable HTTP (loaded only when serving HTTP): the route table,
 * the listener, and the two-phase shutdown that SIGINT, SIGTERM and an accepted
 * `POST /control/shutdown` enter alike: not ready and no new work at once, async runs may
 * finish for `--drain-timeout` while clients still poll them, then every request and all work
 * is cancelled and the listener closed within the 5 s budget. Exit status 0, 1 on a bind
 * failure (`MCP_SERVER_FAILED`) or an expired budget (`MCP_SHUTDOWN_TIMEOUT`).
 */
import { BodyBudget, type BodyLimits } from '../transport/body.js';
import { HttpTransport } from '../transport/http.js';
import { isLoopback, SESSION_IDLE_TTL_MS } from '../transport/index.js';
import { McpEndpoint } from '../transport/mcp-endpoint.js';
import type { HttpConfig } from './config.js';
import type { MhlServer } from './create-server.js';
import { withinBudget } from './lifecycle.js';
import { registerProcessMetrics } from './process-metrics.js';
import { httpRoutes } from './routes.js';

/** Where start-up messages for a person go (stderr). */
export interface Console {
  err(line: string): void;
}

/** Serves until shutdown is requested; resolves to the exit status. */
export async function serveHttp(server: MhlServer, io: Console): Promise<number> {
  const http = server.config.http as HttpConfig;
  const { logger } = server;
  // Draining: not ready, no new work admitted, but runs can still be polled while they finish.
  let stopping = false;
  // Closing: MCP requests are refused.
  let closing = false;
  let requestStop = () => {};
  const stopRequested = new Promise<void>((done) => {
    requestStop = done;
  });
  // One budget for every body the server reads, whichever route reads it.
  const body: BodyLimits = server.body ?? {
    timeoutMs: http.bodyTimeoutMs,
    budget: new BodyBudget(http.bodyBufferBytes),
  };
  const mcp = new McpEndpoint({
    dispatcher: server.dispatcher,
    principalHeader: http.token === undefined ? undefined : http.principalHeader,
    metrics: server.metrics,
    shuttingDown: () => closing,
    sessions: {
      max: http.maxSessions,
      maxPerClient: http.maxSessionsPerClient,
      ...(http.sessionIdleTtlMs !== undefined ? { ttlMs: http.sessionIdleTtlMs } : {}),
      busy: server.sessionBusy,
      keeps: server.sessionKeeps,
    },
    body,
    directory: server.sessionDirectory,
  });
  // Housekeeping of the shared session records: every minute, those idle past the TTL.
  const directory = server.sessionDirectory;
  const idleTtl = http.sessionIdleTtlMs ?? SESSION_IDLE_TTL_MS;
  const reaper =
    directory &&
    setInterval(() => {
      directory
        .sweep(idleTtl)
        .then((n) => n > 0 && server.logger.info({ sessions: n }, 'idle shared sessions reaped'))
        .catch((error: unknown) => server.logger.warn({ err: error }, 'session reaping failed'));
    }, 60_000);
  reaper?.unref();
  const transport = new HttpTransport({
    host: http.host,
    port: http.port,
    ...(http.publicUrl !== undefined ? { ownNames: [new URL(http.publicUrl).hostname] } : {}),
    token: http.token,
    limits: http,
    routes: httpRoutes({
      mcp: server.config.serve === 'mcp' ? mcp : undefined,
      surfaces: server.routes,
      ops: {
        version: server.version,
        pid: process.pid,
        instanceId: server.instanceId,
        configurationId: http.configurationId ?? null,
        shuttingDown: () => stopping,
        requestShutdown: () => requestStop(),
        metrics: () => server.metrics.render(mcp.sessionsActive),
        body,
      },
    }),
    shuttingDown: () => closing,
    onError: (error) => logger.error({ err: error }, 'http handler failed'),
  });
  registerConnectionMetrics(server, transport, body);
  // Handlers go in before the server says it is listening: a SIGTERM that arrived in between
  // would otherwise kill the process outright (Node's default), skipping the shutdown path.
  const onSignal = () => requestStop();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stopProcessMetrics = registerProcessMetrics(server.metrics);
  try {
    let bound: { address: string; port: number };
    try {
      bound = await transport.listen();
    } catch (error) {
      logger.error({ err: error, code: 'MCP_SERVER_FAILED' }, 'could not listen');
      io.err(
        `mhl serve ${server.config.serve}: MCP_SERVER_FAILED: cannot listen on ${http.host}:${http.port}`,
      );
      return 1;
    }
    mcp.start();
    server.start();
    if (!isLoopback(http.host) && http.token === undefined) {
      io.err(
        `mhl serve ${server.config.serve}: warning: non-loopback address without --token; unauthenticated`,
      );
    }
    const url = `http://${bound.address.includes(':') ? `[${bound.address}]` : bound.address}`;
    logger.info(
      { profile: server.config.profile, workflows: server.workflows, root: server.config.root },
      'serving over http',
    );
    io.err(`listening on ${url}:${bound.port}`);
    await stopRequested;
    stopping = true;
    logger.info({ drain_ms: server.config.drainMs }, 'shutting down');
    await server.drain();
    closing = true;
    mcp.close();
    clearInterval(reaper);
    const closed = Promise.all([transport.close(), server.stop()]);
    if ((await withinBudget(closed)) === 'timeout') {
      logger.error(
        { code: 'MCP_SHUTDOWN_TIMEOUT' },
        'work did not stop within the shutdown budget',
      );
      transport.destroy();
      return 1;
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stopProcessMetrics();
    server.close();
  }
}

/** The connection and body-buffer gauges of `/metrics` (docs/serve.md, "Slow clients"). */
function registerConnectionMetrics(server: MhlServer, transport: HttpTransport, body: BodyLimits) {
  server.metrics.register({
    name: 'mhl_http_connections_open',
    type: 'gauge',
    help: 'HTTP connections open.',
    read: () => transport.stats().open,
  });
  server.metrics.register({
    name: 'mhl_http_connections_refused_total',
    type: 'counter',
    help: 'HTTP connections closed on arrival by a connection cap.',
    label: 'cap',
    read: () => transport.stats().refused,
  });
  server.metrics.register({
    name: 'mhl_http_body_buffer_bytes',
    type: 'gauge',
    help: 'Bytes of request bodies held in memory, of the --body-buffer-mib budget.',
    read: () => body.budget.used,
  });
  server.metrics.register({
    name: 'mhl_http_bodies_shed_total',
    type: 'counter',
    help: 'Stalled request bodies ended (408) to make room in the budget for arriving ones.',
    read: () => body.budget.shed,
  });
}

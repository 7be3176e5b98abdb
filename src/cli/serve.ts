/**
 * `mhl serve mcp [DIR]`: loads every workflow under DIR once, then serves them over MCP on
 * stdio (stdout carries only protocol lines; logs are JSON lines on stderr) or, with `--http`,
 * over Streamable HTTP. On stdio, EOF, SIGINT and SIGTERM enter one shutdown path; over HTTP,
 * SIGINT, SIGTERM and an accepted `POST /control/shutdown` do. Either way admission closes
 * (over HTTP, async runs may first finish for `--drain-timeout`), in-flight work is cancelled,
 * and the process exits 0 once it has stopped, or 1 (`MCP_SHUTDOWN_TIMEOUT`) after a 5 s
 * budget. An HTTP bind failure exits 1 with `MCP_SERVER_FAILED`.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadCatalog } from '../catalog/index.js';
import { createLogger } from '../log/logger.js';
import { Dispatcher, parseErrorResponse, Session } from '../protocol/index.js';
import { Admission } from '../runs/admission.js';
import { JobRegistry } from '../runs/jobs.js';
import { childEnvironment } from '../runtime/child-env.js';
import {
  COMPLETIONS_CAPABILITY,
  completionMethods,
  workflowTemplates,
} from '../surfaces/completion.js';
import { jobTools, logJobEvents, reservedNameProblem } from '../surfaces/jobs.js';
import { LOGGING_CAPABILITY, loggingMethods } from '../surfaces/logging.js';
import { registerMethods } from '../surfaces/methods.js';
import { workflowResources, workflowTools } from '../surfaces/pipelines.js';
import { PROMPTS_CAPABILITY, promptMethods } from '../surfaces/prompts.js';
import { registerResourceMethods } from '../surfaces/resources.js';
import { Subscriptions } from '../surfaces/subscriptions.js';
import { registerToolMethods, ToolTable } from '../surfaces/tools.js';
import { Metrics } from '../transport/metrics.js';
import { StdioTransport } from '../transport/stdio.js';
import { reportCatalogProblems } from './files.js';
import type { Output } from './lint.js';
import type { HttpConfig } from './serve-http.js';
import { type Lifecycle, type Served, withinBudget } from './serve-lifecycle.js';
import { loadServedPack, takeServeKey } from './serve-pack.js';

export interface ServeOptions {
  readonly transport?: string;
  readonly http?: boolean;
  readonly addr?: string;
  readonly port?: string;
  readonly token?: string;
  readonly principalHeader?: string;
  /** HTTP only: serve the workflows from this DMPK pack (key in MHL_SERVE_WORKFLOWS_KEY). */
  readonly workflowsPack?: string;
  readonly json?: boolean;
  /** Working directory for calls without `context.cwd`; default the process's own. */
  readonly cwd?: string;
  /** Refuse calls without an absolute `context.cwd` (and say so in every schema). */
  readonly requireCwd?: boolean;
  readonly defaultTimeoutMs: string;
  readonly maxActive?: string;
  readonly maxQueued?: string;
  readonly stateDir?: string;
  readonly drainTimeout?: string;
}

/** A refused configuration: the message and the exit status (2 usage, 1 invalid setup). */
interface ConfigError {
  readonly message: string;
  readonly exit: number;
}

const DEFAULT_HTTP_HOST = '127.0.0.1';
const DEFAULT_HTTP_PORT = 8787;
const HTTP_ONLY_FLAGS = [
  'addr',
  'port',
  'token',
  'principalHeader',
  'workflowsPack',
  'stateDir',
  'drainTimeout',
] as const;

const DEFAULT_MAX_ACTIVE = 32;
const MAX_MAX_ACTIVE = 4096;

/**
 * Runs `mhl serve mcp`; resolves to the exit status: 0 after a clean shutdown, 1 for a folder
 * that does not load, invalid setup (`--principal-header` without a token), a bind failure
 * (`MCP_SERVER_FAILED`) or an expired shutdown budget (`MCP_SHUTDOWN_TIMEOUT`), 2 for bad flags.
 */
export async function runServe(
  dir: string | undefined,
  options: ServeOptions,
  io: Output,
  version: string,
): Promise<number> {
  // First, before any child or workflow can run: no one after this point sees the key.
  const packKey = takeServeKey();
  const config = readTransport(options, process.env);
  if ('exit' in config) {
    io.err(`mhl serve mcp: ${config.message}`);
    return config.exit;
  }
  const timeout = Number(options.defaultTimeoutMs);
  if (!Number.isInteger(timeout) || timeout < 1) {
    io.err('mhl serve mcp: --default-timeout-ms takes a positive whole number of milliseconds');
    return 2;
  }
  if (options.maxQueued !== undefined) {
    io.err('mhl serve mcp: --max-queued was removed: there is no queue; use --max-active');
    return 2;
  }
  const maxActive = Number(options.maxActive ?? DEFAULT_MAX_ACTIVE);
  if (!Number.isInteger(maxActive) || maxActive < 1 || maxActive > MAX_MAX_ACTIVE) {
    io.err(`mhl serve mcp: --max-active takes a whole number from 1 to ${MAX_MAX_ACTIVE}`);
    return 2;
  }
  const defaultCwd = resolve(options.cwd ?? '.');
  if (!isDirectory(defaultCwd)) {
    io.err(`mhl serve mcp: --cwd ${options.cwd ?? '.'} is not a directory`);
    return 2;
  }
  const root = resolve(dir ?? '.');
  const loaded =
    options.workflowsPack === undefined
      ? loadCatalog(root)
      : loadServedPack(options.workflowsPack, root, packKey);
  if (!loaded.ok) {
    reportCatalogProblems(loaded, io, 'mhl serve mcp');
    return 1;
  }
  const logger = createLogger();
  const dispatcher = new Dispatcher({
    serverInfo: { name: 'mhl', version },
    capabilities: {
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      ...PROMPTS_CAPABILITY,
      ...COMPLETIONS_CAPABILITY,
    },
    // logging/setLevel and resources/subscribe exist in the 2025 revisions only.
    legacyCapabilities: {
      ...LOGGING_CAPABILITY,
      resources: { subscribe: true, listChanged: false },
    },
    onError: (error, site) => logger.error({ err: error, method: site.method }, 'internal error'),
  });
  const metrics = new Metrics();
  const admission = new Admission(maxActive);
  const tools = new ToolTable();
  const pipelineOptions = {
    catalog: loaded.catalog,
    logger,
    defaultTimeoutMs: timeout,
    defaultCwd,
    requireCwd: options.requireCwd === true,
    childEnv: childEnvironment((process.env['MHL_PASS_ENV'] ?? '').split(',').filter(Boolean)),
    env: process.env,
  };
  for (const tool of workflowTools(pipelineOptions)) tools.add(tool);
  const reserved = reservedNameProblem(tools.names());
  if (reserved !== undefined) {
    io.err(`mhl serve mcp: ${reserved}`);
    return 1;
  }
  const jobs = new JobRegistry({ admission, onEvent: logJobEvents(logger) });
  for (const tool of jobTools({ tools, jobs })) tools.add(tool);
  // Shutdown runs these in order: `drain` before the budget (bounded by --drain-timeout),
  // `cancel` within it, beside closing the transport.
  const lifecycle: Lifecycle = { drain: [async () => admission.close()], cancel: [] };
  lifecycle.cancel.push(() => {
    jobs.cancelAll('the server is shutting down');
    return jobs.drained();
  });
  const resources = [workflowResources(loaded.catalog), workflowTemplates(loaded.catalog)];
  const subscriptions = new Subscriptions(dispatcher, resources);
  // HTTP-only parts (async runs, the HTTP transport) load only when serving HTTP.
  const http =
    config.http === undefined
      ? undefined
      : (await import('./serve-http.js')).prepareHttp(config.http, {
          dispatcher,
          tools,
          admission,
          logger,
          lifecycle,
          metrics,
          pipelines: pipelineOptions,
          stateDir: nonEmpty(options.stateDir) ?? nonEmpty(process.env['MHL_SERVE_STATE_DIR']),
          onRunChange: (runId) => subscriptions.runChanged(runId),
        });
  if (http) resources.push(http.resources);
  registerToolMethods(dispatcher, tools, {
    admission,
    onCall: (outcome) => metrics.toolCall(outcome),
  });
  registerResourceMethods(dispatcher, resources);
  registerMethods(dispatcher, [
    ...promptMethods({ ...pipelineOptions, timeoutMs: timeout }),
    ...completionMethods(loaded.catalog, resources),
    ...loggingMethods(),
    ...subscriptions.methods(),
  ]);
  lifecycle.cancel.push(async () => subscriptions.close());
  const workflows = [...loaded.catalog.workflows.keys()];
  const served = { dispatcher, logger, io, version, workflows, root, metrics, lifecycle };
  if (http) return http.serve(served);
  return runStdio(served);
}

/**
 * Merges the transport flags with `MHL_SERVE_TOKEN` / `MHL_SERVE_PRINCIPAL_HEADER` (flags win).
 * Returns `{http: undefined}` for stdio.
 */
function readTransport(
  options: ServeOptions,
  env: Readonly<Record<string, string | undefined>>,
): { http: HttpConfig | undefined } | ConfigError {
  if (options.json) {
    return { message: '--json is not supported: logs are already JSON lines on stderr', exit: 2 };
  }
  if (options.http && options.transport === 'stdio') {
    return { message: '--http and --transport stdio contradict each other', exit: 2 };
  }
  if (!options.http && options.transport !== 'http') {
    const flag = HTTP_ONLY_FLAGS.find((name) => options[name] !== undefined);
    if (flag === undefined) return { http: undefined };
    const spelled = flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    return { message: `--${spelled} is only valid with --http (or --transport http)`, exit: 2 };
  }
  const port = Number(options.port ?? DEFAULT_HTTP_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return { message: '--port takes a whole number from 0 to 65535', exit: 2 };
  }
  const token = nonEmpty(options.token) ?? nonEmpty(env['MHL_SERVE_TOKEN']);
  const principalHeader =
    nonEmpty(options.principalHeader) ?? nonEmpty(env['MHL_SERVE_PRINCIPAL_HEADER']);
  if (principalHeader !== undefined && token === undefined) {
    return {
      message:
        '--principal-header needs --token (or MHL_SERVE_TOKEN): an unauthenticated caller ' +
        'could claim any identity',
      exit: 1,
    };
  }
  const host = (nonEmpty(options.addr) ?? DEFAULT_HTTP_HOST).replace(/^\[(.*)\]$/, '$1');
  const drainMs = parseDuration(options.drainTimeout ?? '0');
  if (drainMs === undefined) {
    return { message: '--drain-timeout takes a duration such as 30s, 2m or 500ms', exit: 2 };
  }
  const ttlText = nonEmpty(env['MHL_SERVE_TERMINAL_RUN_TTL']);
  const terminalRunTtlMs = ttlText === undefined ? undefined : parseDuration(ttlText);
  if (ttlText !== undefined && (terminalRunTtlMs === undefined || terminalRunTtlMs === 0)) {
    return { message: 'MHL_SERVE_TERMINAL_RUN_TTL takes a duration such as 1h or 90s', exit: 2 };
  }
  return { http: { host, port, token, principalHeader, drainMs, terminalRunTtlMs } };
}

/** Milliseconds of `500ms`, `30s`, `2m`, `1h` (or a bare `0`); undefined when malformed. */
function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h)?$/.exec(text.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2];
  if (unit === undefined) return amount === 0 ? 0 : undefined;
  return amount * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: not a directory we can run in.
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

async function runStdio(served: Served): Promise<number> {
  const { dispatcher, logger } = served;
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
  // The one connection also carries what the server says outside requests (resource updates).
  dispatcher.openChannel(session, (n) => transport.send(JSON.stringify(n)));
  const stop = () => {
    process.stdin.destroy();
  };
  // Before the ready line, so no signal can arrive while Node's default (kill) still applies.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  logger.info({ workflows: served.workflows, root: served.root }, 'serving over stdio');
  const reading = transport.run();
  await Promise.race([
    reading,
    new Promise<void>((done) => process.stdin.once('close', () => done())),
  ]);
  // One shutdown path: close admission, cancel what runs, then give it the budget to answer.
  for (const drain of served.lifecycle.drain) await drain();
  dispatcher.closeAll('shutting down');
  const cancelled = Promise.all(served.lifecycle.cancel.map((cancel) => cancel()));
  if ((await withinBudget(Promise.all([reading, cancelled]))) === 'timeout') {
    logger.error(
      { code: 'MCP_SHUTDOWN_TIMEOUT' },
      'in-flight calls did not finish within the shutdown budget',
    );
    return 1;
  }
  transport.close();
  return 0;
}

/**
 * `ServeConfig`: everything `mhl serve mcp` is configured by, read once from the command's flags
 * and the environment (flags win) and parsed with zod. Nothing else in the server reads
 * `process.env` or flags; the parts are handed what they need from this object.
 *
 * Not here: the DMPK pack key (`MHL_SERVE_WORKFLOWS_KEY`), which is taken out of the
 * environment before anything else runs and never stored in a configuration object.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod/mini';
import {
  DEFAULT_QUEUED_PER_CALLER,
  DEFAULT_RUNS_PER_CALLER,
  MAX_QUEUED_RUNS,
  MAX_RUNS,
} from '../runs/index.js';
import { MAX_SESSIONS, MAX_SESSIONS_PER_CLIENT } from '../transport/index.js';
import { optional, positiveInt } from './config-schema.js';
import { nonEmpty, parseDuration, Refused, wholeNumber } from './config-values.js';
import { MAX_DEADLINE_MS, readPublicUrl, readSlowClientLimits } from './http-limits.js';
import { REPLICA_FIELDS, readReplicas } from './replica-config.js';

export { parseDuration } from './config-values.js';

import { profileFlags } from './profile-flags.js';

/** The profiles `--profile` accepts; a profile chooses the surfaces served. */
export const PROFILES = ['pipelines', 'workflow-engine', 'sessions'] as const;

const DEFAULT_HTTP_HOST = '127.0.0.1';
const DEFAULT_HTTP_PORT = 8787;
/** `mhl serve a2a`'s port, as the Go server's. */
const DEFAULT_A2A_PORT = 8710;
const DEFAULT_MAX_ACTIVE = 32;
const MAX_MAX_ACTIVE = 4096;
const DEFAULT_TIMEOUT_MS = 300_000;
/** Sessions are small (a few hundred bytes), but each may hold a stream and a socket. */
const MAX_MAX_SESSIONS = 100_000;
/** Per-caller run quotas can be raised up to the server-wide limits, never past them. */
const MAX_RUNS_PER_CALLER = MAX_RUNS;
const MAX_QUEUED_PER_CALLER = MAX_QUEUED_RUNS;
/** A managed-service configuration identity: 32 lowercase hex digits (docs/service.md). */
const CONFIGURATION_ID = /^[0-9a-f]{32}$/;

/** The HTTP listener and its guards. */
export const HttpConfigSchema = z.strictObject({
  host: z
    .string()
    .check(z.minLength(1), z.describe('the address to bind; also what Host must name')),
  port: z.int().check(z.gte(0), z.lte(65535), z.describe('the port; 0 picks a free one')),
  token: optional(z.string().check(z.minLength(1)), 'bearer token every MCP request must carry'),
  principalHeader: optional(
    z.string().check(z.minLength(1)),
    'header carrying the caller identity; honoured only with a token',
  ),
  publicUrl: optional(
    z.url(),
    'the base URL clients reach the server at (http or https, no query or fragment, no ' +
      'trailing slash); the Agent Card is built from it, and its host counts as the ' +
      "server's own origin",
  ),
  maxSessions: z.int().check(z.gte(1), z.describe('legacy sessions held at once')),
  maxSessionsPerClient: z
    .int()
    .check(
      z.gte(1),
      z.describe('legacy sessions one client (principal, else address) holds at once'),
    ),
  sessionIdleTtlMs: optional(
    positiveInt(),
    'how long an idle legacy session is kept (MHL_SERVE_SESSION_IDLE_TTL)',
  ),
  headersTimeoutMs: positiveInt("deadline for a request's headers"),
  requestTimeoutMs: positiveInt('deadline for headers and body'),
  bodyTimeoutMs: positiveInt('deadline for a body once headers are in'),
  maxConnections: positiveInt('open connections at once'),
  maxConnectionsPerAddress: positiveInt('the same, per remote address'),
  bodyBufferBytes: positiveInt('bytes of bodies held at once'),
  configurationId: optional(
    z.string().check(z.regex(CONFIGURATION_ID)),
    'the managed-service configuration identity readiness reports',
  ),
});

export type HttpConfig = z.infer<typeof HttpConfigSchema>;

export const ServeConfigSchema = z.strictObject({
  serve: z
    .enum(['mcp', 'a2a'])
    .check(z.describe('the command: serve mcp (MCP, and A2A over HTTP) or serve a2a (A2A only)')),
  profile: z.enum(PROFILES).check(z.describe('which surfaces are served')),
  root: z.string().check(z.describe('absolute path of the served folder')),
  workflowsPack: optional(z.string(), 'path of a DMPK pack to serve'),
  migrationTarget: optional(z.string(), 'the workflow-engine migration target'),
  http: optional(HttpConfigSchema, 'set for Streamable HTTP; absent for stdio'),
  cwd: z.string().check(z.describe('absolute working directory of calls without context.cwd')),
  requireCwd: z.boolean().check(z.describe('refuse calls without an absolute context.cwd')),
  defaultTimeoutMs: positiveInt('bounds every synchronous call'),
  maxActive: z.int().check(z.gte(1), z.lte(MAX_MAX_ACTIVE), z.describe('execution slots')),
  maxRunsPerCaller: z
    .int()
    .check(
      z.gte(1),
      z.lte(MAX_RUNS_PER_CALLER),
      z.describe('async runs one owner may hold, finished ones included'),
    ),
  maxQueuedPerCaller: z
    .int()
    .check(
      z.gte(1),
      z.lte(MAX_QUEUED_PER_CALLER),
      z.describe('async runs of one owner that may wait for a slot'),
    ),
  stateDir: optional(z.string(), 'where async runs are kept; else a temp dir'),
  ...REPLICA_FIELDS,
  drainMs: z.int().check(z.gte(0), z.describe('how long working runs may finish at shutdown')),
  terminalRunTtlMs: optional(positiveInt(), 'how long a finished run stays pollable'),
  a2aWaitMs: optional(
    positiveInt(),
    'how long a blocking A2A send waits for its task (MHL_SERVE_A2A_WAIT; 30 s)',
  ),
  passEnv: z
    .array(z.string())
    .check(z.describe('extra variable names children inherit (MHL_PASS_ENV)')),
  logLevel: z.string().check(z.describe('pino level (MHL_LOG_LEVEL)')),
});

/** The whole serve configuration, immutable once read. */
export type ServeConfig = Readonly<z.infer<typeof ServeConfigSchema>>;

/** The flags of `mhl serve mcp`, as commander hands them over (strings, unparsed). */
export interface ServeFlags {
  readonly transport?: string;
  readonly http?: boolean;
  readonly addr?: string;
  readonly port?: string;
  readonly token?: string;
  readonly principalHeader?: string;
  readonly publicUrl?: string;
  readonly workflowsPack?: string;
  readonly migrationTarget?: string;
  readonly json?: boolean;
  readonly cwd?: string;
  readonly requireCwd?: boolean;
  readonly defaultTimeoutMs?: string;
  readonly maxActive?: string;
  readonly maxQueued?: string;
  readonly maxRunsPerCaller?: string;
  readonly maxQueuedPerCaller?: string;
  readonly stateDir?: string;
  readonly store?: string;
  readonly singleReplica?: boolean;
  readonly drainTimeout?: string;
  readonly profile?: string;
  readonly maxSessions?: string;
  readonly maxSessionsPerClient?: string;
  readonly headersTimeout?: string;
  readonly requestTimeout?: string;
  readonly bodyTimeout?: string;
  readonly maxConnections?: string;
  readonly maxConnectionsPerAddress?: string;
  readonly bodyBufferMib?: string;
  /** Set by `mhl service` in the unit it writes; readiness reports it. */
  readonly configurationId?: string;
}

/** A refused configuration: what to print and the exit status (2 usage, 1 invalid setup). */
export interface ConfigError {
  readonly message: string;
  readonly exit: 1 | 2;
}

export type ConfigResult =
  | { readonly ok: true; readonly config: ServeConfig }
  | ({ readonly ok: false } & ConfigError);

type Env = Readonly<Record<string, string | undefined>>;

const HTTP_ONLY_FLAGS = [
  'addr',
  'port',
  'token',
  'principalHeader',
  'publicUrl',
  'workflowsPack',
  'maxSessions',
  'maxSessionsPerClient',
  'headersTimeout',
  'requestTimeout',
  'bodyTimeout',
  'maxConnections',
  'maxConnectionsPerAddress',
  'bodyBufferMib',
  'configurationId',
] as const;

/**
 * Reads the configuration from `flags`, `dir` and `env` (flags win over `MHL_SERVE_*`). Never
 * throws: every refusal names the flag or variable and says what it takes.
 */
export function readServeConfig(
  dir: string | undefined,
  flags: ServeFlags,
  env: Env,
  command: 'mcp' | 'a2a' = 'mcp',
): ConfigResult {
  try {
    // `serve a2a` is HTTP only, on its own default port.
    const given: ServeFlags =
      command === 'a2a' ? { ...flags, http: true, transport: 'http' } : flags;
    const assembled = assemble(dir, given, env, command === 'a2a' ? DEFAULT_A2A_PORT : undefined);
    return {
      ok: true,
      // Parsed once per process: zod's compiled fast path (a `new Function` per object schema,
      // which V8's code cache cannot hold) would cost more to build than this one parse.
      config: ServeConfigSchema.parse(
        { serve: command, ...(assembled as object) },
        { jitless: true },
      ),
    };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, message: error.message, exit: error.exit };
    if (error instanceof z.core.$ZodError) {
      // Every flag was checked while assembling: what is left is a value the setup cannot use.
      const issue = error.issues[0];
      return { ok: false, message: `invalid ${issue?.path.join('.')}: ${issue?.message}`, exit: 1 };
    }
    throw error;
  }
}

function assemble(
  dir: string | undefined,
  flags: ServeFlags,
  env: Env,
  defaultPort?: number,
): unknown {
  if (flags.json)
    throw new Refused('--json is not supported: logs are already JSON lines on stderr');
  if (flags.maxQueued !== undefined) {
    throw new Refused('--max-queued was removed: there is no queue; use --max-active');
  }
  const http = readHttp(flags, env, defaultPort ?? DEFAULT_HTTP_PORT);
  const cwd = resolve(flags.cwd ?? '.');
  if (!isDirectory(cwd)) throw new Refused(`--cwd ${flags.cwd ?? '.'} is not a directory`);
  const drainMs = parseDuration(flags.drainTimeout ?? '0');
  if (drainMs === undefined) {
    throw new Refused('--drain-timeout takes a duration such as 30s, 2m or 500ms');
  }
  const ttlText = nonEmpty(env['MHL_SERVE_TERMINAL_RUN_TTL']);
  const terminalRunTtlMs = ttlText === undefined ? undefined : parseDuration(ttlText);
  if (ttlText !== undefined && (terminalRunTtlMs === undefined || terminalRunTtlMs === 0)) {
    throw new Refused('MHL_SERVE_TERMINAL_RUN_TTL takes a duration such as 1h or 90s');
  }
  const waitText = nonEmpty(env['MHL_SERVE_A2A_WAIT']);
  const a2aWaitMs = waitText === undefined ? undefined : parseDuration(waitText);
  if (
    waitText !== undefined &&
    (a2aWaitMs === undefined || a2aWaitMs === 0 || a2aWaitMs > MAX_DEADLINE_MS)
  ) {
    throw new Refused('MHL_SERVE_A2A_WAIT takes a duration from 1ms to 1h, such as 30s');
  }
  const stateDir = nonEmpty(flags.stateDir) ?? nonEmpty(env['MHL_SERVE_STATE_DIR']);
  const replicas = readReplicas(flags, env, (message) => new Refused(message));
  const profile = flags.profile ?? 'pipelines';
  if (!(PROFILES as readonly string[]).includes(profile)) {
    throw new Refused(`--profile takes one of: ${PROFILES.join(', ')}`);
  }
  const own = profileFlags(flags, profile);
  if (!own.ok) throw new Refused(own.problem);
  return {
    profile,
    root: resolve(dir ?? '.'),
    ...own.values,
    ...(flags.workflowsPack !== undefined ? { workflowsPack: flags.workflowsPack } : {}),
    ...(http !== undefined ? { http } : {}),
    cwd,
    requireCwd: flags.requireCwd === true,
    defaultTimeoutMs: wholeNumber(
      flags.defaultTimeoutMs,
      DEFAULT_TIMEOUT_MS,
      1,
      Number.MAX_SAFE_INTEGER,
      '--default-timeout-ms takes a positive whole number of milliseconds',
    ),
    maxActive: wholeNumber(
      flags.maxActive,
      DEFAULT_MAX_ACTIVE,
      1,
      MAX_MAX_ACTIVE,
      `--max-active takes a whole number from 1 to ${MAX_MAX_ACTIVE}`,
    ),
    maxRunsPerCaller: wholeNumber(
      flags.maxRunsPerCaller,
      DEFAULT_RUNS_PER_CALLER,
      1,
      MAX_RUNS_PER_CALLER,
      `--max-runs-per-caller takes a whole number from 1 to ${MAX_RUNS_PER_CALLER}`,
    ),
    maxQueuedPerCaller: wholeNumber(
      flags.maxQueuedPerCaller,
      DEFAULT_QUEUED_PER_CALLER,
      1,
      MAX_QUEUED_PER_CALLER,
      `--max-queued-per-caller takes a whole number from 1 to ${MAX_QUEUED_PER_CALLER}`,
    ),
    ...(stateDir !== undefined ? { stateDir: resolve(stateDir) } : {}),
    ...replicas,
    drainMs,
    ...(terminalRunTtlMs !== undefined ? { terminalRunTtlMs } : {}),
    ...(a2aWaitMs !== undefined ? { a2aWaitMs } : {}),
    passEnv: (env['MHL_PASS_ENV'] ?? '').split(',').filter(Boolean),
    logLevel: nonEmpty(env['MHL_LOG_LEVEL']) ?? 'info',
  };
}

/** The HTTP part, or undefined for stdio; HTTP-only flags without HTTP are refused. */
function readHttp(flags: ServeFlags, env: Env, defaultPort: number): HttpConfig | undefined {
  if (flags.http && flags.transport === 'stdio') {
    throw new Refused('--http and --transport stdio contradict each other');
  }
  if (!flags.http && flags.transport !== 'http') {
    const flag = HTTP_ONLY_FLAGS.find((name) => flags[name] !== undefined);
    if (flag === undefined) return undefined;
    const spelled = flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    throw new Refused(`--${spelled} is only valid with --http (or --transport http)`);
  }
  const port = wholeNumber(
    flags.port,
    defaultPort,
    0,
    65535,
    '--port takes a whole number from 0 to 65535',
  );
  const token = nonEmpty(flags.token) ?? nonEmpty(env['MHL_SERVE_TOKEN']);
  const principalHeader =
    nonEmpty(flags.principalHeader) ?? nonEmpty(env['MHL_SERVE_PRINCIPAL_HEADER']);
  if (principalHeader !== undefined && token === undefined) {
    throw new Refused(
      '--principal-header needs --token (or MHL_SERVE_TOKEN): an unauthenticated caller ' +
        'could claim any identity',
      1,
    );
  }
  const host = (nonEmpty(flags.addr) ?? DEFAULT_HTTP_HOST).replace(/^\[(.*)\]$/, '$1');
  const publicUrl = readPublicUrl(
    nonEmpty(flags.publicUrl) ?? nonEmpty(env['MHL_SERVE_PUBLIC_URL']),
  );
  if (flags.configurationId !== undefined && !CONFIGURATION_ID.test(flags.configurationId)) {
    throw new Refused('--configuration-id takes 32 lowercase hex digits');
  }
  return {
    host,
    port,
    ...(flags.configurationId !== undefined ? { configurationId: flags.configurationId } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(principalHeader !== undefined ? { principalHeader } : {}),
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    ...readSessionLimits(flags, env),
    ...readSlowClientLimits(flags),
  };
}

/** `--max-sessions`, `--max-sessions-per-client` (at most the former) and the idle TTL. */
function readSessionLimits(
  flags: ServeFlags,
  env: Env,
): Pick<HttpConfig, 'maxSessions' | 'maxSessionsPerClient' | 'sessionIdleTtlMs'> {
  const maxSessions = wholeNumber(
    flags.maxSessions,
    MAX_SESSIONS,
    1,
    MAX_MAX_SESSIONS,
    `--max-sessions takes a whole number from 1 to ${MAX_MAX_SESSIONS}`,
  );
  const maxSessionsPerClient = wholeNumber(
    flags.maxSessionsPerClient,
    Math.min(MAX_SESSIONS_PER_CLIENT, maxSessions),
    1,
    maxSessions,
    `--max-sessions-per-client takes a whole number from 1 to --max-sessions (${maxSessions})`,
  );
  const ttlText = nonEmpty(env['MHL_SERVE_SESSION_IDLE_TTL']);
  const sessionIdleTtlMs = ttlText === undefined ? undefined : parseDuration(ttlText);
  if (ttlText !== undefined && (sessionIdleTtlMs === undefined || sessionIdleTtlMs === 0)) {
    throw new Refused('MHL_SERVE_SESSION_IDLE_TTL takes a duration such as 30m or 90s');
  }
  return {
    maxSessions,
    maxSessionsPerClient,
    ...(sessionIdleTtlMs !== undefined ? { sessionIdleTtlMs } : {}),
  };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: not a directory a call can run in.
    return false;
  }
}

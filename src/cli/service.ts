/**
 * `mhl service install|start|stop|restart|uninstall|status`: parses the flags, takes the
 * lifecycle lock for the commands that change something, runs one command of `src/service`,
 * records its outcome in `lifecycle.json` and prints the result (text, or the schema-version-1
 * JSON with `--json`; nothing on success with `--quiet`). Diagnostics go to stderr with their
 * `MCP_SERVICE_*` code. Exit status: 0 success (and every valid status), 1 a diagnostic, 2 bad
 * flags.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  acquireLifecycleLock,
  configurationId,
  hasControl,
  installService,
  LifecycleSchema,
  type Mutation,
  mutationText,
  now,
  restartService,
  SERVICE_CODES,
  type ServiceContext,
  type ServiceDefinition,
  ServiceError,
  type ServiceStatus,
  serviceContext,
  serviceStatus,
  startService,
  stopService,
  uninstallService,
  writeState,
} from '../service/index.js';
import type { Output } from './lint.js';

export type ServiceCommand = 'install' | 'start' | 'stop' | 'restart' | 'uninstall' | 'status';

/** The flags of `mhl service …`, as commander hands them over. */
export interface ServiceCliOptions {
  readonly json?: boolean;
  readonly quiet?: boolean;
  /** False with `--no-start` (install only). */
  readonly start?: boolean;
  readonly cwd?: string;
  readonly port?: string;
  readonly maxActive?: string;
  readonly defaultTimeoutMs?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

class UsageError extends Error {}

/** Runs one service command; resolves to the exit status. */
export async function runService(
  command: ServiceCommand,
  dir: string | undefined,
  options: ServiceCliOptions,
  io: Output,
  version: string,
  env: Env,
): Promise<number> {
  const name = `mhl service ${command}`;
  try {
    const refusal = platformRefusal(process.platform);
    if (refusal !== undefined) throw refusal;
    const definition =
      command === 'install' ? readDefinitionFlags(dir, options, version, env) : undefined;
    const ctx = serviceContext(env, version);
    if (command === 'status') {
      const status = await serviceStatus(ctx);
      if (!options.quiet) io.out(options.json ? JSON.stringify(status) : statusText(status));
      return 0;
    }
    const result = await mutate(ctx, command, definition, options.start !== false);
    if (!options.quiet) io.out(options.json ? JSON.stringify(result) : mutationText(result));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${name}: ${error.message}`);
      return 2;
    }
    const code = error instanceof ServiceError ? error.code : 'MCP_SERVICE_FAILED';
    const message = error instanceof Error ? error.message : String(error);
    io.err(
      options.json
        ? JSON.stringify({ command, schema_version: 1, diagnostic_code: code, message })
        : `${name}: ${code}: ${message}`,
    );
    return 1;
  }
}

/**
 * Why `platform` has no managed service (MCP_SERVICE_UNSUPPORTED_PLATFORM), or undefined on
 * Linux, the one platform with an implementation (systemd user units).
 */
export function platformRefusal(platform: NodeJS.Platform): ServiceError | undefined {
  if (platform === 'linux') return undefined;
  return new ServiceError(
    SERVICE_CODES.UNSUPPORTED_PLATFORM,
    `mhl service has no implementation on ${platform} (Linux systemd user units only); mhl serve mcp --http still works here`,
  );
}

/** A changing command under the lifecycle lock, its outcome recorded in lifecycle.json. */
async function mutate(
  ctx: ServiceContext,
  command: Exclude<ServiceCommand, 'status'>,
  definition: ServiceDefinition | undefined,
  start: boolean,
): Promise<Mutation> {
  const lock = await acquireLifecycleLock(ctx.paths.lock, command);
  let outcome: { action: string | null; code: string | null } = { action: null, code: null };
  try {
    const result = await run(ctx, command, definition, start);
    outcome = { action: result.action, code: null };
    return result;
  } catch (error) {
    outcome = {
      action: null,
      code: error instanceof ServiceError ? error.code : 'MCP_SERVICE_FAILED',
    };
    throw error;
  } finally {
    // A successful uninstall leaves no lifecycle record behind; every other outcome is kept.
    if (!(command === 'uninstall' && outcome.code === null)) {
      await writeState(
        ctx.paths.lifecycle,
        LifecycleSchema.parse({ schema_version: 1, command, ...pick(outcome), at: now() }),
      ).catch(() => undefined);
    }
    await lock.release();
  }
}

function pick(outcome: { action: string | null; code: string | null }) {
  return { action: outcome.action, diagnostic_code: outcome.code };
}

function run(
  ctx: ServiceContext,
  command: Exclude<ServiceCommand, 'status'>,
  definition: ServiceDefinition | undefined,
  start: boolean,
): Promise<Mutation> {
  switch (command) {
    case 'install':
      return installService(ctx, definition as ServiceDefinition, { noStart: !start });
    case 'start':
      return startService(ctx);
    case 'stop':
      return stopService(ctx);
    case 'restart':
      return restartService(ctx);
    case 'uninstall':
      return uninstallService(ctx);
  }
}

/** The definition `install`'s flags describe; every bad flag is a usage error naming it. */
function readDefinitionFlags(
  dir: string | undefined,
  options: ServiceCliOptions,
  version: string,
  env: Env,
): ServiceDefinition {
  const workflows = directory(dir ?? '.', 'the workflows folder');
  const cwd = directory(options.cwd ?? '.', '--cwd');
  const script = process.argv[1];
  if (script === undefined) throw new UsageError('cannot tell where the mhl executable is');
  const ctx = serviceContext(env, version);
  const definition: ServiceDefinition = {
    schema_version: 1,
    service_id: ctx.serviceId,
    version,
    node: process.execPath,
    mhl: realpathSync(script),
    workflows,
    cwd,
    port: whole(options.port, 8787, 1, 65535, '--port takes a whole number from 1 to 65535'),
    max_active: whole(
      options.maxActive,
      32,
      1,
      4096,
      '--max-active takes a whole number from 1 to 4096',
    ),
    default_timeout_ms: whole(
      options.defaultTimeoutMs,
      300_000,
      1,
      Number.MAX_SAFE_INTEGER,
      '--default-timeout-ms takes a positive whole number of milliseconds',
    ),
    config_home: ctx.paths.configHome,
    state_dir: ctx.paths.runsDir,
  };
  for (const [flag, path] of [
    ['the workflows folder', workflows],
    ['--cwd', cwd],
    ['the node path', definition.node],
    ['the mhl path', definition.mhl],
    ['XDG_CONFIG_HOME', definition.config_home],
    ['XDG_STATE_HOME', ctx.paths.runsDir],
  ] as const) {
    // A newline or other control character would end the unit's line and add a setting.
    if (hasControl(path)) {
      throw new UsageError(`${flag} contains a control character, which a unit file cannot hold`);
    }
  }
  configurationId(definition);
  return definition;
}

function directory(path: string, what: string): string {
  const absolute = resolve(path);
  let isDir = false;
  try {
    isDir = statSync(absolute).isDirectory();
  } catch {
    // Missing or unreadable: refused below.
  }
  if (!isDir) throw new UsageError(`${what} ${path} is not a directory`);
  return realpathSync(absolute);
}

function whole(
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
  refusal: string,
) {
  if (text === undefined) return fallback;
  const value = /^\d{1,16}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(refusal);
  return value;
}

/** The text form of status: one line per layer, then the drift. */
function statusText(s: ServiceStatus): string {
  const lines = [
    `state: ${s.state}${s.diagnostic_code ? ` (${s.diagnostic_code})` : ''}`,
    `registration: ${s.registration.state} (${s.task_path}${s.registration.enabled ? ', enabled' : ''})`,
    `manager: ${
      s.manager.state === 'reachable'
        ? `${s.manager.active_state}/${s.manager.sub_state}${s.manager.main_pid ? `, pid ${s.manager.main_pid}` : ''}`
        : `unreachable: ${s.manager.message}`
    }`,
    `runtime: ${s.runtime.state}${s.runtime.instance_id ? ` (instance ${s.runtime.instance_id})` : ''}`,
    `readiness: ${s.readiness.state}${s.endpoint ? ` at ${s.endpoint}` : ''}${
      s.readiness.owned === false ? ' (not this service)' : ''
    }`,
    `lifecycle: ${s.lifecycle.state}${
      s.lifecycle.last_command
        ? ` (last: ${s.lifecycle.last_command} ${s.lifecycle.last_action ?? s.lifecycle.last_diagnostic_code})`
        : ''
    }`,
    s.drift.length === 0 ? 'drift: none' : 'drift:',
    ...s.drift.map(
      (d) =>
        `  ${d.layer} ${d.property}: expected ${d.expected ?? '(none)'}, found ${d.actual ?? '(none)'}`,
    ),
  ];
  return lines.join('\n');
}

/**
 * An isolated user for `mhl service` tests: its own HOME, XDG config, state, cache and runtime
 * folders, and a PATH whose `systemctl` is the stand-in in test/fixtures/service/bin (no user
 * manager can run in the test container), which starts the unit's real ExecStart. Every
 * managed server a test leaves running is killed when the file's tests end.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { after } from 'node:test';
import { CLI, type CliResult, REPO_ROOT, runCli, tempDir } from './cli.js';

export const SHIM_BIN = resolve(REPO_ROOT, 'test/fixtures/service/bin');

export interface ServiceUser {
  readonly home: string;
  readonly env: Record<string, string>;
  readonly stateDir: string;
  readonly unitPath: string;
  readonly shimDir: string;
  /** Runs `mhl service …args` as this user (extra variables override). */
  service(args: readonly string[], extra?: Record<string, string>): Promise<CliResult>;
  /** The systemctl calls the stand-in recorded, in order. */
  calls(): string[][];
}

const users: ServiceUser[] = [];

after(() => {
  for (const user of users) {
    const main = join(user.shimDir, 'main.json');
    if (!existsSync(main)) continue;
    try {
      process.kill((JSON.parse(readFileSync(main, 'utf8')) as { pid: number }).pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** A fresh isolated user. */
export function serviceUser(): ServiceUser {
  const home = tempDir('mhl-service-');
  const runtime = join(home, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  const env = {
    HOME: home,
    XDG_RUNTIME_DIR: runtime,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CACHE_HOME: join(home, 'cache'),
    PATH: `${SHIM_BIN}:${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
  };
  const shimDir = join(runtime, 'systemctl-shim');
  const user: ServiceUser = {
    home,
    env,
    stateDir: join(home, 'state', 'mhl', 'managed-mcp'),
    unitPath: join(home, 'config', 'systemd', 'user', 'mhl-managed-mcp.service'),
    shimDir,
    service: (args, extra = {}) => runCli(['service', ...args], { env: { ...env, ...extra } }),
    calls: () => {
      const log = join(shimDir, 'calls.log');
      if (!existsSync(log)) return [];
      return readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as string[]);
    },
  };
  users.push(user);
  return user;
}

/** A loopback port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A plain `mhl serve mcp --http` on `port`, not started by the service: a foreign server. */
export async function foreignServer(folder: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', 'mcp', folder, '--http', '--port', String(port)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  after(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((done, fail) => {
    let text = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      text += d;
      if (text.includes('listening on')) done();
    });
    child.on('exit', (code) => fail(new Error(`foreign server exited ${code}: ${text}`)));
  });
  return child;
}

/** The JSON a `--json` command printed on stdout. */
export function json(result: CliResult): Record<string, unknown> {
  assert(result.stdout.trim() !== '', `no JSON on stdout; stderr: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** The diagnostic code a failed `--json` command printed on stderr. */
export function diagnostic(result: CliResult): string | undefined {
  try {
    return (JSON.parse(result.stderr) as { diagnostic_code?: string }).diagnostic_code;
  } catch {
    return /(MCP_SERVICE_[A-Z_]+)/.exec(result.stderr)?.[1];
  }
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

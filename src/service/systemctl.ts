/**
 * The one way `mhl service` talks to the user manager: `systemctl --user …` as a child process
 * (found on PATH, with the caller's environment, so `XDG_RUNTIME_DIR` reaches it), each call
 * bounded by a deadline. A manager it cannot reach is reported with the manager's own message.
 * Never runs `loginctl`, so linger is never enabled. Knows nothing of definitions or state.
 */
import { execFile } from 'node:child_process';
import { errnoCode } from '../store/index.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { UNIT_NAME } from './paths.js';

type Env = Readonly<Record<string, string | undefined>>;

/** What one `systemctl` call printed and how it exited. */
export interface SystemctlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The unit properties lifecycle decisions read. */
export interface UnitProperties {
  readonly loadState: string;
  readonly activeState: string;
  readonly subState: string;
  /** 0 when no process runs. */
  readonly mainPid: number;
  readonly unitFileState: string;
  readonly needDaemonReload: boolean;
  readonly fragmentPath: string;
  /** Drop-in files the manager loaded for the unit (`*.service.d/*.conf`), in its order. */
  readonly dropInPaths: readonly string[];
  readonly execMainStatus: number | null;
}

const PROPERTIES = [
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'UnitFileState',
  'NeedDaemonReload',
  'FragmentPath',
  'DropInPaths',
  'ExecMainStatus',
];

/** Secrets of the calling shell that systemctl never needs, so it never inherits them. */
const WITHHELD = ['MHL_SERVE_TOKEN', 'MHL_SERVE_WORKFLOWS_KEY'];

/** Longest any one call may take; `stop` waits for the unit's own stop timeout. */
const DEFAULT_CALL_MS = 15_000;

/** Runs `systemctl --user` for one unit. */
export class Systemctl {
  readonly #env: Env;

  constructor(env: Env) {
    const kept = { ...env };
    for (const name of WITHHELD) delete kept[name];
    this.#env = kept;
  }

  /**
   * Runs `systemctl --user ...args`; resolves whatever its exit status.
   * @throws ServiceError MCP_SERVICE_SCHEDULER_FAILED when systemctl cannot be run at all.
   */
  run(args: readonly string[], timeoutMs = DEFAULT_CALL_MS): Promise<SystemctlResult> {
    return new Promise((done, fail) => {
      execFile(
        'systemctl',
        ['--user', ...args],
        { env: { ...this.#env }, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 1 << 20 },
        (error, stdout, stderr) => {
          if (error && typeof error.code !== 'number') {
            const why = errnoCode(error) === 'ENOENT' ? 'systemctl is not on PATH' : error.message;
            fail(new ServiceError(SERVICE_CODES.SCHEDULER_FAILED, why, { cause: error }));
            return;
          }
          done({ code: error ? Number(error.code) : 0, stdout, stderr });
        },
      );
    });
  }

  /**
   * Runs a call that must succeed.
   * @throws ServiceError MCP_SERVICE_SCHEDULER_FAILED with the manager's own message.
   */
  async must(args: readonly string[], timeoutMs?: number): Promise<SystemctlResult> {
    const result = await this.run(args, timeoutMs);
    if (result.code !== 0) {
      throw new ServiceError(SERVICE_CODES.SCHEDULER_FAILED, managerMessage(result));
    }
    return result;
  }

  /**
   * The unit's properties; `LoadState=not-found` when the manager has no such unit.
   * @throws ServiceError MCP_SERVICE_SCHEDULER_FAILED when the manager is unreachable.
   */
  async show(): Promise<UnitProperties> {
    const result = await this.must(['show', UNIT_NAME, `--property=${PROPERTIES.join(',')}`]);
    return parseShow(result.stdout);
  }

  daemonReload(): Promise<SystemctlResult> {
    return this.must(['daemon-reload']);
  }

  enable(): Promise<SystemctlResult> {
    return this.must(['enable', UNIT_NAME]);
  }

  disable(): Promise<SystemctlResult> {
    return this.must(['disable', UNIT_NAME]);
  }

  /** Asks the manager to start the unit; `--no-block`, since readiness is what counts. */
  start(): Promise<SystemctlResult> {
    return this.must(['start', '--no-block', UNIT_NAME]);
  }

  /** Stops exactly this unit (SIGTERM, then SIGKILL past TimeoutStopSec), waiting up to `ms`. */
  stop(timeoutMs: number): Promise<SystemctlResult> {
    return this.must(['stop', UNIT_NAME], timeoutMs);
  }

  resetFailed(): Promise<SystemctlResult> {
    return this.run(['reset-failed', UNIT_NAME]);
  }
}

/** What the manager said, first stderr line(s) as it printed them. */
export function managerMessage(result: SystemctlResult): string {
  const text = (result.stderr.trim() || result.stdout.trim()).slice(0, 2000);
  return text === '' ? `systemctl --user exited with status ${result.code}` : text;
}

/** `Key=Value` lines of `systemctl show` as unit properties. */
export function parseShow(text: string): UnitProperties {
  const map = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) map.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const number = (key: string): number | null => {
    const value = map.get(key);
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
  };
  return {
    loadState: map.get('LoadState') ?? 'not-found',
    activeState: map.get('ActiveState') ?? 'inactive',
    subState: map.get('SubState') ?? 'dead',
    mainPid: number('MainPID') ?? 0,
    unitFileState: map.get('UnitFileState') ?? '',
    needDaemonReload: map.get('NeedDaemonReload') === 'yes',
    fragmentPath: map.get('FragmentPath') ?? '',
    // Space-separated; systemd refuses unit paths with whitespace, so the split is exact.
    dropInPaths: (map.get('DropInPaths') ?? '').split(/\s+/).filter((p) => p !== ''),
    execMainStatus: number('ExecMainStatus'),
  };
}

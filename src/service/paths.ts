/**
 * Where the managed service lives on disk, from the environment once: durable state under
 * `$XDG_STATE_HOME/mhl/managed-mcp/` (else `~/.local/state/…`), the unit under
 * `$XDG_CONFIG_HOME/systemd/user/` (else `~/.config/systemd/user/`), where the user manager
 * looks for it, and the served process's run state under `…/managed-mcp/runs/`. Relative XDG
 * values are ignored, as the XDG spec asks. Touches no file.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** The unit's name; also the marker of what `mhl service` owns. */
export const UNIT_NAME = 'mhl-managed-mcp.service';

type Env = Readonly<Record<string, string | undefined>>;

/** Every path a lifecycle command reads or writes. */
export interface ServicePaths {
  /** `…/mhl/managed-mcp`, mode 0700. */
  readonly stateDir: string;
  readonly current: string;
  readonly runtime: string;
  readonly lifecycle: string;
  /** The permanent lock anchor; never removed. */
  readonly lock: string;
  readonly definitions: string;
  /**
   * `…/mhl/managed-mcp/runs`: the served process's `--state-dir`, so its async runs, jobs and
   * checkpoints survive a restart. Left in place by uninstall (it holds the user's run data).
   */
  readonly runsDir: string;
  /** `…/systemd/user`. */
  readonly unitDir: string;
  readonly unitPath: string;
  /** `…/systemd/user/default.target.wants/mhl-managed-mcp.service`, made by `enable`. */
  readonly wantsLink: string;
  /** `…/mhl`: the configuration directory a served process reads (part of the definition). */
  readonly configDir: string;
  /** The XDG base of `configDir`, given to the unit so the server resolves the same one. */
  readonly configHome: string;
}

function xdg(env: Env, name: string, fallback: string[]): string {
  const value = env[name];
  if (value !== undefined && value !== '' && isAbsolute(value)) return value;
  return join(env['HOME'] || homedir(), ...fallback);
}

/** The paths for this user and environment. */
export function servicePaths(env: Env): ServicePaths {
  const stateDir = join(xdg(env, 'XDG_STATE_HOME', ['.local', 'state']), 'mhl', 'managed-mcp');
  const configHome = xdg(env, 'XDG_CONFIG_HOME', ['.config']);
  const unitDir = join(configHome, 'systemd', 'user');
  return {
    stateDir,
    current: join(stateDir, 'current.json'),
    runtime: join(stateDir, 'runtime.json'),
    lifecycle: join(stateDir, 'lifecycle.json'),
    lock: join(stateDir, 'lifecycle.lock'),
    definitions: join(stateDir, 'definitions'),
    runsDir: join(stateDir, 'runs'),
    unitDir,
    unitPath: join(unitDir, UNIT_NAME),
    wantsLink: join(unitDir, 'default.target.wants', UNIT_NAME),
    configDir: join(configHome, 'mhl'),
    configHome,
  };
}

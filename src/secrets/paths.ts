/**
 * Where the vault lives: `$XDG_CONFIG_HOME/mhl/` when that variable is an absolute path (the XDG
 * base directory rule: a relative value is ignored), else `~/.config/mhl/`. Two files: the key
 * (`vault.key`) and the sealed records (`vault.json`), plus a lock file while a command writes.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export interface VaultPaths {
  readonly dir: string;
  readonly key: string;
  readonly vault: string;
  readonly lock: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The vault's files for the user whose environment is `env`. */
export function vaultPaths(env: Env): VaultPaths {
  const xdg = env['XDG_CONFIG_HOME'];
  const home = env['HOME'] || homedir();
  const dir = join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.config'), 'mhl');
  return {
    dir,
    key: join(dir, 'vault.key'),
    vault: join(dir, 'vault.json'),
    lock: join(dir, 'vault.lock'),
  };
}

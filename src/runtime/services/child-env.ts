/**
 * The environment child processes get: an explicit allow-list of the parent's variables, never
 * the whole environment, so no secret the server holds (tokens, pack keys) reaches an agent CLI
 * or `cmd.exec` child unless the operator names it.
 */

/** Variables a child gets by default: what shells and CLIs need to run, nothing secret. */
export const DEFAULT_CHILD_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TMPDIR',
  'TERM',
  'NO_COLOR',
] as const;

/**
 * Builds a child environment from `source` (default: this process's environment), keeping only
 * the default names plus `extra` (the operator's explicit pass-through list).
 */
export function childEnvironment(
  extra: readonly string[] = [],
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...DEFAULT_CHILD_ENV, ...extra]) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

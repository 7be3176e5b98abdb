/**
 * The systemd user unit of the managed server: rendered from a definition (every argument of
 * `ExecStart` quoted and escaped, so a path with spaces, `%` or `$` is passed as is) and parsed
 * back into `Section.Key` properties, so status can report drift property by property rather
 * than as a changed file. `X-MhlManaged` marks a unit this command owns; a unit without it is
 * never overwritten or removed. Knows nothing of systemctl.
 */
import { configurationId, type ServiceDefinition } from './definition.js';

/** The `[Unit]` key that marks ownership; systemd ignores `X-` keys. */
export const OWNER_KEY = 'Unit.X-MhlManaged';
export const CONFIGURATION_KEY = 'Unit.X-MhlConfigurationId';

/** Variables the unit keeps out of the server even if the user manager has them. */
const UNSET = ['MHL_SERVE_TOKEN', 'MHL_SERVE_PRINCIPAL_HEADER', 'MHL_SERVE_WORKFLOWS_KEY'];

/** One argument of a command line, quoted as systemd.service(5) reads it (`$` expands there). */
export function quoteArg(arg: string): string {
  return quoteValue(arg).replace(/\$/g, '$$$$');
}

/**
 * A quoted setting value (`Environment=`): C escapes for `\` and `"`, `%%` for a literal `%`
 * (specifiers expand in every setting); `$` means nothing here, so it stays as is.
 */
export function quoteValue(value: string): string {
  const escaped = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  return `"${escaped}"`;
}

/** The `mhl serve mcp` command line a definition runs, as an argument vector. */
export function serveArgv(definition: ServiceDefinition): string[] {
  return [
    definition.node,
    definition.mhl,
    'serve',
    'mcp',
    '--http',
    '--addr',
    '127.0.0.1',
    '--port',
    String(definition.port),
    '--max-active',
    String(definition.max_active),
    '--default-timeout-ms',
    String(definition.default_timeout_ms),
    '--cwd',
    definition.cwd,
    '--configuration-id',
    configurationId(definition),
    ...(definition.state_dir === undefined ? [] : ['--state-dir', definition.state_dir]),
    definition.workflows,
  ];
}

/** The unit file's text for a definition: the same bytes for the same definition. */
export function renderUnit(definition: ServiceDefinition): string {
  const id = configurationId(definition);
  return [
    '# Written by `mhl service install`; `mhl service uninstall` removes it.',
    '# Edits are reported by `mhl service status` as drift; `mhl service install` restores it.',
    '[Unit]',
    `Description=mhl managed MCP server on 127.0.0.1:${definition.port}`,
    `X-MhlManaged=${definition.service_id}`,
    `X-MhlConfigurationId=${id}`,
    // The server's own retries: the first start and at most three more, a minute apart.
    'StartLimitIntervalSec=300',
    'StartLimitBurst=4',
    '',
    '[Service]',
    'Type=exec',
    `ExecStart=${serveArgv(definition).map(quoteArg).join(' ')}`,
    `Environment=${quoteValue(`XDG_CONFIG_HOME=${definition.config_home}`)}`,
    `UnsetEnvironment=${UNSET.join(' ')}`,
    // A clean control shutdown exits 0 and stays stopped; a crash is retried.
    'Restart=on-failure',
    'RestartSec=60',
    // SIGTERM takes the server's own 5 s shutdown path; past 10 s the manager kills it, inside
    // the 15 s that `mhl service stop` allows in all.
    'TimeoutStopSec=10',
    'UMask=0077',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** A unit file as `Section.Key` → value (repeated keys joined by a newline). */
export function parseUnit(text: string): Map<string, string> {
  const properties = new Map<string, string>();
  let section = '';
  let pending = '';
  for (const raw of text.split('\n')) {
    // A trailing backslash continues the line (systemd.syntax(7)).
    const line = pending + raw.trimEnd();
    if (line.endsWith('\\')) {
      pending = `${line.slice(0, -1)} `;
      continue;
    }
    pending = '';
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[([^\]]+)\]$/.exec(trimmed);
    if (header) {
      section = header[1] ?? '';
      continue;
    }
    const eq = trimmed.indexOf('=');
    if (eq <= 0) continue;
    const key = `${section}.${trimmed.slice(0, eq).trim()}`;
    const value = trimmed.slice(eq + 1).trim();
    const before = properties.get(key);
    properties.set(key, before === undefined ? value : `${before}\n${value}`);
  }
  return properties;
}

/** One property that differs between the unit on disk and the one the definition renders. */
export interface UnitDrift {
  readonly property: string;
  readonly expected: string | null;
  readonly actual: string | null;
}

/** Every property that differs, sorted by name. */
export function unitDrift(expectedText: string, actualText: string): UnitDrift[] {
  const expected = parseUnit(expectedText);
  const actual = parseUnit(actualText);
  const keys = new Set([...expected.keys(), ...actual.keys()]);
  const drift: UnitDrift[] = [];
  for (const key of [...keys].sort()) {
    const want = expected.get(key) ?? null;
    const have = actual.get(key) ?? null;
    if (want !== have) drift.push({ property: key, expected: want, actual: have });
  }
  return drift;
}

/**
 * An `extension a2a` declaration's settings as a typed configuration: where the agent's card is,
 * the headers every request carries, and how `send` polls a task that is still running.
 */
import { DurationValue, type Value } from '../interpreter/values.js';
import { extensionError, type Settings } from './extension-settings.js';
import { headerMap, httpUrl } from './mcp-config.js';

export interface A2aConfig {
  readonly what: string;
  /** The agent's base URL (its card at `/.well-known/agent-card.json`), or the card's own URL. */
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly pollIntervalMs: number;
  readonly pollTimeoutMs: number;
}

/** Between two `GetTask` polls when nothing is declared. */
const DEFAULT_POLL_INTERVAL_MS = 1000;
/** How long `send` polls a running task when nothing is declared (the step's deadline still wins). */
const DEFAULT_POLL_TIMEOUT_MS = 300_000;

/** Reads the settings of `extension a2a <name>`; raises `EXTENSION` naming a bad property. */
export function a2aConfig(name: string, settings: Settings): A2aConfig {
  const what = `extension a2a '${name}'`;
  const bad = (prop: string, message: string) => extensionError(what, `${prop} ${message}`);
  const raw = settings.get('url');
  if (typeof raw !== 'string' || raw === '') throw bad('url', 'is required (a string)');
  const url = httpUrl(raw, (m) => bad('url', m));
  return {
    what,
    url,
    headers: headerMap(settings.get('headers'), (m) => bad('headers', m)),
    pollIntervalMs: millis(settings.get('poll_interval'), DEFAULT_POLL_INTERVAL_MS, () =>
      bad('poll_interval', 'must be a duration such as 2s'),
    ),
    pollTimeoutMs: millis(settings.get('poll_timeout'), DEFAULT_POLL_TIMEOUT_MS, () =>
      bad('poll_timeout', 'must be a duration such as 5m'),
    ),
  };
}

function millis(v: Value | undefined, fallback: number, fail: () => Error): number {
  if (v === undefined || v === null) return fallback;
  const ms = v instanceof DurationValue ? v.ms : v;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) throw fail();
  return ms;
}

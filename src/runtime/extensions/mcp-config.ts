/**
 * An `extension mcp` declaration's settings as a typed configuration: which transport, what to
 * spawn or where to connect, and which protocol era to speak. The values `mhl lint` already
 * checks are checked again here, since a run may start from a file lint never saw.
 */
import { isObject, type Value } from '../interpreter/values.js';
import { extensionError, type Settings } from './extension-settings.js';

/** The protocol an `extension mcp` speaks (language §5.6); `auto` is the default. */
export type McpProtocol = 'auto' | '2026-07-28' | '2025-11-25' | '2025-06-18';
const PROTOCOLS: readonly string[] = ['auto', '2026-07-28', '2025-11-25', '2025-06-18'];

export type McpConfig =
  | {
      readonly transport: 'stdio';
      readonly what: string;
      readonly command: string;
      readonly args: readonly string[];
      readonly protocol: McpProtocol;
    }
  | {
      readonly transport: 'http';
      readonly what: string;
      readonly url: URL;
      readonly headers: Readonly<Record<string, string>>;
      readonly protocol: McpProtocol;
    };

/** Reads the settings of `extension mcp <name>`; raises `EXTENSION` naming a bad property. */
export function mcpConfig(name: string, settings: Settings): McpConfig {
  const what = `extension mcp '${name}'`;
  const bad = (prop: string, message: string) => extensionError(what, `${prop} ${message}`);
  const text = (prop: string): string | undefined => {
    const v = settings.get(prop);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v === '') throw bad(prop, 'must be a non-empty string');
    return v;
  };
  const protocol = text('protocol') ?? 'auto';
  if (!PROTOCOLS.includes(protocol))
    throw bad('protocol', `must be one of ${PROTOCOLS.join(', ')}`);
  const transport =
    text('transport') ?? (settings.has('url') && !settings.has('command') ? 'http' : 'stdio');
  if (transport === 'stdio') {
    const command = text('command');
    if (command === undefined) throw bad('command', 'is required over stdio');
    return {
      transport,
      what,
      command,
      args: strings(settings.get('args'), () => bad('args', 'must be a list of strings')),
      protocol: protocol as McpProtocol,
    };
  }
  if (transport !== 'http') throw bad('transport', 'must be "stdio" or "http"');
  const raw = text('url');
  if (raw === undefined) throw bad('url', 'is required over http');
  const url = httpUrl(raw, (m) => bad('url', m));
  return {
    transport,
    what,
    url,
    headers: headerMap(settings.get('headers'), (m) => bad('headers', m)),
    protocol: protocol as McpProtocol,
  };
}

/** `url: "…"` as an http(s) URL; raises through `fail` for text that is not one. */
export function httpUrl(raw: string, fail: (message: string) => Error): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fail('is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail('must be http(s)');
  return url;
}

function strings(v: Value | undefined, fail: () => Error): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw fail();
  return v as string[];
}

/** `headers: {…}` as a plain map; raises through `fail` for a value that is not a string. */
export function headerMap(
  v: Value | undefined,
  fail: (message: string) => Error,
): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw fail('must be an object of header names to strings');
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null) continue;
    if (typeof x !== 'string') throw fail(`.${k} must be a string`);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) || /[\r\n\0]/.test(x))
      throw fail(`.${k} is not a valid header`);
    out[k] = x;
  }
  return out;
}

/**
 * The HTTP listener's limits and public address, read from `mhl serve` flags: the slow-client
 * deadlines and caps (docs/serve.md, "Slow clients") and `--public-url`. Split from config.ts,
 * which assembles them into `HttpConfig`.
 */
import type { ServeFlags } from './config.js';
import { parseDuration, Refused, wholeNumber } from './config-values.js';

/**
 * Slow clients (docs/serve.md, "Slow clients"). A request's headers must arrive within 10 s, its
 * body within 10 s more, the whole request within 30 s; at most 512 connections, 256 of them
 * from one address; at most 8 MiB of bodies held at once.
 */
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_BODY_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Longest deadline accepted: Node's timers cannot count past 24.8 days, and no body needs more. */
export const MAX_DEADLINE_MS = 3_600_000;
const DEFAULT_MAX_CONNECTIONS = 512;
const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
const MAX_CONNECTION_CAP = 65_535;
const DEFAULT_BODY_BUFFER_MIB = 8;
/** One address may hold half the budget: at 2 MiB, one largest (1 MiB) body still fits. */
const MIN_BODY_BUFFER_MIB = 2;
const MAX_BODY_BUFFER_MIB = 4096;

/**
 * `--public-url` (or `MHL_SERVE_PUBLIC_URL`): an absolute http(s) URL with no credentials, query
 * or fragment, returned without its trailing slash so paths append to it. A path is kept (a
 * proxy may serve the server under one).
 */
export function readPublicUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const refuse = (why: string): never => {
    throw new Refused(`--public-url (or MHL_SERVE_PUBLIC_URL) ${why}`);
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse('must be an absolute URL such as https://agents.example.org');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('must be http or https');
  if (value.includes('?') || value.includes('#')) refuse('takes no query or fragment');
  if (url.username !== '' || url.password !== '') refuse('takes no user name or password');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The deadlines and caps that bound what slow or numerous clients hold (docs/serve.md). */
export function readSlowClientLimits(flags: ServeFlags) {
  const headersTimeoutMs = deadline(
    flags.headersTimeout,
    DEFAULT_HEADERS_TIMEOUT_MS,
    '--headers-timeout',
  );
  const requestTimeoutMs = deadline(
    flags.requestTimeout,
    DEFAULT_REQUEST_TIMEOUT_MS,
    '--request-timeout',
  );
  // Node refuses a headers deadline past the whole request's: say so in terms of the flags.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Refused(
      `--headers-timeout (${headersTimeoutMs} ms) cannot exceed --request-timeout ` +
        `(${requestTimeoutMs} ms): the request deadline covers its headers`,
    );
  }
  const cap = (text: string | undefined, fallback: number, flag: string) =>
    wholeNumber(
      text,
      fallback,
      1,
      MAX_CONNECTION_CAP,
      `${flag} takes a whole number from 1 to ${MAX_CONNECTION_CAP}`,
    );
  const bufferMib = wholeNumber(
    flags.bodyBufferMib,
    DEFAULT_BODY_BUFFER_MIB,
    MIN_BODY_BUFFER_MIB,
    MAX_BODY_BUFFER_MIB,
    `--body-buffer-mib takes a whole number of MiB from ${MIN_BODY_BUFFER_MIB} to ${MAX_BODY_BUFFER_MIB}`,
  );
  const maxConnections = cap(flags.maxConnections, DEFAULT_MAX_CONNECTIONS, '--max-connections');
  const maxConnectionsPerAddress = cap(
    flags.maxConnectionsPerAddress,
    // The default never exceeds the global cap; an explicit value above it is a mistake.
    Math.min(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, maxConnections),
    '--max-connections-per-address',
  );
  if (maxConnectionsPerAddress > maxConnections) {
    throw new Refused(
      `--max-connections-per-address (${maxConnectionsPerAddress}) cannot exceed ` +
        `--max-connections (${maxConnections}): one address is one share of all connections`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    bodyTimeoutMs: deadline(flags.bodyTimeout, DEFAULT_BODY_TIMEOUT_MS, '--body-timeout'),
    maxConnections,
    maxConnectionsPerAddress,
    bodyBufferBytes: bufferMib * 1024 * 1024,
  };
}

/** A deadline flag: a duration from 1 ms to an hour. */
function deadline(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const ms = parseDuration(text);
  if (ms === undefined || ms === 0 || ms > MAX_DEADLINE_MS) {
    throw new Refused(`${flag} takes a duration from 1ms to 1h, such as 10s or 500ms`);
  }
  return ms;
}

/**
 * Request guards shared by every HTTP endpoint: the DNS-rebinding `Host` check, the `Origin`
 * check (loopback, or the server's own origin) and the bearer-token check. Pure functions over header values; they never write
 * a response (the HTTP transport maps a refusal to its status).
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', '::1', '[::1]']);
const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]']);

/** True for `localhost`, any 127.x address and `::1` (with or without brackets). */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}

/** The hostname of a `Host` header value, without its port and lower-cased. */
export function hostnameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end < 0 ? value : value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  return colon < 0 ? value : value.slice(0, colon);
}

function bare(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * True when the `Host` header names the address the server is bound to (ports are ignored). A
 * loopback bind accepts every loopback name; a wildcard bind (`0.0.0.0`, `::`) accepts any host,
 * since the names it is reached by are unknown.
 */
export function hostAllowed(host: string | undefined, bind: string): boolean {
  if (host === undefined || host === '') return false;
  if (WILDCARD_BINDS.has(bind)) return true;
  const name = hostnameOf(host);
  if (isLoopback(bind)) return isLoopback(name);
  return bare(name) === bare(bind);
}

/**
 * True when there is no `Origin` header, it names a loopback host, or it is the server's own
 * origin: its host and port are the request's `Host`, and that `Host` cannot be a rebound name.
 * The `Host` guard has passed before this runs. A rebinding page's requests carry the page's
 * own DNS name in both headers, so same-origin alone proves nothing where any `Host` is taken
 * (a wildcard bind): there, a same-origin request is allowed only when its `Host` is an IP
 * address (no DNS name, so nothing to rebind) or one of `names` (the `--public-url` host, a
 * name the operator vouched for). On a specific bind the `Host` guard already pinned the name.
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined = undefined,
  bind = '',
  names: readonly string[] = [],
): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    // Not a URL (e.g. the opaque origin "null"): neither loopback nor ours.
    return false;
  }
  if (isLoopback(url.hostname)) return true;
  if (host === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) return false;
  if (!sameHost(url, host)) return false;
  if (!WILDCARD_BINDS.has(bind)) return bind !== '';
  const name = bare(hostnameOf(host));
  return isIP(name) !== 0 || names.some((known) => bare(known) === name);
}

/** Whether `Host` is `origin`'s host and port (a default port written or not). */
function sameHost(origin: URL, host: string): boolean {
  try {
    // Parsed with the origin's scheme, so `h:443` and `https://h` compare equal.
    const named = new URL(`${origin.protocol}//${host.trim()}`);
    return named.host === origin.host && named.username === '' && named.pathname === '/';
  } catch {
    return false;
  }
}

/**
 * True when `authorization` is exactly `Bearer <token>`. The secret is compared with
 * `timingSafeEqual`, so the time taken does not depend on where the first difference is.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  // The scheme name is case-insensitive (RFC 9110 §11.1); the token is not.
  const found = authorization === undefined ? null : /^bearer +(.*)$/i.exec(authorization);
  if (found?.[1] === undefined) return false;
  const given = Buffer.from(found[1], 'utf8');
  const expected = Buffer.from(token, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

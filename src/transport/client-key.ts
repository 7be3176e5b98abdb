/**
 * Who a legacy session is counted against for `--max-sessions-per-client`: the verified
 * principal when the principal header names one, else the remote address. The bearer token is
 * not used: `--token` is one secret shared by every client, so it names none of them (behind a
 * proxy that sets no principal, every client is the proxy's address: one client). An IPv6
 * address counts by its /64, the block one host is normally given, so a host cannot multiply
 * itself by cycling addresses. Keys are digests: the table holds no identity in clear.
 */
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';

/** The client key of a request from `remoteAddress`, verified as `principal` if it names one. */
export function clientKey(
  principal: string | undefined,
  remoteAddress: string | undefined,
): string {
  const source =
    principal !== undefined ? `principal:${principal}` : `address:${addressBlock(remoteAddress)}`;
  return createHash('sha256').update(source).digest('hex');
}

/**
 * The block a remote address counts by, for every per-address limit: an IPv4 address as is
 * (also when IPv4-mapped), an IPv6 one as its first four groups (its /64).
 */
export function addressBlock(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!isIPv6(address)) return address;
  return expandIPv6(address).slice(0, 4).join(':');
}

/** The eight groups of an IPv6 address, `::` filled in (a zone index dropped). */
function expandIPv6(address: string): string[] {
  const bare = address.split('%')[0] ?? address;
  // A trailing dotted quad (`64:ff9b::1.2.3.4`) is the last two groups.
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(bare);
  const hex = quad
    ? bare.slice(0, quad.index) +
      [1, 3].map((i) => ((Number(quad[i]) << 8) | Number(quad[i + 1])).toString(16)).join(':')
    : bare;
  const [head = '', tail] = hex.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0');
  return [...left, ...(tail === undefined ? [] : fill), ...right].map((group) =>
    group.toLowerCase().replace(/^0+(?=.)/, ''),
  );
}

/**
 * Who a legacy session is counted against for `--max-sessions-per-client`: the verified
 * principal when the principal header names one, else the remote address. The bearer token is
 * not used: `--token` is one secret shared by every client, so it names none of them (behind a
 * proxy that sets no principal, every client is the proxy's address: one client). An IPv6
 * address counts by its /64, the block one host is normally given, so a host cannot multiply
 * itself by cycling addresses. Keys are digests: the table holds no identity in clear.
 */
import { createHash } from 'node:crypto';
import { isIPv6, type Socket } from 'node:net';

/**
 * The last key computed on each connection, with the principal it was for: a keep-alive
 * connection sends request after request from one address, usually as one principal, and a
 * SHA-256 per request was 2% of a trivial call's CPU. Held by the socket's lifetime only, so
 * nothing outlives the connection that already holds its address.
 */
const lastKeys = new WeakMap<Socket, { principal: string | undefined; key: string }>();
/** Each connection's address block, computed once (the IPv6 check is a large RegExp). */
const blocks = new WeakMap<Socket, string>();

/** `clientKey` of a request on `socket`, reusing the connection's last key when it applies. */
export function socketClientKey(principal: string | undefined, socket: Socket): string {
  const last = lastKeys.get(socket);
  if (last !== undefined && last.principal === principal) return last.key;
  const key = clientKey(principal, socket.remoteAddress);
  lastKeys.set(socket, { principal, key });
  return key;
}

/** `addressBlock` of a connection's remote address, computed once per connection. */
export function socketBlock(socket: Socket): string {
  let block = blocks.get(socket);
  if (block === undefined) {
    block = addressBlock(socket.remoteAddress);
    // Before connecting (or after a reset) the address is unknown: not worth remembering.
    if (socket.remoteAddress !== undefined) blocks.set(socket, block);
  }
  return block;
}

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

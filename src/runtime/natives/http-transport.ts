/**
 * How an `http.*` request reaches its server: the global `fetch` by default, or undici's
 * `fetch` over a dispatcher built for this one request when the call gives
 * `tls: {cert, key, ca, insecure}` (an `Agent` with those connect options) or `proxy: "http://…"`
 * (a `ProxyAgent`, which tunnels with CONNECT; `tls` then applies to the target server).
 *
 * Each of `cert`, `key` and `ca` is PEM text (it contains `-----BEGIN` or a line break, so PEM with
 * a preamble such as `openssl pkcs12 -nodes` output's `Bag Attributes` counts) or the path of a PEM
 * file, relative to the run's working directory like every other native path. Key material, any
 * PEM text given inline and proxy credentials are registered with the redactor before anything can
 * fail, and never appear in messages; a missing file is reported by the path as written, unless
 * the value could not be a path anyone typed (a line break, or longer than {@link MAX_SHOWN}). undici is loaded on first use only, with `require`
 * (it is CommonJS; the bundle leaves a created `require` alone, so it is not bundled either).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type * as Undici from 'undici';
import { typeOf, type Value } from '../interpreter/values.js';
import { type ArgReader, nativeError } from './args.js';
import type { NativeContext } from './native.js';

/** What a request needs to be sent: where TLS material comes from and the proxy to use. */
export interface Transport {
  readonly tls?: TlsOptions;
  /** The proxy URL (credentials included; undici sends them as Proxy-Authorization). */
  readonly proxy?: string;
}

interface TlsOptions {
  cert?: string;
  key?: string;
  ca?: string;
  rejectUnauthorized?: boolean;
}

/** The response fields the http namespace reads (global and undici responses both have them). */
export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: Iterable<[string, string]> & { get(name: string): string | null };
  readonly body: (AsyncIterable<Uint8Array> & { cancel(): Promise<void> }) | null;
}

const require = createRequire(import.meta.url);

const TLS_FIELDS = new Set(['cert', 'key', 'ca', 'insecure']);

/** Values longer than this are never echoed: a path is shorter, key material is not. */
const MAX_SHOWN = 200;

/** Reads and checks `tls:` and `proxy:` (raises `NATIVE`); undefined when the call gives neither. */
export async function readTransport(
  a: ArgReader,
  ctx: NativeContext,
): Promise<Transport | undefined> {
  const tlsArg = a.optObject('tls');
  const proxyArg = a.optString('proxy');
  if (!tlsArg && proxyArg === undefined) return undefined;
  const transport: { tls?: TlsOptions; proxy?: string } = {};
  if (tlsArg) transport.tls = await tlsOptions(a.op, tlsArg, ctx);
  if (proxyArg !== undefined) transport.proxy = proxyUrl(a.op, proxyArg, ctx);
  return transport;
}

async function tlsOptions(
  op: string,
  tls: Readonly<Record<string, Value>>,
  ctx: NativeContext,
): Promise<TlsOptions> {
  // Secrets first: whatever fails below (or is recorded of this call) must not carry key material.
  for (const field of ['key', 'cert', 'ca'] as const) {
    const v = tls[field];
    if (typeof v === 'string' && (isPemText(v) || (field === 'key' && v.length > MAX_SHOWN)))
      ctx.redactor.register(v);
  }
  for (const k of Object.keys(tls))
    if (!TLS_FIELDS.has(k))
      throw nativeError(op, `tls has no field "${k}" (accepted: cert, key, ca, insecure)`);
  const out: TlsOptions = {};
  for (const field of ['cert', 'key', 'ca'] as const) {
    const v = tls[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string')
      throw nativeError(op, `tls.${field} must be PEM text or a file path, got ${typeOf(v)}`);
    out[field] = await pemOf(op, field, v, ctx);
  }
  if ((out.cert === undefined) !== (out.key === undefined))
    throw nativeError(op, 'tls.cert and tls.key go together: give both or neither');
  const insecure = tls['insecure'];
  if (insecure !== undefined && insecure !== null && typeof insecure !== 'boolean')
    throw nativeError(op, `tls.insecure must be true or false, got ${typeOf(insecure)}`);
  if (insecure === true) out.rejectUnauthorized = false;
  return out;
}

/** Text that is PEM material rather than a path: no file name holds a BEGIN line or a newline. */
function isPemText(v: string): boolean {
  return v.includes('-----BEGIN') || v.includes('\n') || v.includes('\r');
}

/** How a value appears in a message: quoted if it looks like a typed path, else by field name. */
function shownValue(field: string, v: string): string {
  return v.length > MAX_SHOWN || /[\r\n]/.test(v) ? `the value given for tls.${field}` : `"${v}"`;
}

async function pemOf(op: string, field: string, v: string, ctx: NativeContext): Promise<string> {
  if (isPemText(v)) {
    if (!v.includes('-----BEGIN'))
      throw nativeError(op, `tls.${field}: the value given is not PEM text (no -----BEGIN line)`);
    return v;
  }
  const shown = shownValue(field, v);
  let text: string;
  try {
    text = await readFile(resolve(ctx.cwd, v), { encoding: 'utf8', signal: ctx.signal });
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    // The fs error's message holds the absolute path and the value: keep it only when the value is shown.
    throw nativeError(
      op,
      `tls.${field}: cannot read ${shown} (${code})`,
      shown.startsWith('"') ? e : undefined,
    );
  }
  // A key file is secret; so is any file that bundles a private key with its certificate.
  if (field === 'key' || text.includes('PRIVATE KEY')) ctx.redactor.register(text);
  if (!text.includes('-----BEGIN'))
    throw nativeError(op, `tls.${field}: ${shown} is not a PEM file`);
  return text;
}

function proxyUrl(op: string, text: string, ctx: NativeContext): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (e) {
    throw nativeError(op, 'proxy is not a valid absolute URL', e);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw nativeError(op, `proxy must use http or https, got ${url.protocol}`);
  if (url.password) {
    const password = decodeURIComponent(url.password);
    ctx.redactor.register(password);
    ctx.redactor.register(url.password);
    const user = decodeURIComponent(url.username);
    ctx.redactor.register(Buffer.from(`${user}:${password}`).toString('base64'));
  }
  return url.href;
}

/** A proxy URL fit for a message: no credentials. */
export function shownProxy(proxy: string): string {
  const url = new URL(proxy);
  return `${url.protocol}//${url.host}`;
}

/**
 * Sends one request. With a transport, the dispatcher lives as long as `use` runs (the body is
 * read or streamed inside it) and is destroyed after. Honours `signal`.
 */
export async function send<T>(
  url: URL,
  init: RequestInit,
  transport: Transport | undefined,
  signal: AbortSignal,
  use: (res: HttpResponse) => Promise<T>,
): Promise<T> {
  if (!transport) return use((await fetch(url, { ...init, signal })) as unknown as HttpResponse);
  const undici = require('undici') as typeof Undici;
  const tls = transport.tls ?? {};
  const dispatcher: Undici.Dispatcher = transport.proxy
    ? new undici.ProxyAgent({ uri: transport.proxy, requestTls: tls })
    : new undici.Agent({ connect: tls });
  try {
    const headers = init.headers instanceof Headers ? [...init.headers] : undefined;
    const res = await undici.fetch(url, {
      method: init.method ?? 'GET',
      ...(headers ? { headers } : {}),
      ...(typeof init.body === 'string' ? { body: init.body } : {}),
      redirect: init.redirect ?? 'follow',
      signal,
      dispatcher,
    });
    return await use(res as unknown as HttpResponse);
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}

/** Certificate failures worth a hint (Node's TLS error codes). */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A hint for a transport failure code, or ''. */
export function transportHint(code: string): string {
  if (UNTRUSTED.has(code))
    return ': the server certificate is not trusted; give tls: {ca: "ca.pem"} with the CA that signed it';
  return '';
}

/**
 * Turns an `http.*` call's arguments into a fetch request: URL and query, headers, one body
 * (`body` as JSON, `text`, or `form`), auth, redirect policy and timeout.
 *
 * Every credential it sees (bearer tokens, basic passwords, `Authorization`/`Cookie` header
 * values, URL passwords) is registered with the redactor before anything is sent, so no later
 * message can leak it. It does no I/O.
 */
import {
  formatValue,
  isObject,
  type MhlObject,
  toJson,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import { type ArgReader, nativeError } from './args.js';
import type { NativeContext } from './native.js';

/** Options every `http.*` call accepts by name. */
export const HTTP_OPTIONS = [
  'headers',
  'query',
  'body',
  'text',
  'form',
  'timeout',
  'follow_redirects',
  'raise_for_status',
  'auth',
  'tls',
  'proxy',
] as const;

/** Default request timeout. */
export const HTTP_TIMEOUT_MS = 30_000;

/** Header names whose values are always secrets. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** A checked request, ready for `fetch`. */
export interface HttpRequest {
  readonly url: URL;
  readonly init: RequestInit & { method: string; headers: Headers };
  readonly timeoutMs: number;
  readonly raiseForStatus: boolean;
}

/** A scalar as text for headers, query strings and forms; raises for anything else. */
function scalar(op: string, where: string, v: Value): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    return formatValue(v);
  throw nativeError(op, `${where} must be a string, number or bool, got ${typeOf(v)}`);
}

/** Appends an object's fields as `key=value` pairs (arrays repeat the key; null is skipped). */
function appendParams(op: string, what: string, target: URLSearchParams, params: MhlObject): void {
  for (const [key, v] of Object.entries(params)) {
    if (v === null) continue;
    const values = Array.isArray(v) ? v : [v];
    for (const x of values) target.append(key, scalar(op, `${what}.${key}`, x));
  }
}

function requestUrl(a: ArgReader, ctx: NativeContext): URL {
  const text = a.string('url');
  let url: URL;
  try {
    url = new URL(text);
  } catch (e) {
    throw nativeError(a.op, `url is not a valid absolute URL: "${text}"`, e);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw nativeError(a.op, `url must use http or https, got ${url.protocol}`);
  }
  if (url.password) ctx.redactor.register(decodeURIComponent(url.password));
  const query = a.optObject('query');
  if (query) appendParams(a.op, 'query', url.searchParams, query);
  return url;
}

function authHeader(a: ArgReader, ctx: NativeContext): string | undefined {
  const auth = a.optObject('auth');
  if (!auth) return undefined;
  const { bearer, basic } = auth;
  if (typeof bearer === 'string') {
    ctx.redactor.register(bearer);
    return `Bearer ${bearer}`;
  }
  if (isObject(basic)) {
    const { user, password } = basic;
    if (typeof user === 'string' && typeof password === 'string') {
      ctx.redactor.register(password);
      const token = Buffer.from(`${user}:${password}`).toString('base64');
      ctx.redactor.register(token);
      return `Basic ${token}`;
    }
  }
  throw nativeError(a.op, 'auth must be {bearer: "…"} or {basic: {user: "…", password: "…"}}');
}

function requestHeaders(a: ArgReader, ctx: NativeContext): Headers {
  const headers = new Headers();
  for (const [name, v] of Object.entries(a.optObject('headers') ?? {})) {
    if (v === null) continue;
    const value = scalar(a.op, `headers.${name}`, v);
    try {
      headers.set(name, value);
    } catch (e) {
      throw nativeError(a.op, `headers.${name} is not a valid header`, e);
    }
  }
  const auth = authHeader(a, ctx);
  if (auth !== undefined) headers.set('authorization', auth);
  for (const [name, value] of headers) {
    if (SECRET_HEADERS.has(name)) {
      ctx.redactor.register(value);
      const credential = value.replace(/^(Bearer|Basic|Token)\s+/i, '');
      if (credential !== value) ctx.redactor.register(credential);
    }
  }
  return headers;
}

/** Sets the one body the call gave (`body` JSON, `text`, `form`) and its default content type. */
function requestBody(a: ArgReader, method: string, headers: Headers): string | undefined {
  const given = (['body', 'text', 'form'] as const).filter((k) => a.has(k));
  if (given.length === 0) return undefined;
  if (given.length > 1) {
    throw nativeError(a.op, `give only one of body, text and form (got ${given.join(', ')})`);
  }
  if (method === 'GET' || method === 'HEAD') {
    throw nativeError(a.op, `a ${method} request cannot have a body`);
  }
  const setType = (type: string): void => {
    if (!headers.has('content-type')) headers.set('content-type', type);
  };
  if (given[0] === 'text') {
    setType('text/plain; charset=utf-8');
    return a.string('text');
  }
  if (given[0] === 'form') {
    const form = new URLSearchParams();
    appendParams(a.op, 'form', form, a.optObject('form') ?? {});
    setType('application/x-www-form-urlencoded');
    return form.toString();
  }
  setType('application/json');
  return toJson(a.value('body'));
}

/**
 * Reads and checks a call's request arguments (raises `NATIVE` for any malformed one). `tls` and
 * `proxy` are read by http-transport.ts.
 */
export function buildRequest(a: ArgReader, method: string, ctx: NativeContext): HttpRequest {
  const url = requestUrl(a, ctx);
  const headers = requestHeaders(a, ctx);
  const body = requestBody(a, method, headers);
  const follow = a.optBool('follow_redirects') ?? true;
  const init: HttpRequest['init'] = { method, headers, redirect: follow ? 'follow' : 'manual' };
  if (body !== undefined) init.body = body;
  return {
    url,
    init,
    timeoutMs: a.optDuration('timeout') ?? HTTP_TIMEOUT_MS,
    raiseForStatus: a.optBool('raise_for_status') ?? false,
  };
}

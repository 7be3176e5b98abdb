/**
 * The `http` native namespace: HTTP requests (through the global `fetch`, or undici's when a call
 * gives `tls` or `proxy`: http-transport.ts), and downloads to a file under the run's working
 * directory.
 *
 * A response of any status is a value (`{status, body, headers, ok, json}`); transport failure,
 * timeout, an oversized body and (with `raise_for_status: true`) a non-2xx status raise
 * `NATIVE`. Every request is bound to the run's signal combined with its own timeout; a
 * cancelled run rejects with the abort reason. See the language digest, §8 "http".
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { LangError } from '../../lang/index.js';
import { type CallArgs, fromJson, newObject, type Value } from '../interpreter/values.js';
import { deadline } from '../services/deadline.js';
import { type ArgReader, defineNamespace, formatDuration, nativeError, readArgs } from './args.js';
import { fsError } from './fs.js';
import { buildRequest, HTTP_OPTIONS, type HttpRequest } from './http-request.js';
import {
  type HttpResponse,
  readTransport,
  send,
  shownProxy,
  type Transport,
  transportHint,
} from './http-transport.js';
import type { NativeContext, NativeOp } from './native.js';

/** Cap on a response body held in memory (downloads stream to disk and have none). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/** Runs `work` with the request's combined signal and maps every failure to an MHL error. */
async function withRequest<T>(
  op: string,
  req: HttpRequest,
  transport: Transport | undefined,
  ctx: NativeContext,
  use: (res: HttpResponse, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  ctx.signal.throwIfAborted();
  const limit = deadline(ctx.signal, req.timeoutMs, op);
  try {
    return await send(req.url, req.init, transport, limit.signal, (res) => use(res, limit.signal));
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (limit.expired()) {
      throw nativeError(op, `timed out after ${formatDuration(req.timeoutMs)}`, e);
    }
    if (e instanceof LangError) throw e;
    const why = reason(e);
    const via = transport?.proxy ? ` via proxy ${shownProxy(transport.proxy)}` : '';
    throw nativeError(
      op,
      `request to ${req.url.origin}${req.url.pathname}${via} failed: ${why}${transportHint(why)}`,
      e,
    );
  } finally {
    limit.dispose();
  }
}

/** The most specific reason a fetch failure carries (`ECONNREFUSED`, …). */
function reason(e: unknown): string {
  const cause = e instanceof Error ? (e.cause as NodeJS.ErrnoException | undefined) : undefined;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return e instanceof Error ? e.message : String(e);
}

/** Reads a body as UTF-8 text, raising `NATIVE` beyond `MAX_BODY_BYTES`. */
async function readBody(op: string, res: HttpResponse): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) {
      await res.body.cancel().catch(() => undefined);
      throw nativeError(
        op,
        `response body exceeded ${MAX_BODY_BYTES / 1024 / 1024} MiB; use http.download`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function headersValue(res: HttpResponse): Value {
  return newObject([...res.headers].map(([k, v]) => [k, v] as const));
}

function checkStatus(op: string, req: HttpRequest, res: HttpResponse): void {
  if (req.raiseForStatus && !res.ok) {
    const text = `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    throw nativeError(op, `${text} from ${req.url.origin}${req.url.pathname}`);
  }
}

function parseJsonBody(res: HttpResponse, body: string): Value {
  if (!JSON_TYPE.test(res.headers.get('content-type') ?? '') || body.trim() === '') return null;
  try {
    return fromJson(JSON.parse(body));
  } catch {
    // A JSON content type with a malformed body: `json` is null, `body` keeps the text.
    return null;
  }
}

function method(name: string, verb: string): NativeOp {
  const op = `http.${name}`;
  return async (args: CallArgs, ctx: NativeContext): Promise<Value> => {
    const a = readArgs(op, args, { positional: ['url'], named: HTTP_OPTIONS });
    const req = buildRequest(a, verb, ctx);
    const transport = await readTransport(a, ctx);
    return withRequest(op, req, transport, ctx, async (res) => {
      const body = await readBody(op, res);
      checkStatus(op, req, res);
      return newObject([
        ['status', res.status],
        ['body', body],
        ['headers', headersValue(res)],
        ['ok', res.ok],
        ['json', parseJsonBody(res, body)],
      ]);
    });
  };
}

async function saveBody(
  a: ArgReader,
  res: HttpResponse,
  path: string,
  ctx: NativeContext,
  signal: AbortSignal,
): Promise<number> {
  const abs = resolve(ctx.cwd, path);
  let bytes = 0;
  try {
    await mkdir(dirname(abs), { recursive: true });
    const source = res.body
      ? Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>)
      : Readable.from([]);
    source.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    await pipeline(source, createWriteStream(abs), { signal });
  } catch (e) {
    if (signal.aborted) throw e;
    throw fsError(a.op, path, e, ctx.signal);
  }
  return bytes;
}

/** `http.download(url, path, …options)` → `{status, path, bytes, ok, headers}`; writes only on 2xx. */
async function download(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('http.download', args, { positional: ['url', 'path'], named: HTTP_OPTIONS });
  const req = buildRequest(a, 'GET', ctx);
  const path = a.string('path');
  const transport = await readTransport(a, ctx);
  return withRequest(a.op, req, transport, ctx, async (res, signal) => {
    if (!res.ok) {
      await res.body?.cancel();
      checkStatus(a.op, req, res);
    }
    const bytes = res.ok ? await saveBody(a, res, path, ctx, signal) : 0;
    return newObject([
      ['status', res.status],
      ['path', path],
      ['bytes', bytes],
      ['ok', res.ok],
      ['headers', headersValue(res)],
    ]);
  });
}

/**
 * The `http` namespace: `get post put patch delete head options download`. Raises `NATIVE` for
 * bad arguments, transport failure, timeout and (with `raise_for_status`) non-2xx; honours
 * `ctx.signal`.
 */
export const HTTP_NAMESPACE = defineNamespace({
  get: method('get', 'GET'),
  post: method('post', 'POST'),
  put: method('put', 'PUT'),
  patch: method('patch', 'PATCH'),
  delete: method('delete', 'DELETE'),
  head: method('head', 'HEAD'),
  options: method('options', 'OPTIONS'),
  download,
});

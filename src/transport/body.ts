/**
 * Reads an HTTP request body up to a byte cap. Over the cap it stops collecting at once (a
 * declared `Content-Length` over the cap is refused before any byte is read) and never buffers
 * the rest: the caller answers 413 at once and calls `discardRest`, which throws the remaining
 * bytes away unread so the peer can see the answer (closing a socket with unread data resets it,
 * and the client would get EPIPE instead of the 413). Past a bound the connection is dropped.
 */
import type { IncomingMessage } from 'node:http';

/** Largest JSON-RPC body accepted over HTTP. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Most bytes thrown away after a refused body before the connection is dropped. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024;
/** Longest wait for a refused body to finish arriving before the connection is dropped. */
const MAX_DISCARD_MS = 5000;

/** What `readBody` resolves to. */
export type BodyResult =
  | { ok: true; text: string }
  | { ok: false; reason: 'too-large' | 'aborted' };

/** Reads `req` as UTF-8 text of at most `limit` bytes. Never rejects. */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      done(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        chunks.length = 0;
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onAbort);
    req.once('close', onAbort);
  });
}

/** True when the `Content-Type` media type is `application/json` (parameters such as charset ok). */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const media = value.split(';', 1)[0]?.trim().toLowerCase();
  return media === 'application/json';
}

/** Throws away the rest of a refused body without keeping it; drops the connection past a bound. */
export function discardRest(req: IncomingMessage): void {
  let seen = 0;
  const timer = setTimeout(() => req.destroy(), MAX_DISCARD_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > MAX_DISCARD_BYTES) req.destroy();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

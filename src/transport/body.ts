/**
 * Reads an HTTP request body up to a byte cap, within a deadline, and within a byte budget all
 * requests share. Over the cap it stops collecting at once (a declared `Content-Length` over the
 * cap is refused before any byte is read) and never buffers the rest: the caller answers 413 at
 * once and calls `discardRest`, which throws the remaining bytes away unread so the peer can see
 * the answer (closing a socket with unread data resets it, and the client would get EPIPE
 * instead of the 413). Past a bound the connection is dropped.
 *
 * The budget is what bounds memory against slow clients: a thousand connections that each send
 * a body one byte short of the cap and stop would otherwise hold a thousand caps. A body that
 * does not fit is refused (`busy`, 503) rather than waited for; the deadline (`timeout`, 408)
 * gives its bytes back to the budget when a client stalls.
 */
import type { IncomingMessage } from 'node:http';

/** Largest JSON-RPC body accepted over HTTP. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Most bytes thrown away after a refused body before the connection is dropped. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024;
/** Longest wait for a refused body to finish arriving before the connection is dropped. */
const MAX_DISCARD_MS = 5000;

/**
 * Bytes of request bodies held in memory at once, across every connection. One instance per
 * server; `readBody` takes bytes as chunks arrive and gives them all back when it finishes. One
 * remote address may hold at most half of it, so clients that stall from one address cannot
 * starve everyone else of it (on a loopback bind every local client shares one address, so
 * there the half is all of them).
 */
export class BodyBudget {
  readonly capacity: number;
  readonly perAddress: number;
  #used = 0;
  /** Bytes held by remote address; an address leaves the map when it holds none. */
  readonly #held = new Map<string, number>();

  constructor(capacity: number) {
    this.capacity = capacity;
    this.perAddress = Math.floor(capacity / 2);
  }

  /** Bytes currently held. */
  get used(): number {
    return this.#used;
  }

  /** Takes `bytes` for `address` if they fit; false (nothing taken) when they do not. */
  take(address: string, bytes: number): boolean {
    const held = this.#held.get(address) ?? 0;
    if (this.#used + bytes > this.capacity || held + bytes > this.perAddress) return false;
    this.#used += bytes;
    if (bytes > 0) this.#held.set(address, held + bytes);
    return true;
  }

  give(address: string, bytes: number): void {
    if (bytes === 0) return;
    this.#used -= bytes;
    const left = (this.#held.get(address) ?? bytes) - bytes;
    if (left === 0) this.#held.delete(address);
    else this.#held.set(address, left);
  }
}

/** How every body of one server is read: its deadline and the budget all bodies share. */
export interface BodyLimits {
  /** Longest wait, from the handler's first look at the body, for all of it to arrive. */
  readonly timeoutMs: number;
  readonly budget: BodyBudget;
}

/** What `readBody` resolves to. */
export type BodyResult =
  | { ok: true; text: string }
  | { ok: false; reason: 'too-large' | 'aborted' | 'timeout' | 'busy' };

/**
 * Reads `req` as UTF-8 text of at most `limit` bytes, within `limits`. Never rejects. On
 * `timeout` and `busy` the request is paused and the rest of its body unread: answer, then close
 * the connection or `discardRest`.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  limits: BodyLimits,
): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ ok: false, reason: 'too-large' });
  }
  // A declared length is taken from the budget whole, before a byte is read: a body that cannot
  // fit is refused without reading on (what Node has already read of it is all it costs). A
  // chunked body takes its bytes as they come.
  const address = req.socket.remoteAddress ?? '';
  const reserved = Number.isFinite(declared) ? declared : 0;
  if (!limits.budget.take(address, reserved)) return Promise.resolve({ ok: false, reason: 'busy' });
  return new Promise((done) => {
    // Chunks as they came: nothing is allocated ahead of the bytes a client actually sent.
    const chunks: Buffer[] = [];
    let size = 0;
    let taken = reserved;
    const finish = (result: BodyResult) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      limits.budget.give(address, taken);
      if (!result.ok) {
        req.pause();
        chunks.length = 0;
      }
      done(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish({ ok: false, reason: 'too-large' });
      if (size > taken) {
        if (!limits.budget.take(address, size - taken))
          return finish({ ok: false, reason: 'busy' });
        taken = size;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), limits.timeoutMs);
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

/**
 * Reads an HTTP request body up to a byte cap, within a deadline, and within a byte budget all
 * requests share. Over the cap it stops collecting at once (a declared `Content-Length` over the
 * cap is refused before any byte is read) and never buffers the rest: the caller answers 413 at
 * once and calls `discardRest`, which throws the remaining bytes away unread so the peer can see
 * the answer (closing a socket with unread data resets it, and the client would get EPIPE
 * instead of the 413). Past a bound the connection is dropped.
 *
 * The budget is what bounds memory against slow clients: a thousand connections that each send
 * a body one byte short of the cap and stop would otherwise hold a thousand caps. Bytes are taken
 * as they arrive, never for a declared length, so a client holds only what it really sent. When
 * a body does not fit, bodies that have *stalled* (nothing for a tenth of the body deadline) are
 * shed to make room (`stalled`, 408), longest stalled first: a few clients that send and stop
 * cannot keep out the ones that are sending. Only when nothing has stalled is the new body refused
 * (`busy`, 503, retryable); the deadline (`timeout`, 408) frees the rest.
 */
import type { IncomingMessage } from 'node:http';
import { socketBlock } from './client-key.js';

/** Largest JSON-RPC body accepted over HTTP. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Most bytes thrown away after a refused body before the connection is dropped. */
const MAX_DISCARD_BYTES = 16 * 1024 * 1024;
/** Longest wait for a refused body to finish arriving before the connection is dropped. */
const MAX_DISCARD_MS = 5000;

/** One body being read, as the budget sees it. */
interface Reader {
  readonly address: string;
  taken: number;
  /** When its last bytes arrived (or it began). */
  lastDataAt: number;
  /** Ends the read as stalled, giving its bytes back. */
  readonly shed: () => void;
}

/**
 * Bytes of request bodies held in memory at once, across every connection. One instance per
 * server; `readBody` takes bytes as chunks arrive and gives them all back when it finishes. One
 * remote address may hold at most half of it, so clients that stall from one address cannot
 * starve everyone else of it (on a loopback bind every local client shares one address, so
 * there the half is all of them, and shedding stalled bodies is what keeps it usable).
 */
export class BodyBudget {
  readonly capacity: number;
  readonly perAddress: number;
  #used = 0;
  #shed = 0;
  /** Bytes held by remote address; an address leaves the map when it holds none. */
  readonly #held = new Map<string, number>();
  readonly #readers = new Set<Reader>();
  readonly #now: () => number;

  constructor(capacity: number, now: () => number = Date.now) {
    this.capacity = capacity;
    this.perAddress = Math.floor(capacity / 2);
    this.#now = now;
  }

  /** Bytes currently held. */
  get used(): number {
    return this.#used;
  }

  /** Stalled bodies ended to make room, since start-up. */
  get shed(): number {
    return this.#shed;
  }

  /** Starts tracking one body from `address`. */
  open(address: string, shed: () => void): Reader {
    const reader: Reader = { address, taken: 0, lastDataAt: this.#now(), shed };
    this.#readers.add(reader);
    return reader;
  }

  /**
   * Takes `bytes` more for `reader`, shedding readers stalled for `stalledMs` or longer (its own
   * address's first when that address is over its half) until they fit; false when they cannot.
   */
  take(reader: Reader, bytes: number, stalledMs: number): boolean {
    reader.lastDataAt = this.#now();
    if (!this.#fits(reader.address, bytes)) {
      // Shed only when shedding makes room: a staller ended for nothing is a 408 for nothing.
      const victims = this.#stalled(reader, stalledMs);
      const freed = (own: boolean) =>
        victims.reduce((sum, v) => sum + (!own || v.address === reader.address ? v.taken : 0), 0);
      const ownOver = this.#over(reader.address, bytes, 'address');
      const totalOver = this.#over(reader.address, bytes, 'total');
      if (freed(true) < ownOver || freed(false) < totalOver) return false;
      // Longest stalled first; its own address's first when that address is over its half.
      for (const victim of victims) {
        if (this.#fits(reader.address, bytes)) break;
        if (this.#over(reader.address, bytes, 'address') > 0 && victim.address !== reader.address)
          continue;
        this.#shed++;
        victim.shed();
      }
      if (!this.#fits(reader.address, bytes)) return false;
    }
    this.#used += bytes;
    reader.taken += bytes;
    this.#held.set(reader.address, (this.#held.get(reader.address) ?? 0) + bytes);
    return true;
  }

  /**
   * Whether `bytes` from `address` fit as they are, with nobody shed: a body that arrived whole
   * and fits is counted and given back at once, so nothing about the budget changes and no
   * reader need be tracked for it.
   */
  fits(address: string, bytes: number): boolean {
    return this.#fits(address, bytes);
  }

  /** Gives back everything `reader` holds and stops tracking it. */
  close(reader: Reader): void {
    if (!this.#readers.delete(reader)) return;
    this.#used -= reader.taken;
    const left = (this.#held.get(reader.address) ?? 0) - reader.taken;
    if (left <= 0) this.#held.delete(reader.address);
    else this.#held.set(reader.address, left);
    reader.taken = 0;
  }

  #fits(address: string, bytes: number): boolean {
    return this.#over(address, bytes, 'address') <= 0 && this.#over(address, bytes, 'total') <= 0;
  }

  /** By how many bytes taking `bytes` for `address` would pass its half, or the whole. */
  #over(address: string, bytes: number, bound: 'address' | 'total'): number {
    return bound === 'total'
      ? this.#used + bytes - this.capacity
      : (this.#held.get(address) ?? 0) + bytes - this.perAddress;
  }

  /** Other readers holding bytes that received nothing for `stalledMs`, longest stalled first. */
  #stalled(reader: Reader, stalledMs: number): Reader[] {
    const before = this.#now() - stalledMs;
    return [...this.#readers]
      .filter((r) => r !== reader && r.taken > 0 && r.lastDataAt <= before)
      .sort((a, b) => a.lastDataAt - b.lastDataAt);
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
  | { ok: false; reason: 'too-large' | 'aborted' | 'timeout' | 'stalled' | 'busy' };

/**
 * Reads `req` as UTF-8 text of at most `limit` bytes, within `limits`. Never rejects. On
 * `timeout`, `stalled` and `busy` the request is paused and the rest of its body unread: answer, then close
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
  // The request handler runs while Node's parser is still inside the bytes that carried the
  // headers; a small body nearly always came with them, and one microtask later the stream has
  // buffered all of it (its declared length). Such a body is taken whole, without a deadline
  // timer and four listeners.
  return Promise.resolve().then(() =>
    Number.isFinite(declared) &&
    req.readableLength === declared &&
    req.readableFlowing === null &&
    !req.destroyed
      ? readArrived(req, declared, limits)
      : readArriving(req, limit, limits),
  );
}

/** A body already buffered whole (`size` bytes, within the cap): the budget, as ever. */
function readArrived(req: IncomingMessage, size: number, limits: BodyLimits): BodyResult {
  const { budget } = limits;
  const address = socketBlock(req.socket);
  // Counted (and stalled bodies shed for it) as if it had arrived in one chunk, then given back;
  // when it fits as things are, counting it and giving it back changes nothing, so is skipped.
  if (!budget.fits(address, size)) {
    const reader = budget.open(address, () => undefined);
    const fits = budget.take(reader, size, limits.timeoutMs / 10);
    budget.close(reader);
    if (!fits) return { ok: false, reason: 'busy' };
  }
  const body: Buffer | null = req.read();
  // Lets the stream reach its end (nothing is left to read), as a reader of chunks would.
  req.resume();
  return { ok: true, text: body === null ? '' : body.toString('utf8') };
}

/** A body still on its way: chunks as they come, within the deadline and the budget. */
function readArriving(
  req: IncomingMessage,
  limit: number,
  limits: BodyLimits,
): Promise<BodyResult> {
  // Stalled: nothing for a tenth of the deadline (1 s of the default 10 s). A body on its way
  // arrives in far less; one that waits that long can give its place to one that is arriving.
  const stalledMs = limits.timeoutMs / 10;
  const { budget } = limits;
  return new Promise((done) => {
    // Chunks as they came: nothing is allocated ahead of the bytes a client actually sent.
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onAbort);
      budget.close(reader);
      if (!result.ok) {
        req.pause();
        chunks.length = 0;
      }
      done(result);
    };
    const reader = budget.open(socketBlock(req.socket), () =>
      finish({ ok: false, reason: 'stalled' }),
    );
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish({ ok: false, reason: 'too-large' });
      if (!budget.take(reader, chunk.length, stalledMs))
        return finish({ ok: false, reason: 'busy' });
      chunks.push(chunk);
    };
    const onEnd = () => {
      // A small body is nearly always one chunk: decode it without copying it first.
      const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      finish({ ok: true, text: whole.toString('utf8') });
    };
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout' }), limits.timeoutMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onAbort);
    req.once('close', onAbort);
  });
}

/**
 * The media type of a `Content-Type` value (RFC 9110 §8.3.1: `type/subtype` then parameters),
 * lower-cased, without its parameters; undefined when absent or not of that form.
 */
export function mediaTypeOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const media = value.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/.test(media) ? media : undefined;
}

/** True when the `Content-Type` media type is `application/json` (parameters such as charset ok). */
export function isJsonContentType(value: string | undefined): boolean {
  // Nearly every POST says exactly this: no split, trim, lower-casing or pattern for it.
  if (value === 'application/json') return true;
  return mediaTypeOf(value) === 'application/json';
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

/**
 * A size cap in front of the protocol reader. vscode-jsonrpc buffers a message until its
 * declared Content-Length has arrived, however large, so one runaway message could exhaust the
 * server's memory. This stream passes the byte stream through unchanged, except that a message
 * declaring more than the cap is skipped (headers and body) and reported. Malformed headers pass
 * through untouched: the reader reports those itself and carries on.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** A header block longer than this is not LSP framing; it is passed on for the reader to reject. */
const MAX_HEADER_BYTES = 8 * 1024;
const TERMINATOR = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /^content-length:\s*(\d+)\s*$/im;

export class FrameGuard extends Transform {
  readonly #maxBytes: number;
  readonly #onDrop: (bytes: number) => void;
  /** Header bytes of the message being read, until its blank line arrives. */
  #header: Buffer = Buffer.alloc(0);
  /** Body bytes of the current message still to pass on, or to skip. */
  #pass = 0;
  #skip = 0;

  constructor(maxBytes: number, onDrop: (bytes: number) => void) {
    super();
    this.#maxBytes = maxBytes;
    this.#onDrop = onDrop;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#pass > 0 || this.#skip > 0) {
        const n = Math.min(this.#pass || this.#skip, chunk.length - at);
        if (this.#pass > 0) {
          this.push(chunk.subarray(at, at + n));
          this.#pass -= n;
        } else this.#skip -= n;
        at += n;
        continue;
      }
      const combined = Buffer.concat([this.#header, chunk.subarray(at)]);
      const end = combined.indexOf(TERMINATOR);
      if (end < 0) {
        if (combined.length > MAX_HEADER_BYTES) {
          this.push(combined);
          this.#header = Buffer.alloc(0);
        } else this.#header = combined;
        break;
      }
      const headerLength = end + TERMINATOR.length;
      at += headerLength - this.#header.length;
      const header = combined.subarray(0, headerLength);
      this.#header = Buffer.alloc(0);
      const declared = CONTENT_LENGTH.exec(header.toString('latin1'));
      const length = declared ? Number(declared[1]) : 0;
      if (length > this.#maxBytes) {
        this.#skip = length;
        this.#onDrop(length);
      } else {
        this.push(header);
        this.#pass = length;
      }
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#header.length) this.push(this.#header);
    done();
  }
}

/**
 * MCP over stdio: one JSON-RPC message per line on stdin, one per line on stdout, nothing else on
 * stdout. Messages are handled concurrently (so `notifications/cancelled` can reach a running
 * call) and answers are written whole, one line each. EOF on stdin ends the connection.
 *
 * Knows nothing of workflows: it moves lines between the streams and `handle`. A line that is
 * the client's response to a server request goes to `handle` like any other (the dispatcher
 * routes it); server requests and notifications go out through `send`.
 */
import type { Readable, Writable } from 'node:stream';

/** Lines longer than this are answered with a parse error and dropped, never buffered further. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** How much of a dropped line's start and end is kept, for the answer to name its request id. */
const EDGE_BYTES = 512;

export interface StdioOptions {
  readonly input: Readable;
  readonly output: Writable;
  /** Handles one line; resolves to the line to write back, if any. */
  readonly handle: (line: string) => Promise<string | undefined>;
  /**
   * Called once an over-long line has ended, with its first and last bytes (so the answer can
   * carry the request's id); returns the answer to write.
   */
  readonly tooLong: (head: string, tail: string) => string;
  readonly onError: (error: unknown) => void;
}

export class StdioTransport {
  readonly #options: StdioOptions;
  readonly #inflight = new Set<Promise<void>>();
  #buffer: Buffer[] = [];
  #size = 0;
  #discarding = false;
  #head = Buffer.alloc(0);
  #tail = Buffer.alloc(0);
  #closed = false;

  constructor(options: StdioOptions) {
    this.#options = options;
  }

  /** Reads until EOF; resolves once input ended and every in-flight message was answered. */
  async run(): Promise<void> {
    const input = this.#options.input;
    await new Promise<void>((done, fail) => {
      input.on('data', (chunk: Buffer) => this.#data(chunk));
      input.once('end', () => done());
      input.once('close', () => done());
      input.once('error', fail);
    });
    this.#flushLast();
    await Promise.allSettled([...this.#inflight]);
  }

  /** Writes a server-initiated message (a notification or a request to the client). */
  send(line: string): void {
    if (this.#closed) return;
    this.#options.output.write(`${line}\n`);
  }

  close(): void {
    this.#closed = true;
  }

  #data(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.#append(chunk.subarray(start, nl));
      this.#line();
      start = nl + 1;
    }
    this.#append(chunk.subarray(start));
  }

  #append(part: Buffer): void {
    if (part.length === 0) return;
    if (this.#discarding) {
      this.#keepTail(part);
      return;
    }
    this.#size += part.length;
    if (this.#size > MAX_LINE_BYTES) {
      const kept = Buffer.concat([...this.#buffer, part]);
      this.#head = kept.subarray(0, EDGE_BYTES);
      this.#tail = Buffer.from(kept.subarray(Math.max(0, kept.length - EDGE_BYTES)));
      this.#buffer = [];
      this.#discarding = true;
      return;
    }
    this.#buffer.push(part);
  }

  #keepTail(part: Buffer): void {
    // Only the part's own last bytes can reach the tail: never copy a whole chunk.
    const joined = Buffer.concat([
      this.#tail,
      part.subarray(Math.max(0, part.length - EDGE_BYTES)),
    ]);
    this.#tail = Buffer.from(joined.subarray(Math.max(0, joined.length - EDGE_BYTES)));
  }

  #line(): void {
    const wasDiscarding = this.#discarding;
    const text = Buffer.concat(this.#buffer).toString('utf8').replace(/\r$/, '');
    this.#buffer = [];
    this.#size = 0;
    this.#discarding = false;
    if (wasDiscarding) {
      // Answered when the line ends, not when it overflows: only then is its tail (where SDKs
      // serialise `id`) known. The line itself is never buffered past the cap.
      const [head, tail] = [this.#head.toString('utf8'), this.#tail.toString('utf8')];
      this.#head = Buffer.alloc(0);
      this.#tail = Buffer.alloc(0);
      this.send(this.#options.tooLong(head, tail.replace(/\r$/, '')));
      return;
    }
    if (text.trim() === '') return;
    const work = this.#options
      .handle(text)
      .then((answer) => {
        if (answer !== undefined) this.send(answer);
      })
      .catch(this.#options.onError)
      .finally(() => this.#inflight.delete(work));
    this.#inflight.add(work);
  }

  #flushLast(): void {
    if (this.#buffer.length > 0 || this.#discarding) this.#line();
  }
}

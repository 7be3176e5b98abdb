/**
 * A run's log: a bounded rolling buffer of its output, read with byte cursors
 * (`run/logs {since}` → `{text, nextSince, dropped}`).
 *
 * Output reaches the buffer one line at a time, each already redacted whole by the run's
 * redactor, so no secret can straddle two polls: a poll only ever sees complete lines. When the
 * buffer is full the oldest lines are dropped; a cursor that points before the oldest byte
 * still held gets what is left and `dropped: true`.
 */

/** Default buffer size per run (spec/mhl-serve.md §4.5). */
const RUN_LOG_BYTES = 64 * 1024;

export interface LogSlice {
  readonly text: string;
  /** The cursor to pass as `since` next time. */
  readonly nextSince: number;
  /** True when bytes between `since` and the oldest byte held were dropped. */
  readonly dropped: boolean;
}

export class RunLog {
  readonly #limit: number;
  /** Lines held, each with its own trailing newline, as UTF-8. */
  readonly #lines: Buffer[] = [];
  #held = 0;
  /** Byte offset (since the run began) of the first byte still held. */
  #start = 0;

  readonly #onAppend: (() => void) | undefined;

  /** `onAppend` is told after each line is held (a subscriber may want to re-read the log). */
  constructor(limit = RUN_LOG_BYTES, onAppend?: () => void) {
    this.#limit = limit;
    this.#onAppend = onAppend;
  }

  /** Total bytes ever written: the cursor at the end of the log. */
  get end(): number {
    return this.#start + this.#held;
  }

  append(line: string): void {
    this.#hold(line);
    this.#onAppend?.();
  }

  #hold(line: string): void {
    const bytes: Buffer = Buffer.from(`${line}\n`, 'utf8');
    if (bytes.length > this.#limit) {
      // A line longer than the whole buffer replaces everything and keeps only its tail.
      const kept = tail(bytes, this.#limit);
      this.#start += this.#held + (bytes.length - kept.length);
      this.#lines.length = 0;
      this.#lines.push(kept);
      this.#held = kept.length;
      return;
    }
    this.#lines.push(bytes);
    this.#held += bytes.length;
    while (this.#held > this.#limit) {
      const first = this.#lines.shift() as Buffer;
      this.#held -= first.length;
      this.#start += first.length;
    }
  }

  /** Everything from byte `since` on. A cursor at or past the end reads nothing. */
  read(since = 0): LogSlice {
    const end = this.end;
    if (since >= end) return { text: '', nextSince: end, dropped: false };
    const dropped = since < this.#start;
    let offset = this.#start;
    const parts: Buffer[] = [];
    for (const line of this.#lines) {
      const lineEnd = offset + line.length;
      if (lineEnd > since) parts.push(offset >= since ? line : line.subarray(since - offset));
      offset = lineEnd;
    }
    return { text: Buffer.concat(parts).toString('utf8'), nextSince: end, dropped };
  }
}

/** The last `limit` bytes of `bytes`, not starting inside a UTF-8 sequence. */
function tail(bytes: Buffer, limit: number): Buffer {
  let from = bytes.length - limit;
  while (from < bytes.length && ((bytes[from] as number) & 0xc0) === 0x80) from++;
  return bytes.subarray(from);
}

/**
 * The streamed form of one `POST /mcp` answer: a `text/event-stream` that carries the
 * messages the server has for that request (step progress, and requests to the client such as
 * `elicitation/create`, whose responses come back as POSTs) as SSE `message` events, then
 * the JSON-RPC response(s) as the last event(s), and then ends. A POST is answered this way only
 * when the client listed `text/event-stream` in `Accept` and the server had something to send
 * before the answer; every other POST gets one JSON body (the fast path, in `mcp-post.ts`).
 *
 * The stream is opened lazily, by the first notification, so a request that never reports
 * anything pays nothing for having asked for a stream. Events carry no `id`: there is no GET
 * stream to resume from, so a client has nothing to replay and never reconnects.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server
 */
import type { ServerResponse } from 'node:http';

/** The headers of every event stream the server opens. */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  // Proxies must pass each event on at once, not buffer or transform the stream.
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/**
 * True when an `Accept` header lists `text/event-stream` with a non-zero quality. Wildcards do
 * not count: a client that never heard of MCP streams (curl's `*\/*`) keeps getting JSON.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  // A client sends the same Accept on every request: the last answer is reused as is.
  if (accept === lastAccept.value) return lastAccept.streams;
  let streams = false;
  for (const range of accept.split(',')) {
    const [media, ...params] = range.split(';');
    if (media?.trim().toLowerCase() !== 'text/event-stream') continue;
    const quality = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    if (quality === undefined || Number(quality.slice(2)) > 0) {
      streams = true;
      break;
    }
  }
  lastAccept.value = accept;
  lastAccept.streams = streams;
  return streams;
}

/** The last `Accept` value `acceptsEventStream` parsed, and its answer. */
const lastAccept: { value: string | undefined; streams: boolean } = {
  value: undefined,
  streams: false,
};

/** One SSE `message` event holding a JSON-RPC message (JSON text has no raw line breaks). */
export function messageEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * The event stream of one POST; opened by the first `send`, closed by `end`. What one turn of
 * the event loop sends is written together, a microtask later: a call that reports progress
 * and answers in the same turn (a run with nothing to wait for) is one body with its length,
 * written once, instead of a status line and chunks; a longer one gets each event as it comes.
 */
export class EventStream {
  readonly #res: ServerResponse;
  #open = false;
  #ended = false;
  /** Events sent and not yet written. */
  #pending = '';
  /** A write of `#pending` is queued. */
  #queued = false;
  /** The status and headers are written (the body is chunked from then on). */
  #headed = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** True once the stream has been opened (its answer is an event stream with status 200). */
  get started(): boolean {
    return this.#open;
  }

  /**
   * Sends one server message (a notification or request) as an event, opening the stream first if need
   * be. Dropped once the stream ended or the client went away.
   */
  send(message: unknown): void {
    if (this.#ended || this.#res.destroyed || this.#res.writableEnded) return;
    this.#open = true;
    this.#pending += messageEvent(message);
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#queued = false;
    const res = this.#res;
    if (this.#ended || this.#pending === '' || res.destroyed || res.writableEnded) return;
    if (!this.#headed) {
      this.#headed = true;
      res.writeHead(200, STREAM_HEADERS);
    }
    const text = this.#pending;
    this.#pending = '';
    res.write(text);
  }

  /**
   * Writes each final message as its own event (a batch answer becomes one event per response,
   * since clients parse one message per event) and ends the stream. Only for a started stream.
   */
  end(messages: readonly unknown[]): void {
    if (this.#ended) return;
    this.#ended = true;
    const res = this.#res;
    if (res.destroyed || res.writableEnded) return;
    let text = this.#pending;
    this.#pending = '';
    for (const message of messages) text += messageEvent(message);
    if (!this.#headed) {
      // Nothing written yet, and all of it known: one body, with its length.
      this.#headed = true;
      res.writeHead(200, { ...STREAM_HEADERS, 'content-length': Buffer.byteLength(text) });
    }
    res.end(text);
  }
}

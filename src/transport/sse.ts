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

/** The event stream of one POST; opened by the first `send`, closed by `end`. */
export class EventStream {
  readonly #res: ServerResponse;
  #open = false;
  #ended = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** True once the stream has been opened (status 200 and its headers are on the wire). */
  get started(): boolean {
    return this.#open;
  }

  /**
   * Writes one server message (a notification or request) as an event, opening the stream first if need
   * be. Dropped once the stream ended or the client went away.
   */
  send(message: unknown): void {
    if (this.#ended || this.#res.destroyed || this.#res.writableEnded) return;
    if (!this.#open) {
      this.#open = true;
      this.#res.writeHead(200, STREAM_HEADERS);
    }
    this.#res.write(messageEvent(message));
  }

  /**
   * Writes each final message as its own event (a batch answer becomes one event per response,
   * since clients parse one message per event) and ends the stream. Only for a started stream.
   */
  end(messages: readonly unknown[]): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#res.destroyed || this.#res.writableEnded) return;
    this.#res.end(messages.map(messageEvent).join(''));
  }
}

/**
 * One live runs page's event stream (`GET /ui/events?page=N`): a `text/event-stream` fed by the
 * run registry's change feed, never by polling. It opens with a `page` event (the caller's
 * runs, rendered), then sends, coalesced over `FLUSH_MS`:
 *   - `row` {runId, html}: a shown run's view changed; its row, rendered again;
 *   - `log` {runId, text, dropped?}: a shown run logged; the text since the row's cursor;
 *   - `page` again when a run of the caller appears that the page has not seen (a new run).
 * Only the caller's runs reach it: each change is looked up with `peek`, which answers for the
 * caller's own runs alone (the owner index `run/list` reads). The page render and the cursors
 * it returns are taken in one synchronous turn, so no line falls between the two.
 *
 * A slow reader holds back nothing: changes wait as a set of run ids until the socket drains,
 * and the log is read from the registry's buffer at send time (`dropped` when it rolled past).
 */
import type { ServerResponse } from 'node:http';
import type { Caller, RunChangeFeed, RunRegistry } from '../../runs/index.js';
import { type RenderedPage, renderPage, renderRun } from './rows.js';

/** How long changes are gathered before they are sent (a burst of log lines is one event). */
export const FLUSH_MS = 50;

/**
 * Shortest gap between two `page` events: a page is 50 rows with their log tails, so runs
 * starting in a burst re-render it once a second, not once per flush.
 */
export const PAGE_MIN_MS = 1000;

/** A comment line this often keeps idle proxies from closing a quiet stream. */
const HEARTBEAT_MS = 25_000;

export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store, no-transform',
  'x-accel-buffering': 'no',
} as const;

export interface RunStreamOptions {
  readonly res: ServerResponse;
  readonly registry: RunRegistry;
  readonly changes: RunChangeFeed;
  readonly caller: Caller;
  readonly page: number;
  readonly now: () => number;
  /** Told once the stream ended, for whatever reason. */
  readonly onEnd: () => void;
}

/** A live stream; `open` once, `close` to end it from the server's side. */
export class RunStream {
  readonly #options: RunStreamOptions;
  #rendered: RenderedPage | undefined;
  /** Shown runs' log cursors. */
  readonly #cursors = new Map<string, number>();
  readonly #views = new Set<string>();
  readonly #logs = new Set<string>();
  /** A run of the caller the page has not seen: render the page again. */
  #fresh = false;
  #timer: NodeJS.Timeout | undefined;
  /** When the last `page` event went out (the stream's clock). */
  #pageAt = Number.NEGATIVE_INFINITY;
  #heartbeat: NodeJS.Timeout | undefined;
  #unsubscribe: () => void = () => {};
  #ended = false;
  /** A flush waits for the socket to drain. */
  #draining = false;

  constructor(options: RunStreamOptions) {
    this.#options = options;
  }

  open(): void {
    const { res } = this.#options;
    res.writeHead(200, STREAM_HEADERS);
    res.once('close', () => this.close());
    this.#unsubscribe = this.#options.changes.subscribe(({ runId, kind }) => {
      if (this.#options.registry.peek(runId, this.#options.caller) === undefined) return;
      if (!this.#rendered?.known.has(runId)) this.#fresh = true;
      else if (this.#cursors.has(runId)) (kind === 'view' ? this.#views : this.#logs).add(runId);
      else return;
      this.#schedule();
    });
    this.#sendPage();
    this.#heartbeat = setInterval(() => this.#write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Ends the stream (shutdown, or the client went away); idempotent. */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#unsubscribe();
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    const { res } = this.#options;
    if (!res.writableEnded) res.end();
    this.#options.onEnd();
  }

  #schedule(delay = FLUSH_MS): void {
    if (this.#timer !== undefined || this.#ended) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, delay);
  }

  #flush(): void {
    if (this.#ended || this.#draining) return;
    const { res } = this.#options;
    if (res.writableNeedDrain) {
      this.#draining = true;
      res.once('drain', () => {
        this.#draining = false;
        this.#flush();
      });
      return;
    }
    if (this.#fresh) {
      const wait = this.#pageAt + PAGE_MIN_MS - this.#options.now();
      if (wait <= 0) {
        this.#views.clear();
        this.#logs.clear();
        this.#sendPage();
        return;
      }
      // Too soon for another page: the shown rows still go out now, the page once it is time.
      this.#schedule(wait);
    }
    for (const runId of this.#views) this.#sendRow(runId);
    for (const runId of this.#logs) if (!this.#views.has(runId)) this.#sendLog(runId);
    this.#views.clear();
    this.#logs.clear();
  }

  #sendPage(): void {
    const { registry, caller, page, now } = this.#options;
    const rendered = renderPage(
      registry.list(caller),
      (runId) => registry.peek(runId, caller),
      page,
      now(),
    );
    this.#rendered = rendered;
    this.#fresh = false;
    this.#pageAt = now();
    this.#cursors.clear();
    for (const [runId, cursor] of rendered.shown) this.#cursors.set(runId, cursor);
    this.#event('page', {
      html: rendered.html.text,
      page: rendered.page,
      pages: rendered.pages,
      total: rendered.total,
    });
  }

  #sendRow(runId: string): void {
    const peek = this.#options.registry.peek(runId, this.#options.caller);
    if (peek === undefined) return;
    const row = renderRun(peek, this.#options.now());
    this.#cursors.set(runId, row.logEnd);
    this.#event('row', { runId, html: row.html.text });
  }

  #sendLog(runId: string): void {
    const peek = this.#options.registry.peek(runId, this.#options.caller);
    const cursor = this.#cursors.get(runId);
    if (peek === undefined || cursor === undefined) return;
    const slice = peek.log(cursor);
    this.#cursors.set(runId, slice.nextSince);
    if (slice.text === '' && !slice.dropped) return;
    this.#event('log', { runId, text: slice.text, ...(slice.dropped ? { dropped: true } : {}) });
  }

  #event(name: string, data: unknown): void {
    // JSON text has no raw line breaks, so one `data:` line carries it whole.
    this.#write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  #write(text: string): void {
    const { res } = this.#options;
    if (this.#ended || res.destroyed || res.writableEnded) return;
    res.write(text);
  }
}

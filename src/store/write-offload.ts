/**
 * Atomic writes on a worker thread (its code is `write-worker.ts`). A write through
 * `fs/promises` is seven thread-pool round trips (open, write, fsync, close, stat, rename, and a
 * directory fsync for a new name), each costing the event loop a wake-up; on a busy two-core
 * machine those wake-ups cost as much as the fsync itself (docs/benchmarks.md, checkpoints). The
 * worker makes the same calls synchronously on its own thread: one round trip per write, and the
 * event loop is never blocked.
 *
 * A `WriteOffloader` runs at most one worker at a time, and the worker takes one write at a
 * time. A write that finds it busy, still starting, or stopped is declined (`write` returns
 * undefined) and the caller writes through `fs/promises` as before, so concurrent writes keep
 * the thread pool's parallelism. The worker starts once the offloader has seen `startAfter`
 * writes (a one-off writer never pays for a thread) and stops after `idleMs` without a write,
 * giving back its memory. Each worker owns its in-flight write and its abort flag, so a stopped
 * worker whose exit arrives late settles only its own write, never its successor's.
 *
 * This module hands writes to a thread; it knows nothing of temp names or stores.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { WRITE_WORKER_SOURCE } from './write-worker.js';

/** How an offloaded write ended. */
export type OffloadOutcome =
  | { readonly kind: 'written' }
  /** Aborted before the rename: `path` untouched. */
  | { readonly kind: 'aborted'; readonly stranded: boolean }
  | { readonly kind: 'failed'; readonly error: Error; readonly stranded: boolean }
  /** The worker died mid-write: nothing is known, so the caller writes again itself. */
  | { readonly kind: 'lost' };

/** Options of `WriteOffloader`. */
export interface WriteOffloaderOptions {
  /** Writes the offloader declines to the thread pool before it starts its worker; 8 by default. */
  readonly startAfter?: number;
  /** A worker idle this long (ms) is stopped, and a later write starts another; 30 s by default. */
  readonly idleMs?: number;
  /** Makes a worker thread from its source text; `new Worker` by default. */
  readonly spawn?: (source: string, options: WorkerOptions) => Worker;
}

const START_AFTER = 8;
const IDLE_MS = 30_000;

interface Reply {
  readonly id: number;
  readonly aborted?: true;
  readonly stranded?: boolean;
  readonly error?: {
    readonly code?: string;
    readonly errno?: number;
    readonly syscall?: string;
    readonly message: string;
  };
}

interface InFlight {
  readonly id: number;
  readonly settle: (outcome: OffloadOutcome) => void;
}

/**
 * Hands atomic writes to one worker thread at a time (see the module header). Never throws: a
 * worker that cannot start or crashes makes it decline every later write, and the caller writes
 * through the thread pool.
 */
export class WriteOffloader {
  readonly #startAfter: number;
  readonly #idleMs: number;
  readonly #spawn: (source: string, options: WorkerOptions) => Worker;
  #writes = 0;
  #thread: WriteThread | undefined;
  /** Set when a worker failed to start or crashed: writes go through the thread pool for good. */
  #broken = false;

  constructor(options: WriteOffloaderOptions = {}) {
    this.#startAfter = options.startAfter ?? START_AFTER;
    this.#idleMs = options.idleMs ?? IDLE_MS;
    this.#spawn = options.spawn ?? ((source, workerOptions) => new Worker(source, workerOptions));
  }

  /**
   * Writes `data` to `tmp` (created exclusively, `mode`), fsyncs it and renames it over `path`
   * on the worker thread; undefined when the worker cannot take it now (the caller then writes
   * itself). Honours `signal`: an abort before the rename leaves `path` untouched.
   */
  write(
    tmp: string,
    path: string,
    data: Uint8Array,
    mode: number,
    signal?: AbortSignal,
  ): Promise<OffloadOutcome> | undefined {
    this.#writes++;
    if (this.#broken) return undefined;
    if (this.#thread === undefined) {
      if (this.#writes >= this.#startAfter) this.#start();
      return undefined;
    }
    return this.#thread.take({ tmp, path, data, mode }, signal);
  }

  /**
   * Starts the worker now rather than after `startAfter` writes (a server that knows it will
   * write can pay for the thread up front). Resolves true once the worker takes writes, false
   * when it cannot run here or was stopped first.
   */
  start(): Promise<boolean> {
    if (this.#broken) return Promise.resolve(false);
    return (this.#thread ?? this.#start())?.online ?? Promise.resolve(false);
  }

  /** Whether writes are being offloaded now (started, online, and neither stopped nor broken). */
  get running(): boolean {
    return !this.#broken && this.#thread?.ready === true;
  }

  /**
   * Stops the worker now; a write in flight on it settles `lost` (the caller writes it again).
   * A later write starts another worker. Resolves once the thread has exited.
   */
  async stop(): Promise<void> {
    const thread = this.#thread;
    this.#thread = undefined;
    await thread?.stop();
  }

  #start(): WriteThread | undefined {
    const abortFlag = new Int32Array(new SharedArrayBuffer(4));
    let worker: Worker;
    try {
      // No inherited execArgv: a test runner's `--test` or `--import` has no business there.
      worker = this.#spawn(WRITE_WORKER_SOURCE, {
        eval: true,
        workerData: { abort: abortFlag.buffer },
        execArgv: [],
        stdout: false,
        stderr: false,
      });
    } catch {
      this.#broken = true;
      return undefined;
    }
    const thread = new WriteThread(worker, abortFlag, this.#idleMs, () => {
      if (this.#thread === thread) void this.stop();
    });
    this.#thread = thread;
    worker.once('error', () => {
      // A crash of the worker's own code: never trust it again.
      this.#broken = true;
    });
    worker.once('exit', () => {
      if (this.#thread !== thread) return;
      // Exited without being stopped: before it came online (it cannot start here) or after a
      // crash. Either way the thread pool takes every write from now on.
      if (!thread.ready) this.#broken = true;
      this.#thread = undefined;
    });
    return thread;
  }
}

/** One worker thread and the state that belongs to it alone: its write in flight, its abort flag. */
class WriteThread {
  readonly #worker: Worker;
  /** Raised by an abort while this thread's write is in flight; it reads it before the rename. */
  readonly #abortFlag: Int32Array;
  #inFlight: InFlight | undefined;
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;
  ready = false;
  /** Resolves true once the worker takes writes, false if it exits first. */
  readonly online: Promise<boolean>;

  constructor(worker: Worker, abortFlag: Int32Array, idleMs: number, onIdle: () => void) {
    this.#worker = worker;
    this.#abortFlag = abortFlag;
    let resolveOnline: (online: boolean) => void = () => {};
    this.online = new Promise((resolve) => {
      resolveOnline = resolve;
    });
    worker.unref();
    worker.once('online', () => {
      // Again: on Node 20 an unref() made before the thread is online does not hold, and the
      // idle worker would keep a finished `mhl run` alive until the idle stop.
      worker.unref();
      this.ready = true;
      this.#idleTimer = setTimeout(() => {
        if (this.#inFlight === undefined) onIdle();
        else this.#idleTimer?.refresh();
      }, idleMs).unref();
      resolveOnline(true);
    });
    worker.on('message', (reply: Reply) => {
      if (this.#inFlight?.id === reply.id) this.#inFlight.settle(outcomeOf(reply));
    });
    worker.once('exit', () => {
      this.ready = false;
      clearTimeout(this.#idleTimer);
      resolveOnline(false);
      this.#inFlight?.settle({ kind: 'lost' });
    });
  }

  /** Posts the write, or undefined when this thread is not online or already busy. */
  take(
    request: { tmp: string; path: string; data: Uint8Array; mode: number },
    signal: AbortSignal | undefined,
  ): Promise<OffloadOutcome> | undefined {
    if (!this.ready || this.#inFlight !== undefined) return undefined;
    const id = this.#nextId++;
    Atomics.store(this.#abortFlag, 0, signal?.aborted ? 1 : 0);
    const onAbort = () => Atomics.store(this.#abortFlag, 0, 1);
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise<OffloadOutcome>((resolve) => {
      this.#inFlight = {
        id,
        settle: (outcome) => {
          this.#inFlight = undefined;
          signal?.removeEventListener('abort', onAbort);
          // Held open only while a write is in flight, so an idle worker never keeps a
          // process alive, and a pending write never lets it exit.
          this.#worker.unref();
          this.#idleTimer?.refresh();
          resolve(outcome);
        },
      };
      this.#worker.ref();
      this.#worker.postMessage({ id, ...request });
    });
  }

  /** Terminates the worker; its write in flight settles `lost` when it has exited. */
  async stop(): Promise<void> {
    this.ready = false;
    clearTimeout(this.#idleTimer);
    await this.#worker.terminate();
  }
}

function outcomeOf(reply: Reply): OffloadOutcome {
  const stranded = reply.stranded === true;
  if (reply.aborted) return { kind: 'aborted', stranded };
  if (reply.error === undefined) return { kind: 'written' };
  const { code, errno, syscall, message } = reply.error;
  const error = Object.assign(new Error(message), {
    ...(code !== undefined && { code }),
    ...(errno !== undefined && { errno }),
    ...(syscall !== undefined && { syscall }),
  });
  return { kind: 'failed', error, stranded };
}

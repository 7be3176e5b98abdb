/**
 * Atomic writes on a worker thread (its code is `write-worker.ts`). A write through
 * `fs/promises` is seven thread-pool round trips (open, write, fsync, close, stat, rename, and a
 * directory fsync for a new name), each costing the event loop a wake-up; on a busy two-core
 * machine those wake-ups cost as much as the fsync itself (docs/benchmarks.md, checkpoints). The
 * worker makes the same calls synchronously on its own thread: one round trip per write, and the
 * event loop is never blocked. The write goes as a message; its completion comes back through a
 * shared counter the main thread awaits with `Atomics.waitAsync`, and the worker sleeps on one
 * between writes (`write-worker.ts` says why: one futex wake-up per thread per write).
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

/** `Atomics.waitAsync` (in V8 since Node 16), typed here: the project's `lib` predates ES2024. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      array: Int32Array,
      index: number,
      value: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

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
    // [0]: writes posted, bumped after each message; [1]: the id of the last write that landed.
    const control = new Int32Array(new SharedArrayBuffer(8));
    let worker: Worker;
    try {
      // No inherited execArgv: a test runner's `--test` or `--import` has no business there.
      worker = this.#spawn(WRITE_WORKER_SOURCE, {
        eval: true,
        workerData: { abort: abortFlag.buffer, control: control.buffer },
        execArgv: [],
        stdout: false,
        stderr: false,
      });
    } catch {
      this.#broken = true;
      return undefined;
    }
    const thread = new WriteThread(worker, abortFlag, control, this.#idleMs, () => {
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
  /** Shared with the worker: writes posted, and the id of the last one written (see `#start`). */
  readonly #control: Int32Array;
  #inFlight: InFlight | undefined;
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;
  ready = false;
  /** Resolves true once the worker takes writes, false if it exits first. */
  readonly online: Promise<boolean>;

  constructor(
    worker: Worker,
    abortFlag: Int32Array,
    control: Int32Array,
    idleMs: number,
    onIdle: () => void,
  ) {
    this.#worker = worker;
    this.#abortFlag = abortFlag;
    this.#control = control;
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
    const id = this.#nextId;
    // Ids live in an Int32Array slot: wrap before 2^31, never reaching 0 (the slot's start).
    this.#nextId = (id % 0x7fff_ffff) + 1;
    const seen = Atomics.load(this.#control, 1);
    Atomics.store(this.#abortFlag, 0, signal?.aborted ? 1 : 0);
    const onAbort = () => Atomics.store(this.#abortFlag, 0, 1);
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise<OffloadOutcome>((resolve) => {
      this.#inFlight = {
        id,
        settle: (outcome) => {
          this.#inFlight = undefined;
          // Releases this write's waitAsync when something else settled it (an error reply,
          // the worker's exit), so no waiter outlives its write.
          if (outcome.kind !== 'written') Atomics.notify(this.#control, 1);
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
      Atomics.add(this.#control, 0, 1);
      Atomics.notify(this.#control, 0);
      this.#watch(id, seen);
    });
  }

  /** Settles write `id` as written once the worker stores its id in `control[1]`. */
  #watch(id: number, seen: number): void {
    const onWake = () => {
      if (this.#inFlight?.id !== id) return;
      const done = Atomics.load(this.#control, 1);
      if (done === id) this.#inFlight.settle({ kind: 'written' });
      else this.#watch(id, done);
    };
    const waited = waitAsync(this.#control, 1, seen);
    if (waited.async) void waited.value.then(onWake);
    else onWake();
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

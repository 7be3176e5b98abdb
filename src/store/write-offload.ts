/**
 * Atomic writes on a worker thread (its code is `write-worker.ts`). A write through
 * `fs/promises` is seven thread-pool round trips (open, write, fsync, close, stat, rename, and a
 * directory fsync for a new name), each costing the event loop a wake-up; on a busy two-core
 * machine those wake-ups cost as much as the fsync itself (docs/benchmarks.md, checkpoints). The
 * worker makes the same calls synchronously on its own thread: one round trip per write, and the
 * event loop is never blocked. The round trip is through shared memory, not messages: the
 * request and the outcome are copied into buffers the two threads share, the worker sleeps in
 * `Atomics.wait` and the event loop awaits `Atomics.waitAsync` (layout: `write-worker.ts`), which
 * costs each wake-up less than a message port's (docs/benchmarks.md, checkpoints).
 *
 * A `WriteOffloader` runs at most one worker at a time, and the worker takes one write at a
 * time. A write that finds it busy, still starting, or stopped is declined (`write` returns
 * undefined) and the caller writes through `fs/promises` as before, so concurrent writes keep
 * the thread pool's parallelism. The worker starts once the offloader has seen `startAfter`
 * writes (a one-off writer never pays for a thread) and stops after `idleMs` without a write,
 * giving back its memory (its shared region grows with the largest write it took, up to 64 MiB;
 * a larger write is declined). Each worker owns its in-flight write and its shared memory, abort
 * flag included, so a stopped worker whose exit arrives late settles only its own write, never
 * its successor's.
 *
 * This module hands writes to a thread; it knows nothing of temp names or stores.
 */
import { MessageChannel, type MessagePort, Worker, type WorkerOptions } from 'node:worker_threads';
import { CONTROL, KIND, STATE, WRITE_WORKER_SOURCE } from './write-worker.js';

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
/** The shared region a worker starts with: a checkpoint of a few thousand steps fits. */
const REGION_BYTES = 64 * 1024;
/**
 * The largest region a worker is given. A bigger write is declined to the thread pool: the
 * region stays allocated until the worker stops, and a write that size is dominated by its
 * bytes, not by the hand-off.
 */
const MAX_REGION_BYTES = 64 * 1024 * 1024;

/** `Atomics.waitAsync` (ES2024, in Node since 16), which the project's `lib` setting does not type. */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      array: Int32Array,
      index: number,
      value: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

interface InFlight {
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
   * Writes `data` (text as UTF-8) to `tmp` (created exclusively, `mode`), fsyncs it and renames
   * it over `path` on the worker thread; undefined when the worker cannot take it now (the
   * caller then writes itself). Honours `signal`: an abort before the rename leaves `path`
   * untouched.
   */
  write(
    tmp: string,
    path: string,
    data: Uint8Array | string,
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
    const control = new Int32Array(new SharedArrayBuffer(CONTROL.SIZE * 4));
    const region = new SharedArrayBuffer(REGION_BYTES);
    const { port1: regions, port2: workerRegions } = new MessageChannel();
    let worker: Worker;
    try {
      // No inherited execArgv: a test runner's `--test` or `--import` has no business there.
      worker = this.#spawn(WRITE_WORKER_SOURCE, {
        eval: true,
        workerData: { control: control.buffer, region, regions: workerRegions },
        transferList: [workerRegions],
        execArgv: [],
        stdout: false,
        stderr: false,
      });
    } catch {
      regions.close();
      this.#broken = true;
      return undefined;
    }
    const thread = new WriteThread(worker, { control, region, regions }, this.#idleMs, () => {
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

/** The memory a worker shares with the main thread (its layout: `write-worker.ts`). */
interface Shared {
  readonly control: Int32Array;
  readonly region: SharedArrayBuffer;
  /** Where a larger region goes to the worker, just before the request that needs it. */
  readonly regions: MessagePort;
}

/**
 * One worker thread and the state that belongs to it alone: its write in flight, its shared
 * memory (the request, the outcome and the abort flag).
 */
class WriteThread {
  readonly #worker: Worker;
  readonly #control: Int32Array;
  readonly #regions: MessagePort;
  #region: Buffer;
  #inFlight: InFlight | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  ready = false;
  /** Resolves true once the worker takes writes, false if it exits first. */
  readonly online: Promise<boolean>;

  constructor(worker: Worker, shared: Shared, idleMs: number, onIdle: () => void) {
    this.#worker = worker;
    this.#control = shared.control;
    this.#regions = shared.regions;
    this.#region = Buffer.from(shared.region);
    let resolveOnline: (online: boolean) => void = () => {};
    this.online = new Promise((resolve) => {
      resolveOnline = resolve;
    });
    worker.once('online', () => {
      // Held until now, so a process awaiting `start()` sees it resolve (a starting thread is
      // a few milliseconds); from here an idle worker never keeps a process alive. (On Node 20
      // an unref() made before the thread is online would not hold anyway.)
      worker.unref();
      this.ready = true;
      this.#idleTimer = setTimeout(() => {
        if (this.#inFlight === undefined) onIdle();
        else this.#idleTimer?.refresh();
      }, idleMs).unref();
      resolveOnline(true);
    });
    worker.once('exit', () => {
      this.ready = false;
      clearTimeout(this.#idleTimer);
      this.#regions.close();
      resolveOnline(false);
      this.#inFlight?.settle({ kind: 'lost' });
      // Ends the wait of a write the dead worker will never answer (it finds itself settled),
      // so no waiter outlives the thread.
      Atomics.store(this.#control, CONTROL.STATE, STATE.DONE);
      Atomics.notify(this.#control, CONTROL.STATE);
    });
  }

  /**
   * Hands the write to the worker, or undefined when this thread is not online, already busy,
   * or the write is larger than any region it is given.
   */
  take(
    request: { tmp: string; path: string; data: Uint8Array | string; mode: number },
    signal: AbortSignal | undefined,
  ): Promise<OffloadOutcome> | undefined {
    if (!this.ready || this.#inFlight !== undefined) return undefined;
    const { tmp, path, data, mode } = request;
    const tmpLen = Buffer.byteLength(tmp, 'utf8');
    const pathLen = Buffer.byteLength(path, 'utf8');
    const dataLen = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.length;
    const needed = tmpLen + pathLen + dataLen;
    const control = this.#control;
    if (needed > this.#region.length) {
      if (needed > MAX_REGION_BYTES) return undefined;
      let bytes = this.#region.length * 2;
      while (bytes < needed) bytes *= 2;
      const region = new SharedArrayBuffer(Math.min(bytes, MAX_REGION_BYTES));
      this.#region = Buffer.from(region);
      this.#regions.postMessage(region);
      control[CONTROL.NEW_REGION] = 1;
    }
    const region = this.#region;
    region.write(tmp, 0, tmpLen, 'utf8');
    region.write(path, tmpLen, pathLen, 'utf8');
    if (typeof data === 'string') region.write(data, tmpLen + pathLen, dataLen, 'utf8');
    else region.set(data, tmpLen + pathLen);
    control[CONTROL.TMP_LEN] = tmpLen;
    control[CONTROL.PATH_LEN] = pathLen;
    control[CONTROL.DATA_LEN] = dataLen;
    control[CONTROL.MODE] = mode;
    Atomics.store(control, CONTROL.ABORT, signal?.aborted ? 1 : 0);
    const onAbort = () => Atomics.store(control, CONTROL.ABORT, 1);
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise<OffloadOutcome>((resolve) => {
      this.#inFlight = {
        settle: (outcome) => {
          this.#inFlight = undefined;
          signal?.removeEventListener('abort', onAbort);
          // Held open only while a write is in flight, so an idle worker never keeps a
          // process alive, and a pending write never lets it exit (a pending waitAsync does
          // not hold the event loop).
          this.#worker.unref();
          this.#idleTimer?.refresh();
          resolve(outcome);
        },
      };
      this.#worker.ref();
      Atomics.store(control, CONTROL.STATE, STATE.REQUESTED);
      Atomics.notify(control, CONTROL.STATE);
      const wait = waitAsync(control, CONTROL.STATE, STATE.REQUESTED);
      const inFlight = this.#inFlight;
      const done = () => {
        // A worker stopped mid-write never answers; its exit settled the write `lost`.
        if (this.#inFlight === inFlight) inFlight.settle(this.#outcome());
      };
      if (wait.async) void wait.value.then(done);
      else done();
    });
  }

  /** The outcome the worker left in the shared memory. */
  #outcome(): OffloadOutcome {
    const control = this.#control;
    const kind = control[CONTROL.KIND];
    if (kind === KIND.WRITTEN) return { kind: 'written' };
    const stranded = control[CONTROL.STRANDED] !== 0;
    if (kind === KIND.ABORTED) return { kind: 'aborted', stranded };
    const region = this.#region;
    const codeLen = control[CONTROL.CODE_LEN] as number;
    const syscallLen = control[CONTROL.SYSCALL_LEN] as number;
    const messageLen = control[CONTROL.MESSAGE_LEN] as number;
    let at = 0;
    const text = (length: number) => {
      if (length < 0) return undefined;
      at += length;
      return region.toString('utf8', at - length, at);
    };
    const code = text(codeLen);
    const syscall = text(syscallLen);
    const message = text(messageLen) ?? '';
    const error = Object.assign(new Error(message), {
      ...(code !== undefined && { code }),
      ...(control[CONTROL.HAS_ERRNO] !== 0 && { errno: control[CONTROL.ERRNO] }),
      ...(syscall !== undefined && { syscall }),
    });
    return { kind: 'failed', error, stranded };
  }

  /** Terminates the worker; its write in flight settles `lost` when it has exited. */
  async stop(): Promise<void> {
    this.ready = false;
    clearTimeout(this.#idleTimer);
    await this.#worker.terminate();
  }
}

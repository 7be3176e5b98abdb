/**
 * Atomic writes on a worker thread (its code is `write-worker.ts`). A write through
 * `fs/promises` is seven thread-pool round trips (open, write, fsync, close, stat, rename, and a
 * directory fsync for a new name), each costing the event loop a wake-up; on a busy two-core
 * machine those wake-ups cost as much as the fsync itself (docs/benchmarks.md, checkpoints). The
 * worker makes the same calls synchronously on its own thread: one round trip per write, and the
 * event loop is never blocked.
 *
 * The worker takes one write at a time. A write that finds it busy, still starting, or stopped
 * is declined (`offloadWrite` returns undefined) and the caller writes through `fs/promises` as
 * before, so concurrent writes keep the thread pool's parallelism. It starts only once a process
 * has made `START_AFTER` writes (a one-off writer never pays for a thread) and stops after
 * `IDLE_MS` without a write, giving back its memory.
 */
import { Worker } from 'node:worker_threads';
import { WRITE_WORKER_SOURCE } from './write-worker.js';

/** Writes a process makes through the thread pool before the worker starts. */
const START_AFTER = 8;
/** A worker idle this long is stopped; the next write starts another. */
const IDLE_MS = 30_000;

/** How an offloaded write ended. */
export type OffloadOutcome =
  | { readonly kind: 'written' }
  /** Aborted before the rename: `path` untouched. */
  | { readonly kind: 'aborted'; readonly stranded: boolean }
  | { readonly kind: 'failed'; readonly error: Error; readonly stranded: boolean }
  /** The worker died mid-write: nothing is known, so the caller writes again itself. */
  | { readonly kind: 'lost' };

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
  readonly signal: AbortSignal | undefined;
  readonly settle: (outcome: OffloadOutcome) => void;
}

let writes = 0;
let worker: Worker | undefined;
let ready = false;
/** Set when the worker failed to start or crashed: writes go through the thread pool for good. */
let broken = false;
let inFlight: InFlight | undefined;
let nextId = 1;
let idleTimer: NodeJS.Timeout | undefined;
let onReady: Array<() => void> = [];
/** Raised by an abort while a write is in flight; the worker reads it before the rename. */
const abortFlag = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes `data` to `tmp` (created exclusively, `mode`), fsyncs it and renames it over `path`
 * on the worker thread; undefined when the worker cannot take it now (the caller then writes
 * itself). An abort of `signal` before the rename leaves `path` untouched.
 */
export function offloadWrite(
  tmp: string,
  path: string,
  data: Uint8Array,
  mode: number,
  signal?: AbortSignal,
): Promise<OffloadOutcome> | undefined {
  writes++;
  if (broken) return undefined;
  if (worker === undefined) {
    if (writes >= START_AFTER) start();
    return undefined;
  }
  if (!ready || inFlight !== undefined) return undefined;
  const running = worker;
  const id = nextId++;
  Atomics.store(abortFlag, 0, 0);
  if (signal !== undefined) watch(signal);
  return new Promise<OffloadOutcome>((resolve) => {
    inFlight = {
      id,
      signal,
      settle: (outcome) => {
        inFlight = undefined;
        // Held open only while a write is in flight, so an idle worker never keeps a
        // process alive, and a pending write never lets it exit.
        running.unref();
        idleTimer?.refresh();
        resolve(outcome);
      },
    };
    running.ref();
    running.postMessage({ id, tmp, path, data, mode });
  });
}

/** Signals that already raise the abort flag when they abort during their write. */
const watched = new WeakSet<AbortSignal>();

/**
 * Makes an abort of `signal` raise the flag while one of its writes is in flight. One listener
 * per signal, not one per write: a run passes the same signal to every checkpoint, and adding
 * and removing a listener each time costs more than the rest of the hand-off.
 */
function watch(signal: AbortSignal): void {
  if (watched.has(signal)) return;
  watched.add(signal);
  signal.addEventListener(
    'abort',
    () => {
      if (inFlight?.signal === signal) Atomics.store(abortFlag, 0, 1);
    },
    { once: true },
  );
}

/**
 * Starts the worker now (tests use this to exercise it); resolves once it takes writes, or once
 * it is known that it cannot start here (`writeWorkerRunning()` then says false).
 */
export function startWriteWorker(): Promise<void> {
  if (broken) return Promise.reject(new Error('the write worker could not start'));
  if (ready) return Promise.resolve();
  if (worker === undefined) start();
  return new Promise((resolve) => onReady.push(resolve));
}

/** Whether writes are being offloaded (started, and neither stopped nor broken). */
export function writeWorkerRunning(): boolean {
  return ready && !broken;
}

function start(): void {
  let started: Worker;
  try {
    // No inherited execArgv: a test runner's `--test` or `--import` has no business there.
    started = new Worker(WRITE_WORKER_SOURCE, {
      eval: true,
      workerData: { abort: abortFlag.buffer },
      execArgv: [],
      stdout: false,
      stderr: false,
    });
  } catch {
    broken = true;
    return;
  }
  worker = started;
  started.unref();
  started.once('online', () => {
    if (worker !== started) return;
    // Again: on Node 20 an unref() made before the thread is online does not hold, and the
    // idle worker would keep a finished `mhl run` alive until the idle stop.
    started.unref();
    ready = true;
    idleTimer = setTimeout(stopIfIdle, IDLE_MS).unref();
    for (const resolve of onReady.splice(0)) resolve();
  });
  started.on('message', (reply: Reply) => {
    if (inFlight?.id === reply.id) inFlight.settle(outcomeOf(reply));
  });
  started.once('error', () => {
    // A crash of the worker's own code: never trust it again.
    broken = true;
  });
  started.once('exit', () => {
    if (worker === started) {
      // Exited without being stopped: before it came online (it cannot start here) or after
      // a crash. Either way the thread pool takes every write from now on.
      if (!ready) broken = true;
      worker = undefined;
      ready = false;
      for (const resolve of onReady.splice(0)) resolve();
    }
    inFlight?.settle({ kind: 'lost' });
  });
}

function stopIfIdle(): void {
  if (inFlight !== undefined) {
    idleTimer?.refresh();
    return;
  }
  const idle = worker;
  worker = undefined;
  ready = false;
  idleTimer = undefined;
  onReady = [];
  void idle?.terminate();
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

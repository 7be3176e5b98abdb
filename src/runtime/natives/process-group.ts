/**
 * Runs one program in its own process group and captures its output: the single way natives
 * (`cmd`, `git`) start processes.
 *
 * The child leads a new process group (`detached`), so on timeout, cancellation or runaway
 * output the whole group — grandchildren included — gets SIGTERM, then SIGKILL as soon as the
 * leader has exited or a short grace has passed, whichever comes first. The child gets exactly
 * the environment it is given, never this process's. No shell is involved: `argv[0]` is looked
 * up on the given environment's `PATH`. Stdin is closed.
 *
 * A run ends when the child has exited and its output pipes have closed, so a background
 * grandchild that keeps them open holds the run until it exits, the timeout fires or the run is
 * cancelled (redirect a daemon's output to let the call return).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { formatDuration, nativeError } from './args.js';

/** Default cap on each captured stream. */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/** The longest a killed group's leader has between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000;

/** How `runProcess` runs a program. */
export interface RunProcessOptions {
  /** The operation named in error messages (`cmd.exec`, `git.diff`). */
  readonly op: string;
  readonly cwd: string;
  /** The child's complete environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Cancels the run: the group is killed and the promise rejects with `signal.reason`. */
  readonly signal: AbortSignal;
  /** Kill the group and raise `NATIVE` after this long. */
  readonly timeoutMs?: number | undefined;
  /** Per-stream cap; beyond it the group is killed and `NATIVE` is raised. */
  readonly maxOutputBytes?: number;
}

/** A finished program's captured output and exit status. */
export interface ProcessResult {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit status; 128 + signal number when a signal ended the child. */
  readonly exitCode: number;
}

/**
 * Runs `argv` to completion. A non-zero exit is a result, not an error.
 *
 * Raises `NATIVE` when the program cannot start, times out, or writes more than the cap to one
 * stream; rejects with `signal.reason` when `signal` aborts. Either way, by the time it
 * settles every member of the child's process group has exited or been sent SIGKILL.
 * Honours `signal`.
 */
export function runProcess(
  argv: readonly string[],
  options: RunProcessOptions,
): Promise<ProcessResult> {
  options.signal.throwIfAborted();
  const [file, ...rest] = argv;
  if (file === undefined || file === '') {
    return Promise.reject(nativeError(options.op, 'command is empty'));
  }
  return new Promise((resolve, reject) => {
    new GroupRun(file, rest, options, resolve, reject).start();
  });
}

/** The state of one run: its child, captured output, and why (if at all) it is being killed. */
class GroupRun {
  readonly #file: string;
  readonly #args: readonly string[];
  readonly #options: RunProcessOptions;
  readonly #resolve: (r: ProcessResult) => void;
  readonly #reject: (e: unknown) => void;
  readonly #out: Buffer[] = [];
  readonly #err: Buffer[] = [];
  readonly #sizes = { stdout: 0, stderr: 0 };
  #pid: number | undefined;
  #failure: { error: unknown } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #killTimer: NodeJS.Timeout | undefined;
  #killed = false;
  #closed: { code: number | null; sig: NodeJS.Signals | null } | undefined;
  #settled = false;

  constructor(
    file: string,
    args: readonly string[],
    options: RunProcessOptions,
    resolve: (r: ProcessResult) => void,
    reject: (e: unknown) => void,
  ) {
    this.#file = file;
    this.#args = args;
    this.#options = options;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  start(): void {
    const { cwd, env, signal, timeoutMs } = this.#options;
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(this.#file, this.#args, {
        cwd,
        env: { ...env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (e) {
      // Invalid arguments (a NUL byte in argv) throw before anything starts.
      this.#failure = {
        error: nativeError(this.#options.op, `cannot start "${this.#file}": ${String(e)}`, e),
      };
      this.#settle();
      return;
    }
    this.#pid = child.pid;
    child.on('error', (e) => this.#onSpawnError(e));
    if (this.#pid === undefined) return; // 'error' follows and settles the run.
    child.stdout.on('data', (d: Buffer) => this.#collect('stdout', this.#out, d));
    child.stderr.on('data', (d: Buffer) => this.#collect('stderr', this.#err, d));
    child.on('close', (code, sig) => this.#onClose(code, sig));
    signal.addEventListener('abort', this.#onAbort, { once: true });
    if (timeoutMs !== undefined) {
      this.#timer = setTimeout(() => {
        const after = formatDuration(timeoutMs);
        this.#kill(nativeError(this.#options.op, `timed out after ${after}`));
      }, timeoutMs);
    }
  }

  readonly #onAbort = (): void => {
    this.#kill(this.#options.signal.reason);
  };

  #collect(stream: 'stdout' | 'stderr', chunks: Buffer[], data: Buffer): void {
    if (this.#killed) return;
    const cap = this.#options.maxOutputBytes ?? MAX_OUTPUT_BYTES;
    this.#sizes[stream] += data.length;
    if (this.#sizes[stream] > cap) {
      const mib = Number((cap / 1024 / 1024).toFixed(2));
      this.#kill(
        nativeError(this.#options.op, `${stream} exceeded ${mib} MiB; redirect it to a file`),
      );
      return;
    }
    chunks.push(data);
  }

  /** Starts killing the group: SIGTERM now, SIGKILL after the grace. The first reason wins. */
  #kill(error: unknown): void {
    if (this.#killed || this.#closed) return;
    this.#killed = true;
    this.#failure = { error };
    clearTimeout(this.#timer);
    this.#signalGroup('SIGTERM');
    this.#killTimer = setTimeout(() => {
      this.#killTimer = undefined;
      this.#signalGroup('SIGKILL');
    }, KILL_GRACE_MS);
  }

  /** Signals every process in the group. */
  #signalGroup(sig: NodeJS.Signals): void {
    if (this.#pid === undefined) return;
    try {
      process.kill(-this.#pid, sig);
    } catch {
      // ESRCH: every member has already exited.
    }
  }

  #onSpawnError(e: Error): void {
    // After a successful start, 'error' only reports a failed signal; 'close' still follows.
    if (this.#pid !== undefined) return;
    const code = (e as NodeJS.ErrnoException).code;
    this.#failure = { error: nativeError(this.#options.op, this.#launchMessage(code), e) };
    this.#settle();
  }

  #launchMessage(code: string | undefined): string {
    const what = `cannot start "${this.#file}"`;
    if (code === 'ENOENT') {
      if (!isDirectory(this.#options.cwd)) {
        return `${what}: working directory ${this.#options.cwd} does not exist`;
      }
      return `${what}: command not found`;
    }
    if (code === 'EACCES') return `${what}: permission denied`;
    return `${what}: ${code ?? 'unknown error'}`;
  }

  #onClose(code: number | null, sig: NodeJS.Signals | null): void {
    this.#closed = { code, sig };
    // Once a killed leader is gone, stragglers that outlived SIGTERM get SIGKILL at once.
    if (this.#killed && this.#killTimer !== undefined) this.#signalGroup('SIGKILL');
    this.#settle();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#killTimer);
    this.#options.signal.removeEventListener('abort', this.#onAbort);
    if (this.#failure) {
      this.#reject(this.#failure.error);
      return;
    }
    const { code, sig } = this.#closed ?? { code: null, sig: null };
    this.#resolve({
      stdout: Buffer.concat(this.#out).toString('utf8'),
      stderr: Buffer.concat(this.#err).toString('utf8'),
      exitCode: code ?? 128 + (sig ? (constants.signals[sig] ?? 0) : 0),
    });
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: either way the child cannot start there.
    return false;
  }
}

/**
 * The stdio side of an MCP client: a server process spawned for one call, in a process group of
 * its own, with exactly the environment it is given (the run's explicit child environment, never
 * this process's). Messages are framed by the SDK's own `ReadBuffer` and `serializeMessage`; the
 * protocol is the SDK client's. What this adds to the SDK's stdio transport is the group: on
 * close, cancellation or a step deadline every process the server started is signalled, and
 * `close()` settles only once the leader has exited and the group has been sent SIGKILL.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { KILL_GRACE_MS } from '../natives/process-group.js';
import { mcpSdk } from './sdk-modules.js';

/** The tail of the server's stderr kept for error messages. */
const STDERR_TAIL_BYTES = 2048;

export interface StdioServer {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Aborting kills the group at once. */
  readonly signal: AbortSignal;
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  readonly #server: StdioServer;
  readonly #buffer = new (mcpSdk().ReadBuffer)();
  #child: ChildProcessWithoutNullStreams | undefined;
  #exited: Promise<void> | undefined;
  #stderr = '';
  #closing = false;

  constructor(server: StdioServer) {
    this.#server = server;
  }

  /** The group's id (the leader's pid) once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last lines the server wrote to stderr (for error messages). */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  start(): Promise<void> {
    const { command, args, cwd, env, signal } = this.#server;
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const child = spawn(command, [...args], {
        cwd,
        env: { ...env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      this.#child = child;
      this.#exited = new Promise((done) => {
        child.once('close', () => done());
        // A child that never started has no 'close' to wait for.
        child.once('error', () => child.pid === undefined && done());
      });
      child.once('error', (e) => {
        reject(e);
        this.onerror?.(e);
      });
      child.once('spawn', () => {
        signal.addEventListener('abort', this.#onAbort, { once: true });
        resolve();
      });
      child.once('close', () => {
        signal.removeEventListener('abort', this.#onAbort);
        this.#signalGroup('SIGKILL'); // stragglers of a server that has gone
        if (!this.#closing) this.onclose?.();
      });
      child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        this.#stderr = (this.#stderr + d).slice(-STDERR_TAIL_BYTES);
      });
      // EPIPE after the server exits is reported by 'close'; nothing more to say here.
      child.stdin.on('error', () => {});
    });
  }

  #read(chunk: Buffer): void {
    try {
      this.#buffer.append(chunk);
    } catch (e) {
      // A message past the SDK's 10 MiB cap: the stream cannot be trusted any more.
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      this.#kill();
      return;
    }
    for (;;) {
      try {
        const message = this.#buffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (e) {
        // A line that is JSON but not JSON-RPC: reported, skipped; the next may be fine.
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error('the server has exited'));
    const line = mcpSdk().serializeMessage(message);
    return new Promise((resolve) => {
      if (stdin.write(line)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  readonly #onAbort = (): void => {
    this.#kill();
  };

  /** SIGTERM to the group now, SIGKILL after the grace unless the leader is gone first. */
  #kill(): void {
    this.#signalGroup('SIGTERM');
    const timer = setTimeout(() => this.#signalGroup('SIGKILL'), KILL_GRACE_MS);
    void this.#exited?.then(() => clearTimeout(timer));
  }

  #signalGroup(sig: NodeJS.Signals): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // ESRCH: every member has already exited.
    }
  }

  /**
   * Ends the server: stdin closes (a well-behaved server exits on EOF); past the grace, or at
   * once when the call was aborted, the group is killed. Settles after the leader has exited.
   */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child || this.#closing) return this.#exited;
    this.#closing = true;
    this.#buffer.clear();
    if (child.exitCode === null && child.signalCode === null) {
      if (this.#server.signal.aborted) this.#kill();
      else {
        child.stdin.end();
        const timer = setTimeout(() => this.#kill(), KILL_GRACE_MS);
        await this.#exited;
        clearTimeout(timer);
      }
    }
    await this.#exited;
    this.onclose?.();
  }
}

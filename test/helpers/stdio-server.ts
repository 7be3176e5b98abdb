/**
 * Driving `mhl serve mcp FOLDER` over stdio from tests, line by line: `request` sends one
 * JSON-RPC message and resolves with the answer carrying its id; every line the server wrote
 * is kept in `lines`. The child is stopped when the test file ends.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { after } from 'node:test';
import { CLI } from './cli.js';

export class StdioServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: Record<string, unknown>[] = [];
  readonly exited: Promise<number | null>;
  stderr = '';
  readonly #waiting = new Map<unknown, (msg: Record<string, unknown>) => void>();
  readonly #next: ((msg: Record<string, unknown>) => void)[] = [];
  readonly #matching: {
    match: (msg: Record<string, unknown>) => boolean;
    done: (msg: Record<string, unknown>) => void;
  }[] = [];
  #buffer = '';
  #nextId = 1;

  constructor(
    folder: string,
    args: readonly string[] = [],
    options: { env?: Record<string, string>; cwd?: string } = {},
  ) {
    this.child = spawn(process.execPath, [CLI, 'serve', 'mcp', folder, ...args], {
      stdio: 'pipe',
      env: { ...process.env, ...options.env },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    this.exited = new Promise((done) => this.child.on('close', done));
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => {
      this.#buffer += d;
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        const msg = JSON.parse(this.#buffer.slice(0, nl)) as Record<string, unknown>;
        this.#buffer = this.#buffer.slice(nl + 1);
        this.lines.push(msg);
        this.#waiting.get(msg['id'])?.(msg);
        for (const next of this.#next.splice(0)) next(msg);
        for (const w of [...this.#matching]) {
          if (!w.match(msg)) continue;
          this.#matching.splice(this.#matching.indexOf(w), 1);
          w.done(msg);
        }
      }
    });
  }

  /** Writes one raw line (a message, a batch, or something malformed). */
  send(text: string): void {
    this.child.stdin.write(`${text}\n`);
  }

  /** Sends `message` (an object or raw text) and resolves with the response carrying `id`. */
  exchange(id: unknown, message: unknown): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((done, fail) => {
      this.#waiting.set(id, done);
      void this.exited.then(() => fail(new Error(`server exited before answering ${id}`)));
    });
    this.send(typeof message === 'string' ? message : JSON.stringify(message));
    return answered;
  }

  /**
   * Sends `message` (an object or raw text) and resolves with the next line the server writes,
   * whatever its id: for malformed messages, whose answer may carry a null id or none at all.
   * Only for one exchange at a time.
   */
  reply(message: unknown): Promise<Record<string, unknown>> {
    const answered = new Promise<Record<string, unknown>>((done, fail) => {
      this.#next.push(done);
      void this.exited.then(() => fail(new Error('server exited before answering')));
    });
    this.send(typeof message === 'string' ? message : JSON.stringify(message));
    return answered;
  }

  /**
   * The first line the server wrote, or writes next, that `match` accepts: for what it sends
   * on its own (`elicitation/create`, `notifications/cancelled`) and answers found by content.
   */
  line(match: (msg: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const seen = this.lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((done, fail) => {
      this.#matching.push({ match, done });
      void this.exited.then(() => fail(new Error('server exited before writing the line')));
    });
  }

  /** A request with a fresh id; resolves with the whole response. */
  request(method: string, params?: unknown): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const message = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
    return this.exchange(id, message);
  }

  /** Opens a legacy session (initialize + initialized) at `protocolVersion`. */
  async initialize(protocolVersion = '2025-11-25'): Promise<Record<string, unknown>> {
    const reply = await this.request('initialize', {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: 'e2e', version: '1.0.0' },
    });
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return reply;
  }

  /** Closes stdin and resolves with the exit code. */
  end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

/** A `start(folder, args?, options?)` whose servers are all killed when the test file ends. */
export function stdioStarter(): (
  folder: string,
  args?: readonly string[],
  options?: { env?: Record<string, string>; cwd?: string },
) => StdioServer {
  const servers: StdioServer[] = [];
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.exited));
  });
  return (folder, args = [], options = {}) => {
    const server = new StdioServer(folder, args, options);
    servers.push(server);
    return server;
  };
}

/**
 * Driving `mhl serve mcp --http` from tests: the server as a child process (started as a user
 * would, on port 0, its port read from the "listening on" line), raw JSON-RPC over node:http,
 * and the 2026-07-28 `_meta` every stateless request carries.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after } from 'node:test';
import { CLI } from './cli.js';

export const MODERN_VERSION = '2026-07-28';
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

export class HttpServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  readonly ready: Promise<number>;
  stderr = '';
  readonly #watchers = new Set<() => void>();

  constructor(folder: string, args: readonly string[] = [], env: Record<string, string> = {}) {
    this.child = spawn(
      process.execPath,
      [CLI, 'serve', 'mcp', folder, '--http', '--port', '0', ...args],
      {
        stdio: 'pipe',
        // Debug, so tests can wait on per-call lines (`call started`); callers may override it.
        env: { ...process.env, MHL_LOG_LEVEL: 'debug', ...env },
      },
    );
    this.exited = new Promise((done) => this.child.on('close', done));
    this.ready = new Promise((done, fail) => {
      this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
        this.stderr += d;
        for (const watch of this.#watchers) watch();
        const found = /listening on http:\/\/[^\s]+:(\d+)/.exec(this.stderr);
        if (found?.[1] !== undefined) done(Number(found[1]));
      });
      this.child.on('close', () => fail(new Error(`server exited: ${this.stderr}`)));
    });
    this.ready.catch(() => undefined);
  }

  /** Resolves once stderr holds `count` matches of `match` (a log line, never a sleep). */
  logged(match: string | RegExp, count = 1): Promise<void> {
    const counted = (): number =>
      typeof match === 'string'
        ? this.stderr.split(match).length - 1
        : (this.stderr.match(new RegExp(match.source, `${match.flags.replace('g', '')}g`))
            ?.length ?? 0);
    return new Promise((done, fail) => {
      const check = () => {
        if (counted() < count) return;
        this.#watchers.delete(check);
        done();
      };
      this.#watchers.add(check);
      void this.exited.then(() => {
        if (this.#watchers.delete(check))
          fail(new Error(`server exited before ${match}: ${this.stderr}`));
      });
      check();
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/**
 * A `start(args?, env?, folder?)` for one test file: each server it spawns (on `folder`, else
 * `defaultFolder`) is stopped with `stopWith` when the file's tests end.
 */
export function serverStarter(
  defaultFolder: string,
  stopWith: NodeJS.Signals = 'SIGTERM',
): (args?: readonly string[], env?: Record<string, string>, folder?: string) => HttpServer {
  const servers: HttpServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.stop(stopWith)));
  });
  return (args = [], env = {}, folder = defaultFolder) => {
    const server = new HttpServer(folder, args, env);
    servers.push(server);
    return server;
  };
}

export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json(): Record<string, unknown>;
}

/** One raw HTTP exchange (node:http, so Host and other headers can be set freely). */
export function send(
  port: number,
  options: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: unknown;
    agent?: Agent;
    /** The loopback address to send from (127.0.0.2, …), to look like another host. */
    localAddress?: string;
  },
): Promise<Reply> {
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string' || Buffer.isBuffer(options.body)
        ? options.body
        : JSON.stringify(options.body);
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/mcp',
        agent: options.agent ?? false,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        headers: { 'content-type': 'application/json', ...options.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => {
          text += d;
        });
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

export function rpc(id: number, method: string, params?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
}

/**
 * A stateless (2026-07-28) request: `_meta` in params and the matching headers. Resolves to
 * the raw reply.
 */
export function modern(
  port: number,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Reply> {
  return send(port, {
    headers: { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, ...headers },
    body: rpc(1, method, { ...params, _meta: MODERN_META }),
  });
}

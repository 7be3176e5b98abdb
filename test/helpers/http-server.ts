/**
 * Driving `mhl serve mcp --http` from tests: the server as a child process (started as a user
 * would, on port 0, its port read from the "listening on" line), raw JSON-RPC over node:http,
 * and the 2026-07-28 `_meta` every stateless request carries.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import {
  type Agent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
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

/** A response's status line and headers, known before its body has arrived. */
export interface Head {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: unknown;
  agent?: Agent;
  /** The loopback address to send from (127.0.0.2, …), to look like another host. */
  localAddress?: string;
}

/**
 * One raw HTTP exchange, read as it arrives: `head` resolves as soon as the status line is in
 * (a stream's first event), `reply` once the whole body is.
 */
export function exchange(
  port: number,
  options: SendOptions,
): { head: Promise<Head>; reply: Promise<Reply> } {
  const body =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string' || Buffer.isBuffer(options.body)
        ? options.body
        : JSON.stringify(options.body);
  let onHead: (head: Head) => void = () => {};
  let onError: (error: Error) => void = () => {};
  const head = new Promise<Head>((done, fail) => {
    onHead = done;
    onError = fail;
  });
  // A caller that only wants the whole reply never awaits the head; its failure is the reply's.
  head.catch(() => undefined);
  const reply = new Promise<Reply>((done, fail) => {
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
        onHead({ status: res.statusCode ?? 0, headers: res.headers });
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
    req.on('error', (error) => {
      onError(error);
      fail(error);
    });
    req.end(body);
  });
  return { head, reply };
}

/** One raw HTTP exchange (node:http, so Host and other headers can be set freely). */
export function send(port: number, options: SendOptions): Promise<Reply> {
  return exchange(port, options).reply;
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

/** A JSON-RPC reply's `result`, failing the test (with `what` and the body) on an error. */
export function resultOf(reply: Reply, what: string): Record<string, unknown> {
  const body = reply.json();
  assert.equal(body['error'], undefined, `${what}: ${reply.text}`);
  return body['result'] as Record<string, unknown>;
}

/** The result of a stateless call, failing the test on a JSON-RPC error. */
export async function call(
  port: number,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return resultOf(await modern(port, method, params, headers), method);
}

export const LEGACY_VERSION = '2025-11-25';

/**
 * A legacy (2025-11-25) session on the raw wire, initialized and acknowledged; resolves to its
 * id. `headers` go on both requests (a principal, a token), from `localAddress` if given.
 */
export async function openLegacySession(
  port: number,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<string> {
  const from = localAddress === undefined ? {} : { localAddress };
  const init = await send(port, {
    ...from,
    headers: { accept: 'application/json, text/event-stream', ...headers },
    body: rpc(0, 'initialize', {
      protocolVersion: LEGACY_VERSION,
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    }),
  });
  const id = init.headers['mcp-session-id'];
  assert.equal(typeof id, 'string', init.text);
  await send(port, {
    ...from,
    headers: { 'mcp-session-id': id as string, 'mcp-protocol-version': LEGACY_VERSION, ...headers },
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
  });
  return id as string;
}

/** One request on a legacy session; resolves to the raw reply (JSON or an event stream). */
export function inLegacySession(
  port: number,
  session: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<Reply> {
  return send(port, {
    ...(localAddress === undefined ? {} : { localAddress }),
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
      'mcp-protocol-version': LEGACY_VERSION,
      ...headers,
    },
    body: rpc(7, method, params),
  });
}

/**
 * A freshly initialized legacy session and its standing GET event stream, open (status not yet
 * checked); `headers` address that session, for the requests that follow.
 */
export async function legacyEventStream(port: number): Promise<{
  session: string;
  headers: Record<string, string>;
  stream: IncomingMessage;
}> {
  const init = await send(port, {
    headers: { accept: 'application/json, text/event-stream' },
    body: rpc(1, 'initialize', { protocolVersion: LEGACY_VERSION, capabilities: {} }),
  });
  const session = init.headers['mcp-session-id'] as string;
  const headers = { accept: 'text/event-stream', 'mcp-session-id': session };
  const stream = await new Promise<IncomingMessage>((done, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/mcp', headers, agent: false });
    req.on('response', done).on('error', fail).end();
  });
  return { session, headers, stream };
}

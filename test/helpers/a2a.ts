/**
 * Driving the A2A endpoint from tests: `mhl serve a2a` as a child process (port 0, its port read
 * from the "listening on" line), raw JSON-RPC requests to it in either wire version, and the
 * official A2A JS SDK client pointed at its Agent Card.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { after } from 'node:test';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { CLI } from './cli.js';
import { type Reply, send } from './http-server.js';

/** `mhl serve a2a FOLDER --port 0 …args`, stopped when the test file ends. */
export class A2aServer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ready: Promise<number>;
  readonly exited: Promise<number | null>;
  stderr = '';

  constructor(folder: string, args: readonly string[] = [], env: Record<string, string> = {}) {
    this.child = spawn(process.execPath, [CLI, 'serve', 'a2a', folder, '--port', '0', ...args], {
      stdio: 'pipe',
      env: { ...process.env, MHL_LOG_LEVEL: 'info', ...env },
    });
    this.exited = new Promise((done) => this.child.on('close', done));
    this.ready = new Promise((done, fail) => {
      this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
        this.stderr += d;
        const found = /listening on http:\/\/[^\s]+:(\d+)/.exec(this.stderr);
        if (found?.[1] !== undefined) done(Number(found[1]));
      });
      this.child.on('close', () => fail(new Error(`server exited: ${this.stderr}`)));
    });
    this.ready.catch(() => undefined);
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

/** A `start(folder, args?)` whose servers stop when the file's tests end. */
export function a2aStarter(): (
  folder: string,
  args?: readonly string[],
  env?: Record<string, string>,
) => A2aServer {
  const servers: A2aServer[] = [];
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });
  return (folder, args = [], env = {}) => {
    const server = new A2aServer(folder, args, env);
    servers.push(server);
    return server;
  };
}

let ids = 0;

/** One A2A JSON-RPC request; `version` becomes the `A2A-Version` header (none when undefined). */
export function a2a(
  port: number,
  method: string,
  params: unknown,
  options: { version?: string; headers?: Record<string, string>; path?: string } = {},
): Promise<Reply> {
  return send(port, {
    path: options.path ?? '/a2a',
    headers: {
      ...(options.version !== undefined ? { 'a2a-version': options.version } : {}),
      ...options.headers,
    },
    body: { jsonrpc: '2.0', id: ++ids, method, params },
  });
}

/** A user message in the 1.0 wire form (parts without `kind`). */
export function messageV1(
  parts: readonly Record<string, unknown>[],
  metadata?: Record<string, unknown>,
  taskId?: string,
): Record<string, unknown> {
  return {
    messageId: `m${++ids}`,
    role: 'ROLE_USER',
    parts,
    ...(metadata !== undefined ? { metadata } : {}),
    ...(taskId !== undefined ? { taskId } : {}),
  };
}

/** A user message in the 0.3 wire form (`kind` on the message and its parts). */
export function messageV03(
  parts: readonly Record<string, unknown>[],
  metadata?: Record<string, unknown>,
  taskId?: string,
): Record<string, unknown> {
  return {
    kind: 'message',
    messageId: `m${++ids}`,
    role: 'user',
    parts,
    ...(metadata !== undefined ? { metadata } : {}),
    ...(taskId !== undefined ? { taskId } : {}),
  };
}

/** The official SDK client for the server's card; `headers` go on every request it sends. */
export function sdkClient(port: number, headers: Record<string, string> = {}) {
  const fetchImpl: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(`http://127.0.0.1:${port}`);
}

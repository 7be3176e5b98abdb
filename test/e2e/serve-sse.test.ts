import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import {
  Agent,
  type ClientRequest,
  request as httpRequest,
  type IncomingHttpHeaders,
} from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { rpc, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve-steps');
const VERSION = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const MODERN_HEADERS = { 'mcp-protocol-version': VERSION };
const BOTH = { accept: 'application/json, text/event-stream' };
const INIT_PARAMS = {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'raw', version: '1' },
};

const start = serverStarter(FOLDER);

interface SseEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** A POST whose body is read as it arrives: SSE events are parsed one by one. */
interface Exchange {
  readonly req: ClientRequest;
  /** Status and headers, once they arrive. */
  readonly head: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** Every SSE event so far (only for a text/event-stream answer). */
  readonly events: SseEvent[];
  /** Resolves with the nth event (1-based) once it has arrived. */
  nth(n: number): Promise<SseEvent>;
  /** The whole body once the answer ended; rejects if the connection broke. */
  readonly body: Promise<string>;
}

function post(
  port: number,
  message: unknown,
  headers: Record<string, string>,
  agent: Agent | false = false,
): Exchange {
  const events: SseEvent[] = [];
  const waiters: { n: number; done: (e: SseEvent) => void }[] = [];
  let buffer = '';
  let onHead: (h: { status: number; headers: IncomingHttpHeaders }) => void = () => {};
  const head = new Promise<{ status: number; headers: IncomingHttpHeaders }>((done) => {
    onHead = done;
  });
  let req!: ClientRequest;
  const body = new Promise<string>((done, fail) => {
    req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        onHead({ status: res.statusCode ?? 0, headers: res.headers });
        const streamed = String(res.headers['content-type']).startsWith('text/event-stream');
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
          if (!streamed) return;
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            events.push(parseEvent(buffer.slice(0, end)));
            buffer = buffer.slice(end + 2);
            for (const w of waiters.filter((x) => x.n <= events.length)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.done(events[w.n - 1] as SseEvent);
            }
          }
        });
        res.on('end', () => done(text));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(JSON.stringify(message));
  });
  body.catch(() => undefined);
  const nth = (n: number) =>
    new Promise<SseEvent>((done) => {
      const seen = events[n - 1];
      if (seen !== undefined) done(seen);
      else waiters.push({ n, done });
    });
  return { req, head, events, nth, body };
}

function parseEvent(block: string): SseEvent {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    else assert.fail(`unexpected SSE line ${JSON.stringify(line)}`);
  }
  return { event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
}

function stepsCall(
  id: number,
  meta: Record<string, unknown>,
  label = 'x',
): Record<string, unknown> {
  return rpc(id, 'tools/call', {
    name: 'Steps',
    arguments: { label, context: { cwd: tempDir() } },
    _meta: meta,
  });
}

function holdCall(id: number, pidfile: string, meta: Record<string, unknown>) {
  return rpc(id, 'tools/call', {
    name: 'Hold',
    arguments: { pidfile, context: { cwd: tempDir() } },
    _meta: meta,
  });
}

/** Opens a legacy session; resolves with its headers for later requests. */
async function legacySession(
  port: number,
  protocolVersion = '2025-11-25',
): Promise<Record<string, string>> {
  const init = post(port, rpc(1, 'initialize', { ...INIT_PARAMS, protocolVersion }), BOTH);
  const { status, headers } = await init.head;
  assert.equal(status, 200);
  await init.body;
  const session = { 'mcp-session-id': headers['mcp-session-id'] as string };
  const ready = post(port, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  assert.equal((await ready.head).status, 202);
  return session;
}

/** The data of the last event; fails the test when there is none. */
function lastData(events: readonly SseEvent[]): Record<string, unknown> {
  const last = events.at(-1);
  assert.ok(last, 'no SSE event arrived');
  return last.data;
}

function progressOf(events: readonly SseEvent[]): unknown[] {
  return events
    .filter((e) => e.data['method'] === 'notifications/progress')
    .map((e) => e.data['params']);
}

const STEP_PROGRESS = (token: string | number) => [
  { progressToken: token, progress: 1, total: 3, message: 'step One' },
  { progressToken: token, progress: 2, total: 3, message: 'step Two' },
  { progressToken: token, progress: 3, total: 3, message: 'step Three' },
];

/** Waits for the pid a `Hold` call's shell wrote, i.e. until its command is running. */
function heldPid(pidfile: string): Promise<number> {
  return until(() => readPid(pidfile), { what: `pid in ${pidfile}`, timeoutMs: 10_000 });
}

describe('mhl serve mcp --http: SSE answers', () => {
  it('streams step progress, then the response, for a modern call with a progressToken', async () => {
    const server = start();
    const port = await server.ready;
    const call = post(port, stepsCall(7, { ...MODERN_META, progressToken: 'tok-1' }), {
      ...BOTH,
      ...MODERN_HEADERS,
    });
    const { status, headers } = await call.head;
    assert.equal(status, 200);
    assert.equal(headers['content-type'], 'text/event-stream');
    assert.equal(headers['cache-control'], 'no-cache, no-transform');
    await call.body;
    assert.ok(call.events.every((e) => e.event === 'message'));
    assert.deepEqual(progressOf(call.events), STEP_PROGRESS('tok-1'));
    assert.equal(call.events.length, 4, 'three progress events and the response');
    const last = lastData(call.events) as { id: number; result: Record<string, unknown> };
    assert.equal(last.id, 7);
    assert.deepEqual(last.result['structuredContent'], { trail: ['x one', 'x two', 'x three'] });
    assert.equal(last.result['resultType'], 'complete');
    assert.equal(await server.stop(), 0);
  });

  it('streams the progress of a run answered without waiting (one step of plain copies)', async () => {
    // Such a run, and every layer above it, answers synchronously: its progress event must
    // still come first, in an event stream, in both eras; without a token the answer is JSON.
    const folder = tempDir();
    writeFileSync(
      join(folder, 'echo.mh'),
      'pipeline Echo {\n  input text: string\n  var out = ""\n  step S { out = text }\n}\n',
    );
    const server = start([], {}, folder);
    const port = await server.ready;
    const echo = (id: number, meta: Record<string, unknown>) =>
      rpc(id, 'tools/call', {
        name: 'Echo',
        arguments: { text: 'hi', context: { cwd: tempDir() } },
        _meta: meta,
      });
    const progress = [{ progressToken: 'e', progress: 1, total: 1, message: 'step S' }];
    const session = await legacySession(port);
    const streams = [
      post(port, echo(1, { ...MODERN_META, progressToken: 'e' }), { ...BOTH, ...MODERN_HEADERS }),
      post(port, echo(2, { progressToken: 'e' }), { ...BOTH, ...session }),
    ];
    for (const [i, call] of streams.entries()) {
      const { status, headers } = await call.head;
      assert.equal(status, 200);
      assert.equal(headers['content-type'], 'text/event-stream');
      await call.body;
      assert.deepEqual(progressOf(call.events), progress);
      assert.equal(call.events.length, 2, 'the progress event, then the response');
      const last = lastData(call.events) as { id: number; result: Record<string, unknown> };
      assert.equal(last.id, i + 1);
      assert.deepEqual(last.result['structuredContent'], { out: 'hi', text: 'hi' });
    }
    const plain = post(port, echo(3, MODERN_META), { ...BOTH, ...MODERN_HEADERS });
    assert.equal((await plain.head).headers['content-type'], 'application/json');
    const answer = JSON.parse(await plain.body) as { id: number; result: Record<string, unknown> };
    assert.equal(answer.id, 3);
    assert.deepEqual(answer.result['structuredContent'], { out: 'hi', text: 'hi' });
    assert.equal(await server.stop(), 0);
  });

  it('streams progress in a legacy session, and answers JSON when nothing needs a stream', async () => {
    const server = start();
    const port = await server.ready;
    const session = await legacySession(port);
    const streamed = post(port, stepsCall(2, { progressToken: 5 }, 'l'), { ...BOTH, ...session });
    assert.equal((await streamed.head).headers['content-type'], 'text/event-stream');
    await streamed.body;
    assert.deepEqual(progressOf(streamed.events), STEP_PROGRESS(5));
    assert.equal((lastData(streamed.events) as { id: number }).id, 2);
    // Accept without text/event-stream: the same call answers one JSON body, progress dropped.
    const jsonOnly = post(port, stepsCall(3, { progressToken: 6 }), {
      accept: 'application/json',
      ...session,
    });
    assert.equal((await jsonOnly.head).headers['content-type'], 'application/json');
    const answer = JSON.parse(await jsonOnly.body) as { id: number; result: unknown };
    assert.equal(answer.id, 3);
    // No progressToken: nothing to send before the answer, so JSON even though SSE is accepted.
    const plain = post(port, stepsCall(4, {}), { ...BOTH, ...session });
    assert.equal((await plain.head).headers['content-type'], 'application/json');
    assert.equal((JSON.parse(await plain.body) as { id: number }).id, 4);
    // A wildcard or a zero quality does not ask for a stream.
    for (const accept of ['*/*', 'application/json, text/event-stream;q=0']) {
      const other = post(port, stepsCall(5, { progressToken: 8 }), { accept, ...session });
      assert.equal((await other.head).headers['content-type'], 'application/json', accept);
      await other.body;
    }
    // A request that reports no progress stays JSON, token or not.
    const list = post(port, rpc(6, 'tools/list', { _meta: { progressToken: 9 } }), {
      ...BOTH,
      ...session,
    });
    assert.equal((await list.head).headers['content-type'], 'application/json');
    await list.body;
    assert.equal(await server.stop(), 0);
  });

  it('streams a 2025-03-26 batch: each member has its progress and its own response event', async () => {
    const server = start();
    const port = await server.ready;
    const session = await legacySession(port, '2025-03-26');
    const headers = { ...BOTH, ...session, 'mcp-protocol-version': '2025-03-26' };
    const batch = post(port, [stepsCall(1, { progressToken: 'a' }), stepsCall(2, {})], headers);
    assert.equal((await batch.head).headers['content-type'], 'text/event-stream');
    await batch.body;
    assert.deepEqual(progressOf(batch.events), STEP_PROGRESS('a'));
    const answers = batch.events.filter((e) => 'id' in e.data).map((e) => e.data['id']);
    assert.deepEqual(answers.sort(), [1, 2]);
    assert.equal(batch.events.length, 5, 'three progress events, then one event per response');
    assert.equal(await server.stop(), 0);
  });

  it('answers invalid arguments as one JSON result, without opening a stream', async () => {
    const server = start();
    const port = await server.ready;
    const bad = post(
      port,
      rpc(1, 'tools/call', {
        name: 'Hold',
        arguments: { context: { cwd: tempDir() } },
        _meta: { ...MODERN_META, progressToken: 1 },
      }),
      { ...BOTH, ...MODERN_HEADERS },
    );
    const { status, headers } = await bad.head;
    assert.deepEqual([status, headers['content-type']], [200, 'application/json']);
    const answer = JSON.parse(await bad.body) as {
      result: { isError: boolean; _meta: Record<string, { code: string; field: string }> };
    };
    const diagnostic = answer.result._meta['mhl/diagnostic'];
    assert.deepEqual(
      [answer.result.isError, diagnostic?.code, diagnostic?.field],
      [true, 'INVALID_ARGUMENT', 'pidfile'],
    );
    assert.equal(await server.stop(), 0);
  });

  for (const era of ['modern', 'legacy'] as const) {
    it(`cancels the call when a ${era} client disconnects mid-stream`, async () => {
      const server = start();
      const port = await server.ready;
      const pidfile = join(tempDir(), 'pid');
      const headers =
        era === 'modern'
          ? { ...BOTH, ...MODERN_HEADERS }
          : { ...BOTH, ...(await legacySession(port)) };
      const meta =
        era === 'modern' ? { ...MODERN_META, progressToken: 'h' } : { progressToken: 'h' };
      const call = post(port, holdCall(3, pidfile, meta), headers);
      assert.equal((await call.head).headers['content-type'], 'text/event-stream');
      await call.nth(2); // progress for the Wait step: its command starts next
      const pid = await heldPid(pidfile);
      call.req.destroy();
      await assert.rejects(call.body);
      await until(() => !isAlive(pid), { what: 'the held command to be killed' });
      assert.equal(await server.stop(), 0);
    });
  }

  it('ends a stream with a -32000 event when shutdown cancels the call, and exits 0', async () => {
    const server = start();
    const port = await server.ready;
    const pidfile = join(tempDir(), 'pid');
    const agent = new Agent({ keepAlive: true });
    const call = post(
      port,
      holdCall(4, pidfile, { ...MODERN_META, progressToken: 's' }),
      { ...BOTH, ...MODERN_HEADERS },
      agent,
    );
    await call.nth(1);
    const pid = await heldPid(pidfile);
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    await call.body;
    const last = lastData(call.events) as { id: number; error: { code: number } };
    assert.deepEqual([last.id, last.error.code], [4, -32000]);
    assert.equal(await server.exited, 0);
    assert.ok(Date.now() - stopped < 5000, 'within the shutdown budget');
    assert.equal(isAlive(pid), false);
    agent.destroy();
  });
});

describe('mhl serve mcp --http: notifications/cancelled', () => {
  it('aborts an in-flight call of the same legacy session and kills its command', async () => {
    const server = start();
    const port = await server.ready;
    const session = await legacySession(port);
    const pidfile = join(tempDir(), 'pid');
    const call = post(port, holdCall(11, pidfile, {}), { ...BOTH, ...session });
    await server.logged('call started');
    const pid = await heldPid(pidfile);
    // A cancel from another session, or naming another id, changes nothing.
    const other = await legacySession(port);
    const stray = [
      post(port, cancel(11), { ...BOTH, ...other }),
      post(port, cancel(12), { ...BOTH, ...session }),
    ];
    for (const s of stray) assert.equal((await s.head).status, 202);
    assert.equal(isAlive(pid), true);
    const sent = post(port, cancel(11, 'user pressed stop'), { ...BOTH, ...session });
    assert.equal((await sent.head).status, 202);
    const { status } = await call.head;
    assert.equal(status, 202, 'a cancelled request gets no JSON-RPC response');
    assert.equal(await call.body, '');
    await until(() => !isAlive(pid), { what: 'the held command to be killed' });
    // The session still works after the cancel.
    const list = post(port, rpc(12, 'tools/list'), { ...BOTH, ...session });
    assert.equal((await list.head).status, 200);
    assert.equal(await server.stop(), 0);
  });

  it('ends a streamed call without a response event when it is cancelled', async () => {
    const server = start();
    const port = await server.ready;
    const session = await legacySession(port);
    const pidfile = join(tempDir(), 'pid');
    const call = post(port, holdCall(21, pidfile, { progressToken: 21 }), { ...BOTH, ...session });
    await call.nth(2);
    const pid = await heldPid(pidfile);
    assert.equal((await post(port, cancel(21), { ...BOTH, ...session }).head).status, 202);
    await call.body;
    assert.deepEqual(
      call.events.map((e) => e.data['method']),
      ['notifications/progress', 'notifications/progress'],
    );
    await until(() => !isAlive(pid), { what: 'the held command to be killed' });
    assert.equal(await server.stop(), 0);
  });
});

function cancel(requestId: number, reason?: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, ...(reason === undefined ? {} : { reason }) },
  };
}

describe('mhl serve mcp --http: progress through the official SDK clients', () => {
  it('reaches the SDK v1 client onprogress callback for every step', async () => {
    const server = start();
    const port = await server.ready;
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'e2e-sse', version: '1.0.0' });
    await client.connect(transport);
    try {
      const seen: unknown[] = [];
      const result = await client.callTool(
        { name: 'Steps', arguments: { label: 'v1', context: { cwd: tempDir() } } },
        undefined,
        { onprogress: (p) => seen.push(p) },
      );
      assert.deepEqual(result.structuredContent, { trail: ['v1 one', 'v1 two', 'v1 three'] });
      assert.deepEqual(
        seen,
        STEP_PROGRESS(0).map(({ progressToken: _, ...p }) => p),
      );
      // Cancelling through the SDK sends notifications/cancelled: the command dies.
      const pidfile = join(tempDir(), 'pid');
      const abort = new AbortController();
      const held = client.callTool(
        { name: 'Hold', arguments: { pidfile, context: { cwd: tempDir() } } },
        undefined,
        { signal: abort.signal },
      );
      const pid = await heldPid(pidfile);
      abort.abort(new Error('stop'));
      await assert.rejects(held);
      await until(() => !isAlive(pid), { what: 'the held command to be killed' });
      await transport.terminateSession();
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
  });

  for (const mode of [{ pin: '2026-07-28' }, 'auto'] as const) {
    it(`reaches the SDK v2 client onprogress callback (versionNegotiation ${JSON.stringify(mode)})`, async () => {
      const server = start();
      const port = await server.ready;
      const v2 = await import('@modelcontextprotocol/client');
      const transport = new v2.StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${port}/mcp`),
      );
      const client = new v2.Client(
        { name: 'e2e-v2', version: '1.0.0' },
        { versionNegotiation: { mode } },
      );
      await client.connect(transport);
      try {
        if (typeof mode === 'object') {
          assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        }
        const seen: unknown[] = [];
        const result = await client.callTool(
          { name: 'Steps', arguments: { label: 'v2', context: { cwd: tempDir() } } },
          { onprogress: (p: unknown) => seen.push(p) },
        );
        assert.deepEqual(result.structuredContent, { trail: ['v2 one', 'v2 two', 'v2 three'] });
        assert.deepEqual(
          seen.map((p) => ({ ...(p as Record<string, unknown>) })),
          STEP_PROGRESS(0).map(({ progressToken: _, ...p }) => p),
        );
      } finally {
        await client.close();
      }
      assert.equal(await server.stop(), 0);
    });
  }
});

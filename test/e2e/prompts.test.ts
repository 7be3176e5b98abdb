/**
 * Prompts, completion, logging and resource subscriptions end to end: the built server on the
 * prompts fixture, driven by the official SDK v1 client over stdio and HTTP, the SDK v2 client
 * pinned to 2026-07-28, and raw JSON-RPC where the wire itself is the point.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import {
  legacyEventStream,
  MODERN_META,
  MODERN_VERSION,
  modern,
  rpc,
  send,
  serverStarter,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/prompts');
const start = serverStarter(FOLDER);

/** Collects notifications as they arrive; `next(n)` resolves once `n` are held (no sleeps). */
class Inbox<T> {
  readonly items: T[] = [];
  #waiters: { count: number; done: () => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.items.length < w.count) return true;
      w.done();
      return false;
    });
  }

  next(count = this.items.length + 1): Promise<T[]> {
    if (this.items.length >= count) return Promise.resolve(this.items);
    return new Promise((done) => this.#waiters.push({ count, done: () => done(this.items) }));
  }
}

async function codeOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    return error.code;
  }
  assert.fail('expected an MCP error');
}

/** What both transports must answer the same way: prompts, completion, logging. */
async function exercise(client: Client): Promise<void> {
  const { prompts } = await client.listPrompts();
  assert.deepEqual(
    prompts.map((p) => p.name),
    ['Note', 'Review', 'Summarize'],
  );
  const review = prompts.find((p) => p.name === 'Review');
  assert.deepEqual(
    review?.arguments?.map((a) => [a.name, a.required]),
    [
      ['file', true],
      ['lines', true],
      ['strict', false],
      ['level', false],
    ],
  );
  assert.equal(prompts.find((p) => p.name === 'Summarize')?.title, 'Summarize a topic');

  const got = await client.getPrompt({
    name: 'Review',
    arguments: { file: 'a.go', lines: '12', strict: 'true', level: 'Relaxed' },
  });
  assert.deepEqual(got.messages, [
    {
      role: 'user',
      content: { type: 'text', text: 'Review a.go (12 lines) in Relaxed mode; strict: true.' },
    },
  ]);
  // The same prompt rendered by a step of a workflow: one template path, one text.
  const step = await client.callTool({ name: 'Rendered', arguments: { file: 'a.go', lines: 12 } });
  assert.deepEqual(step.structuredContent, {
    text: 'Review a.go (12 lines) in Relaxed mode; strict: true.',
  });
  const file = await client.getPrompt({ name: 'Summarize', arguments: { topic: 'MCP' } });
  assert.deepEqual(file.messages[0]?.content, {
    type: 'text',
    text: 'Summarize MCP for engineers in three sentences.',
  });
  for (const bad of [{ file: 'a', lines: 'many' }, { file: 'a', lines: '1', level: 'Loose' }, {}]) {
    assert.equal(await codeOf(client.getPrompt({ name: 'Review', arguments: bad })), -32602);
  }
  assert.equal(await codeOf(client.getPrompt({ name: 'Nope' })), -32602);

  const level = await client.complete({
    ref: { type: 'ref/prompt', name: 'Review' },
    argument: { name: 'level', value: 're' },
  });
  assert.deepEqual(level.completion, { values: ['Relaxed'], total: 1, hasMore: false });
  const bool = await client.complete({
    ref: { type: 'ref/prompt', name: 'Review' },
    argument: { name: 'strict', value: '' },
  });
  assert.deepEqual(bool.completion.values, ['true', 'false']);
  const names = await client.complete({
    ref: { type: 'ref/resource', uri: 'mhl://workflow/{name}' },
    argument: { name: 'name', value: 'r' },
  });
  assert.deepEqual(names.completion.values, ['Rendered']);

  const logs = new Inbox<{ level: string; logger?: string | undefined; data: unknown }>();
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  // Nothing is sent until the client asks for a level.
  await client.callTool({ name: 'Chatty', arguments: { label: 'quiet' } });
  await client.setLoggingLevel('warning');
  await client.callTool({ name: 'Chatty', arguments: { label: 'loud' } });
  assert.deepEqual(await logs.next(2), [
    { level: 'warning', logger: 'Chatty', data: 'careful loud' },
    { level: 'error', logger: 'Chatty', data: 'broken loud' },
  ]);
  assert.equal(await codeOf(client.setLoggingLevel('loud' as 'info')), -32602);
}

describe('prompts, completion, logging and subscriptions over the wire', () => {
  it('works over stdio', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', FOLDER],
      stderr: 'ignore',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const capabilities = client.getServerCapabilities();
      assert.deepEqual(capabilities?.prompts, { listChanged: false });
      assert.deepEqual(capabilities?.logging, {});
      assert.deepEqual(capabilities?.completions, {});
      assert.equal(capabilities?.resources?.subscribe, true);
      await exercise(client);
      await client.subscribeResource({ uri: 'mhl://workflow/Chatty' });
      const unknown = client.subscribeResource({ uri: 'mhl://workflow/Nope' });
      assert.equal(await codeOf(unknown), -32002);
    } finally {
      await client.close();
    }
  });

  it('works over HTTP, and tells a subscribed owner when a run changes', async () => {
    const server = start();
    const port = await server.ready;
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    const other = new Client({ name: 'other', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url));
    await other.connect(new StreamableHTTPClientTransport(url));
    try {
      await exercise(client);
      const dir = tempDir();
      const started = await client.callTool({
        name: 'mhl_run_start',
        arguments: { workflow: 'Waiter', arguments: { dir } },
      });
      const runId = (started.structuredContent as { runId: string }).runId;
      const uri = `mhl://run/${runId}/logs`;
      const updates = new Inbox<string>();
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) =>
        updates.push(n.params.uri),
      );
      await client.subscribeResource({ uri });
      // Someone else's run is refused exactly like a run that does not exist.
      const foreign = await codeOf(other.subscribeResource({ uri }));
      const missing = await codeOf(
        other.subscribeResource({ uri: `mhl://run/${'0'.repeat(32)}/logs` }),
      );
      assert.deepEqual([foreign, missing], [-32002, -32002]);
      const runIds = (who: Client) =>
        who.complete({
          ref: { type: 'ref/resource', uri: 'mhl://run/{runId}/logs' },
          argument: { name: 'runId', value: runId.slice(0, 4) },
        });
      assert.deepEqual((await runIds(client)).completion.values, [runId]);
      assert.deepEqual((await runIds(other)).completion.values, []);
      writeFileSync(join(dir, 'go'), '');
      let text = '';
      while (!text.includes('released')) {
        const seen = await updates.next();
        assert.ok(seen.every((u) => u.startsWith(`mhl://run/${runId}/`)));
        const read = await client.readResource({ uri });
        text = (read.contents[0] as { text: string }).text;
      }
      assert.match(text, /waiting\nreleased\n/);
    } finally {
      await client.close();
      await other.close();
    }
    assert.equal(await server.stop(), 0);
  });

  it('renders a prompt in an execution slot: none free is -32000 (HTTP 503), retryable', async () => {
    const server = start(['--max-active', '1']);
    const port = await server.ready;
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      const dir = tempDir();
      const started = await client.callTool({
        name: 'mhl_run_start',
        arguments: { workflow: 'Waiter', arguments: { dir } },
      });
      const runId = (started.structuredContent as { runId: string }).runId;
      const logs = async () => {
        const read = await client.readResource({ uri: `mhl://run/${runId}/logs` });
        return (read.contents[0] as { text: string }).text;
      };
      // The run holds the only slot from its first step on.
      await until(async () => (await logs()).includes('waiting'), { what: 'the run to wait' });
      const note = { name: 'Note', arguments: { text: 'hi' } };
      assert.equal(await codeOf(client.getPrompt(note)), -32000);
      const reply = await modern(port, 'prompts/get', note, { 'mcp-name': 'Note' });
      assert.equal(reply.status, 503, reply.text);
      assert.deepEqual(reply.json()['error'], {
        code: -32000,
        message: 'all execution slots are busy (--max-active); retry shortly',
        data: { code: 'EXECUTION_CAPACITY_FULL', retryable: true },
      });
      writeFileSync(join(dir, 'go'), '');
      // Freed when the run ends: the retry the error asked for succeeds.
      const got = await until(() => client.getPrompt(note).catch(() => undefined), {
        what: 'a free slot',
      });
      assert.deepEqual(got.messages[0]?.content, { type: 'text', text: 'Note: hi' });
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
  });

  it('refuses the 2025-only methods on 2026-07-28 requests, as unknown methods', async () => {
    const server = start();
    const port = await server.ready;
    for (const [method, params] of [
      ['logging/setLevel', { level: 'info' }],
      ['resources/subscribe', { uri: 'mhl://workflow/Chatty' }],
      ['resources/unsubscribe', { uri: 'mhl://workflow/Chatty' }],
    ] as const) {
      const reply = await modern(port, method, params);
      assert.equal(reply.status, 404, reply.text);
      assert.equal((reply.json()['error'] as { code: number }).code, -32601);
    }
    const discover = (await modern(port, 'server/discover')).json()['result'] as {
      capabilities: Record<string, unknown>;
    };
    assert.equal(discover.capabilities['logging'], undefined);
    assert.deepEqual(discover.capabilities['prompts'], { listChanged: false });
    assert.equal(await server.stop(), 0);
  });

  it('gives a legacy session one standing GET stream, ended with the session', async () => {
    const server = start();
    const port = await server.ready;
    const { headers, stream } = await legacyEventStream(port);
    assert.deepEqual(
      [stream.statusCode, stream.headers['content-type']],
      [200, 'text/event-stream'],
    );
    const ended = new Promise((done) => stream.on('end', done).resume());
    assert.equal((await send(port, { method: 'GET', headers })).status, 409);
    assert.equal((await send(port, { method: 'DELETE', headers })).status, 204);
    await ended;
    assert.equal(await server.stop(), 0);
  });

  it('sends a 2026-07-28 call its log lines at the level its _meta names', async () => {
    const server = start();
    const port = await server.ready;
    const reply = await send(port, {
      headers: {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'Chatty',
      },
      body: rpc(1, 'tools/call', {
        name: 'Chatty',
        arguments: { label: 'm' },
        _meta: { ...MODERN_META, 'io.modelcontextprotocol/logLevel': 'error' },
      }),
    });
    assert.equal(reply.headers['content-type'], 'text/event-stream');
    const events = [...reply.text.matchAll(/^data: (.*)$/gm)].map(
      (m) => JSON.parse(m[1] as string) as Record<string, unknown>,
    );
    assert.deepEqual(events[0], {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'error', logger: 'Chatty', data: 'broken m' },
    });
    assert.equal(events.length, 2);
    const result = events[1]?.['result'] as { structuredContent?: unknown } | undefined;
    assert.deepEqual(result?.structuredContent, { done: true });
    assert.equal(await server.stop(), 0);
  });
});

describe('prompts with the SDK v2 client pinned to 2026-07-28', () => {
  it('lists and gets prompts over stdio', async () => {
    const v2 = await import('@modelcontextprotocol/client');
    const { StdioClientTransport: V2Stdio } = await import('@modelcontextprotocol/client/stdio');
    const client = new v2.Client(
      { name: 'e2e-v2', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new V2Stdio({
        command: process.execPath,
        args: [CLI, 'serve', 'mcp', FOLDER],
        stderr: 'ignore',
      }),
    );
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
      const { prompts } = await client.listPrompts();
      assert.deepEqual(
        prompts.map((p) => p.name),
        ['Note', 'Review', 'Summarize'],
      );
      const got = await client.getPrompt({
        name: 'Review',
        arguments: { file: 'b.ts', lines: '3' },
      });
      assert.deepEqual(got.messages[0]?.content, {
        type: 'text',
        text: 'Review b.ts (3 lines) in Strict mode; strict: false.',
      });
    } finally {
      await client.close();
    }
  });

  it('lists and gets prompts over HTTP', async () => {
    const server = start();
    const port = await server.ready;
    const v2 = await import('@modelcontextprotocol/client');
    const client = new v2.Client(
      { name: 'e2e-v2', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new v2.StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      const { prompts } = await client.listPrompts();
      assert.equal(prompts.length, 3);
      const got = await client.getPrompt({ name: 'Note', arguments: { text: 'hi' } });
      assert.deepEqual(got.messages[0]?.content, { type: 'text', text: 'Note: hi' });
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
  });
});

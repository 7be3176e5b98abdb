import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';
import { StdioServer } from '../helpers/stdio-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');
/**
 * Over stdio as over HTTP: the workflows, then the job tools, then the async run tools, then
 * the vault's listing (docs/secrets.md).
 */
const STDIO_TOOLS = [
  'Fails',
  'Greet',
  'Sleepy',
  'job.start',
  'job.status',
  'job.result',
  'job.cancel',
  'mhl_run_start',
  'mhl_run_status',
  'mhl_run_resume',
  'mhl_run_cancel',
  'mhl_run_list',
  'mhl_run_logs',
  'secrets.list',
];
const STEPS = resolve(REPO_ROOT, 'test/fixtures/serve-steps');
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The shared stdio test server, spoken to with the explicit ids these tests choose. */
class RawServer {
  readonly #server: StdioServer;

  constructor(dir = FOLDER) {
    // Debug logging: tests wait on the per-call `call started` line.
    this.#server = new StdioServer(dir, [], { env: { MHL_LOG_LEVEL: 'debug' } });
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.#server.child;
  }

  get lines(): Record<string, unknown>[] {
    return this.#server.lines;
  }

  send(text: string): void {
    this.#server.send(text);
  }

  request(id: unknown, method: string, params?: unknown): Promise<Record<string, unknown>> {
    const message = { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) };
    const answered = this.#server.exchange(id, message);
    // A cancelled request is never answered, and some tests never wait for it: its rejection at
    // exit is no failure then; a test that awaits the answer still sees it.
    answered.catch(() => {});
    return answered;
  }

  /** Closes stdin and resolves with the exit code. */
  end(): Promise<number | null> {
    return this.#server.end();
  }
}

describe('mhl serve mcp (stdio)', () => {
  it('is driven unmodified by the official SDK v1 client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', FOLDER],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        STDIO_TOOLS,
      );
      const greet = tools.find((t) => t.name === 'Greet');
      assert.deepEqual(greet?.inputSchema.required, ['name']);
      assert.deepEqual(greet?._meta?.['mhl'], { run: { tool: 'mhl_run_start' } });
      const ok = await client.callTool({ name: 'Greet', arguments: { name: 'ana', times: 2 } });
      assert.deepEqual(ok.structuredContent, { message: 'hello ana, hello ana' });
      assert.equal(ok.isError, undefined);
      const failed = await client.callTool({ name: 'Fails', arguments: { reason: 'tests' } });
      assert.equal(failed.isError, true);
      const diagnostic = (failed._meta as Record<string, Record<string, unknown>>)[
        'mhl/diagnostic'
      ];
      assert.deepEqual([diagnostic?.['code'], diagnostic?.['step']], ['WORKFLOW_FAILED', 'Check']);
      assert.match(JSON.stringify(failed.content), /refusing: tests/);
      const manifest = await client.readResource({ uri: 'mhl://workflow/Greet' });
      assert.equal(JSON.parse((manifest.contents[0] as { text: string }).text).name, 'Greet');
      const source = await client.readResource({ uri: 'mhl://workflow/Greet/source' });
      assert.match((source.contents[0] as { text: string }).text, /pipeline Greet/);
      const { resources } = await client.listResources();
      assert.equal(resources.length, 6);
    } finally {
      await client.close();
    }
  });

  it('serves both protocol eras interleaved on one connection', async () => {
    const server = new RawServer();
    const modernList = await server.request(1, 'tools/list', { _meta: MODERN_META });
    assert.equal((modernList['result'] as { resultType: string }).resultType, 'complete');
    const early = await server.request(2, 'tools/list');
    assert.equal((early['error'] as { code: number }).code, -32602);
    const init = await server.request(3, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    assert.equal((init['result'] as { protocolVersion: string }).protocolVersion, '2025-11-25');
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const legacyCall = await server.request(4, 'tools/call', {
      name: 'Greet',
      arguments: { name: 'bo' },
    });
    assert.deepEqual((legacyCall['result'] as { structuredContent: unknown }).structuredContent, {
      message: 'hello bo',
    });
    const modernCall = await server.request(5, 'tools/call', {
      name: 'Greet',
      arguments: { name: 'cy' },
      _meta: MODERN_META,
    });
    const modern = modernCall['result'] as {
      structuredContent: unknown;
      resultType: string;
      _meta: Record<string, unknown>;
    };
    assert.deepEqual(
      [modern.structuredContent, modern.resultType],
      [{ message: 'hello cy' }, 'complete'],
    );
    assert.deepEqual(modern._meta['io.modelcontextprotocol/serverInfo'], {
      name: 'mhl',
      version: (init['result'] as { serverInfo: { version: string } }).serverInfo.version,
    });
    const discover = await server.request(6, 'server/discover', { _meta: MODERN_META });
    assert.deepEqual((discover['result'] as { supportedVersions: string[] }).supportedVersions, [
      '2026-07-28',
    ]);
    assert.deepEqual(await server.request(7, 'ping'), { jsonrpc: '2.0', id: 7, result: {} });
    assert.equal(await server.end(), 0);
  });

  it('answers every protocol error with its code, and bad arguments as results', async () => {
    const server = new RawServer();
    const code = (m: Record<string, unknown>) => (m['error'] as { code: number }).code;
    const waitParse = until(() => server.lines.find((l) => l['id'] === null), {
      what: 'the parse error answer',
    });
    server.send('{not json');
    assert.equal(code(await waitParse), -32700);
    assert.equal(code(await server.request(1, 'no/such/method', { _meta: MODERN_META })), -32601);
    assert.equal(
      code(
        await server.request(2, 'tools/list', {
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
        }),
      ),
      -32602,
    );
    const unsupported = await server.request(3, 'tools/list', {
      _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' },
    });
    assert.equal(code(unsupported), -32022);
    assert.deepEqual((unsupported['error'] as { data: unknown }).data, {
      supported: ['2026-07-28'],
      requested: '2030-01-01',
    });
    assert.equal(
      code(await server.request(4, 'tools/call', { name: 'Nope', _meta: MODERN_META })),
      -32602,
    );
    // Bad arguments are tool results a model can correct, naming the field (MCP 2025-11-25).
    const diagnostic = (m: Record<string, unknown>) => {
      const result = m['result'] as { isError?: boolean; _meta?: Record<string, unknown> };
      assert.equal(result.isError, true, JSON.stringify(m));
      return result._meta?.['mhl/diagnostic'] as Record<string, unknown>;
    };
    const invalid = await server.request(5, 'tools/call', {
      name: 'Greet',
      arguments: { colour: 'red' },
      _meta: MODERN_META,
    });
    const { code: refusal, field, retryable, missing, undeclared } = diagnostic(invalid);
    assert.deepEqual(
      { refusal, field, retryable, missing, undeclared },
      {
        refusal: 'INVALID_ARGUMENT',
        field: 'name',
        retryable: false,
        missing: ['name'],
        undeclared: ['colour'],
      },
    );
    const notFound = await server.request(6, 'resources/read', {
      uri: 'mhl://workflow/Nope',
      _meta: MODERN_META,
    });
    assert.equal(code(notFound), -32602);
    const relative = await server.request(7, 'tools/call', {
      name: 'Greet',
      arguments: { name: 'x', context: { cwd: 'relative/dir' } },
      _meta: MODERN_META,
    });
    assert.equal(diagnostic(relative)['field'], 'context.cwd');
    assert.equal(await server.end(), 0);
  });

  it('answers an over-long line under its request id, first or last in the line', async () => {
    const server = new StdioServer(FOLDER);
    const pad = 'x'.repeat(8 * 1024 * 1024 + 10);
    const params = `{"name":"Greet","arguments":{"name":"${pad}"}}`;
    const first = await server.exchange(
      41,
      `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":${params}}`,
    );
    assert.equal((first['error'] as { code: number }).code, -32600);
    assert.equal((first['error'] as { data: { maxBytes: number } }).data.maxBytes, 8 * 1024 * 1024);
    const last = await server.exchange(
      'tail-42',
      `{"jsonrpc":"2.0","method":"tools/call","params":${params},"id":"tail-42"}`,
    );
    assert.equal((last['error'] as { code: number }).code, -32600);
    // An id only inside the params is not the request's: the answer stays id-less.
    const nested = await server.reply(
      `{"jsonrpc":"2.0","method":"x","params":{"p":"${pad}","id":43}}`,
    );
    assert.equal(nested['id'], null);
    assert.equal((await server.request('ping'))['result'] !== undefined, true);
    await server.end();
  });

  it('cancels in-flight calls when stdin closes, and exits 0', async () => {
    const server = new RawServer();
    let answered = false;
    void server
      .request(1, 'tools/call', { name: 'Sleepy', arguments: { ms: 30000 }, _meta: MODERN_META })
      .then(
        () => {
          answered = true;
        },
        // Unanswered when the server exits: what this test expects.
        () => {},
      );
    // The call is running once the server has logged its start on stderr.
    let stderr = '';
    await new Promise<void>((done) => {
      server.child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('call started')) done();
      });
    });
    const started = Date.now();
    assert.equal(await server.end(), 0);
    assert.ok(Date.now() - started < 5000, 'shutdown waited for the 30 s call');
    assert.equal(answered, false);
  });

  it('refuses to start on a folder with lint errors, no workflows, or HTTP-only flags', async () => {
    const bad = tempDir();
    writeFileSync(join(bad, 'bad.mh'), 'pipeline P { step S { log(nope) } }\n');
    const lintError = await runCli(['serve', 'mcp', bad]);
    assert.equal(lintError.code, 1);
    assert.match(lintError.stderr, /bad\.mh:1:27: error: unknown name 'nope'/);
    const empty = await runCli(['serve', 'mcp', tempDir()]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no pipeline or workflow declared/);
    assert.equal((await runCli(['serve', 'mcp', FOLDER, '--port', '1'])).code, 2);
    assert.equal((await runCli(['serve', 'mcp', FOLDER, '--json'])).code, 2);
  });
});

describe('mhl serve mcp (stdio) with the SDK v2 client', () => {
  for (const mode of [{ pin: '2026-07-28' }, 'auto'] as const) {
    it(`lists, calls and reads with versionNegotiation ${JSON.stringify(mode)}`, async () => {
      const v2 = await import('@modelcontextprotocol/client');
      const { StdioClientTransport: V2Stdio } = await import('@modelcontextprotocol/client/stdio');
      const transport = new V2Stdio({
        command: process.execPath,
        args: [CLI, 'serve', 'mcp', FOLDER],
        stderr: 'ignore',
      });
      const client = new v2.Client(
        { name: 'e2e-v2', version: '1.0.0' },
        { versionNegotiation: { mode } },
      );
      await client.connect(transport);
      try {
        if (typeof mode === 'object')
          assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          STDIO_TOOLS,
        );
        const result = await client.callTool({ name: 'Greet', arguments: { name: 'v2' } });
        assert.deepEqual(result.structuredContent, { message: 'hello v2' });
        const manifest = await client.readResource({ uri: 'mhl://workflow/Greet' });
        assert.equal(JSON.parse((manifest.contents[0] as { text: string }).text).name, 'Greet');
      } finally {
        await client.close();
      }
    });
  }
});

describe('mhl serve mcp (stdio): progress and cancellation', () => {
  const stepProgress = (token: string | number) =>
    ['One', 'Two', 'Three'].map((step, i) => ({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: token, progress: i + 1, total: 3, message: `step ${step}` },
    }));

  it('sends notifications/progress for each step before the answer, in both eras', async () => {
    const server = new RawServer(STEPS);
    const modern = await server.request(1, 'tools/call', {
      name: 'Steps',
      arguments: { label: 'm' },
      _meta: { ...MODERN_META, progressToken: 'm-1' },
    });
    assert.deepEqual((modern['result'] as { structuredContent: unknown }).structuredContent, {
      trail: ['m one', 'm two', 'm three'],
    });
    assert.deepEqual(server.lines, [...stepProgress('m-1'), modern]);
    await server.request(2, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    server.lines.length = 0;
    const legacy = await server.request(3, 'tools/call', {
      name: 'Steps',
      arguments: {},
      _meta: { progressToken: 42 },
    });
    assert.deepEqual(server.lines, [...stepProgress(42), legacy]);
    server.lines.length = 0;
    const quiet = await server.request(4, 'tools/call', { name: 'Steps', arguments: {} });
    assert.deepEqual(server.lines, [quiet], 'no progressToken, no progress');
    assert.equal(await server.end(), 0);
  });

  it('aborts a call on notifications/cancelled and kills the command it started', async () => {
    const server = new RawServer(STEPS);
    const pidfile = join(tempDir(), 'pid');
    void server.request(1, 'tools/call', {
      name: 'Hold',
      arguments: { pidfile },
      _meta: MODERN_META,
    });
    const pid = await until(() => readPid(pidfile), { what: 'the held pid', timeoutMs: 10_000 });
    server.send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 1, reason: 'test' },
      }),
    );
    await until(() => !isAlive(pid), { what: 'the held command to be killed' });
    const after = await server.request(2, 'tools/list', { _meta: MODERN_META });
    assert.ok('result' in after);
    assert.equal(
      server.lines.some((l) => l['id'] === 1),
      false,
      'a cancelled request gets no response',
    );
    assert.equal(await server.end(), 0);
  });

  it('reaches the SDK v1 client onprogress callback for every step', async () => {
    // The SDK v1 client handles notifications a microtask late and drops a request's progress
    // handler when its answer arrives, so progress read in the same chunk as the answer is lost.
    // The last step therefore waits until the client has seen every progress notification.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', STEPS],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    const gate = join(tempDir('mhl-gate-'), 'go');
    try {
      const seen: { progress: number }[] = [];
      const result = await client.callTool({ name: 'Gated', arguments: { gate } }, undefined, {
        onprogress: (p) => {
          seen.push(p);
          if (p.progress === 3) writeFileSync(gate, '');
        },
      });
      assert.deepEqual(result.structuredContent, { trail: ['one', 'two', 'last'] });
      assert.deepEqual(seen, [
        { progress: 1, total: 3, message: 'step One' },
        { progress: 2, total: 3, message: 'step Two' },
        { progress: 3, total: 3, message: 'step Last' },
      ]);
    } finally {
      await client.close();
    }
  });
});

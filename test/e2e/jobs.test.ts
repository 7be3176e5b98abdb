import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { HttpServer, MODERN_META, MODERN_VERSION, send } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { stdioStarter } from '../helpers/stdio-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/jobs');
const HOLD_SCRIPT = join(FOLDER, 'hold.mjs');
const UNKNOWN_JOB = `job-${'0'.repeat(32)}`;

type LogLine = Record<string, unknown>;

/** The server's JSON log lines as they arrive, and a way to wait for the n-th that matches. */
class LogWatch {
  readonly lines: LogLine[] = [];
  #partial = '';
  readonly #waiters: { match: (l: LogLine) => boolean; n: number; done: (l: LogLine) => void }[] =
    [];

  attach(stream: Readable): void {
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      this.#partial += chunk;
      for (let nl = this.#partial.indexOf('\n'); nl >= 0; nl = this.#partial.indexOf('\n')) {
        const text = this.#partial.slice(0, nl);
        this.#partial = this.#partial.slice(nl + 1);
        if (text.startsWith('{')) this.#add(JSON.parse(text) as LogLine);
      }
    });
  }

  /** Resolves with the `n`-th line matching `match`, counting lines already seen. */
  waitFor(match: (l: LogLine) => boolean, n = 1): Promise<LogLine> {
    const seen = this.lines.filter(match);
    const hit = seen[n - 1];
    if (hit) return Promise.resolve(hit);
    return new Promise((done) => this.#waiters.push({ match, n: n - seen.length, done }));
  }

  #add(line: LogLine): void {
    this.lines.push(line);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.match(line)) continue;
      waiter.n -= 1;
      if (waiter.n === 0) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.done(line);
      }
    }
  }
}

const callStarted = (workflow: string) => (l: LogLine) =>
  l['msg'] === 'call started' && l['workflow'] === workflow;
const jobEvent = (event: string, id: string) => (l: LogLine) =>
  l['msg'] === `job ${event}` && l['job_id'] === id;

/** A `mhl serve mcp --http --port 0` child over the jobs fixture, its log lines parsed. */
class JobsServer extends HttpServer {
  readonly log = new LogWatch();

  constructor(args: readonly string[] = []) {
    super(FOLDER, args);
    this.log.attach(this.child.stderr);
  }
}

const servers: JobsServer[] = [];
const gates: string[] = [];
const gateDir = tempDir('mhl-jobs-');
const cwd = tempDir('mhl-jobs-cwd-');

function start(args: readonly string[] = []): JobsServer {
  const server = new JobsServer(args);
  servers.push(server);
  return server;
}

/** A fresh gate path; `open` creates it, which lets every holder waiting on it finish. */
function gate(): string {
  const path = join(gateDir, `gate-${gates.length}`);
  gates.push(path);
  return path;
}
function open(path: string): void {
  writeFileSync(path, '');
}

after(async () => {
  for (const path of gates) if (!existsSync(path)) open(path);
  await Promise.all(servers.map((s) => s.stop()));
});

const holdArgs = (path: string, mode = 'plain', context: Record<string, unknown> = {}) => ({
  node: process.execPath,
  script: HOLD_SCRIPT,
  gate: path,
  mode,
  context: { cwd, ...context },
});
const QUICK = { word: 'hi', context: { cwd } };

interface ToolReply {
  readonly content: unknown[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
}
interface RpcReply {
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

let nextId = 1;
/** One modern (stateless) JSON-RPC request over raw HTTP. */
async function rpc(
  port: number,
  method: string,
  params: Record<string, unknown>,
): Promise<RpcReply> {
  const reply = await send(port, {
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_VERSION,
    },
    body: { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: MODERN_META } },
  });
  return JSON.parse(reply.text) as RpcReply;
}

async function call(port: number, name: string, args: unknown): Promise<ToolReply> {
  const reply = await rpc(port, 'tools/call', { name, arguments: args });
  assert.ok(reply.result, `${name}: ${JSON.stringify(reply.error)}`);
  return reply.result as unknown as ToolReply;
}

const diagnostic = (r: ToolReply) => r._meta?.['mhl/diagnostic'] as Record<string, unknown>;
const execution = (r: ToolReply) => r._meta?.['mhl/execution'] as Record<string, unknown>;

function jobOf(reply: ToolReply): Record<string, unknown> {
  assert.notEqual(reply.isError, true, JSON.stringify(reply));
  assert.ok(reply.structuredContent);
  assert.deepEqual(
    JSON.parse((reply.content[0] as { text: string }).text),
    reply.structuredContent,
  );
  return reply.structuredContent;
}

async function startJob(port: number, tool: string, args: unknown): Promise<string> {
  const job = jobOf(await call(port, 'job.start', { tool, arguments: args }));
  assert.deepEqual(job, { job_id: job['job_id'], tool, status: 'running', draining: false });
  assert.match(String(job['job_id']), /^job-[0-9a-f]{32}$/);
  return String(job['job_id']);
}

describe('job tools and admission over HTTP', { timeout: 120_000 }, () => {
  it('publishes annotations, mhl/risk and taskSupport forbidden on every tool', async () => {
    const server = start();
    const port = await server.ready;
    const reply = await rpc(port, 'tools/list', {});
    const tools = (reply.result?.['tools'] ?? []) as Record<string, unknown>[];
    const names = tools.map((t) => t['name']);
    for (const name of ['job.start', 'job.status', 'job.result', 'job.cancel', 'Hold', 'Quick']) {
      assert.ok(names.includes(name), `${name} is listed`);
    }
    const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
    for (const tool of tools) {
      const what = String(tool['name']);
      assert.deepEqual(tool['execution'], { taskSupport: 'forbidden' }, what);
      const annotations = tool['annotations'] as Record<string, unknown>;
      for (const hint of HINTS) assert.equal(typeof annotations?.[hint], 'boolean', what);
      const risk = (tool['_meta'] as Record<string, unknown> | undefined)?.['mhl/risk'];
      assert.deepEqual(
        Object.keys(risk ?? {}).sort(),
        ['effects', 'impact', 'level', 'reversibility'],
        what,
      );
    }
    const byName = (name: string) => tools.find((t) => t['name'] === name) ?? {};
    const riskOf = (name: string) => (byName(name)['_meta'] as Record<string, unknown>)['mhl/risk'];
    assert.deepEqual(byName('job.start')['annotations'], {
      title: 'Start a job',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    assert.equal((riskOf('job.start') as { level: string }).level, 'critical');
    for (const name of ['job.status', 'job.result']) {
      const hints = byName(name)['annotations'] as Record<string, unknown>;
      assert.deepEqual([hints['readOnlyHint'], hints['idempotentHint']], [true, true], name);
    }
    assert.deepEqual(riskOf('Hold'), {
      level: 'high',
      impact: 'destructive',
      effects: ['process'],
      reversibility: 'irreversible',
    });
    assert.deepEqual(riskOf('Quick'), {
      level: 'low',
      impact: 'read_only',
      effects: [],
      reversibility: 'not_applicable',
    });
    assert.equal(await server.stop(), 0);
  });

  it('with --max-active 2, fails a third concurrent call at once with EXECUTION_CAPACITY_FULL', async () => {
    const server = start(['--max-active', '2']);
    const port = await server.ready;
    const [a, b] = [gate(), gate()];
    const first = call(port, 'Hold', holdArgs(a));
    const second = call(port, 'Hold', holdArgs(b));
    await server.log.waitFor(callStarted('Hold'), 2);
    // Both slots are held by calls that cannot end before the gates open: a queued third
    // call would hang here, so an answer at all proves there is no queue.
    for (const refused of [
      await call(port, 'Quick', QUICK),
      await call(port, 'job.start', { tool: 'Quick', arguments: QUICK }),
    ]) {
      assert.equal(refused.isError, true);
      assert.deepEqual(
        [diagnostic(refused)['code'], diagnostic(refused)['retryable']],
        ['EXECUTION_CAPACITY_FULL', true],
      );
    }
    open(a);
    open(b);
    for (const [done, path] of [
      [await first, a],
      [await second, b],
    ] as const) {
      assert.deepEqual(done.structuredContent, { held: path });
      assert.equal(execution(done)['queue_wait_ms'], 0);
    }
    const ok = await call(port, 'Quick', QUICK);
    assert.deepEqual(ok.structuredContent, { echoed: 'hi!' });
    assert.equal(execution(ok)['queue_wait_ms'], 0);
    assert.equal(typeof execution(ok)['duration_ms'], 'number');
    assert.equal(await server.stop(), 0);
  });

  it('shows an uncooperative cancelled job cancelled + draining, holding one slot until it exits', async () => {
    const server = start(['--max-active', '2']);
    const port = await server.ready;
    const [a, b] = [gate(), gate()];
    const id = await startJob(port, 'Hold', holdArgs(a, 'escape'));
    // The escaped holder keeps the step's pipes open, so cmd.exec cannot settle on cancel.
    await until(() => existsSync(`${a}.ready`), { what: 'the escaped holder' });
    const cancelled = jobOf(await call(port, 'job.cancel', { job_id: id }));
    assert.deepEqual([cancelled['status'], cancelled['draining']], ['cancelled', true]);
    const status = jobOf(await call(port, 'job.status', { job_id: id }));
    assert.deepEqual([status['status'], status['draining']], ['cancelled', true]);
    const early = jobOf(await call(port, 'job.result', { job_id: id }));
    assert.deepEqual([early['ready'], early['draining']], [true, true]);
    assert.equal(diagnostic(early['result'] as ToolReply)['code'], 'CANCELLED');
    // One slot is still free...
    const direct = call(port, 'Hold', holdArgs(b));
    await Promise.race([
      server.log.waitFor(callStarted('Hold'), 2),
      direct.then((r) => assert.fail(`the free slot refused a call: ${JSON.stringify(r)}`)),
    ]);
    // ...and only one: the draining job holds exactly its own.
    const refused = await call(port, 'Quick', QUICK);
    assert.equal(diagnostic(refused)['code'], 'EXECUTION_CAPACITY_FULL');
    open(a);
    await server.log.waitFor(jobEvent('exited', id));
    const drained = jobOf(await call(port, 'job.status', { job_id: id }));
    assert.deepEqual([drained['status'], drained['draining']], ['cancelled', false]);
    const ok = await call(port, 'Quick', QUICK);
    assert.deepEqual(ok.structuredContent, { echoed: 'hi!' }, 'the freed slot admits a call');
    open(b);
    assert.deepEqual((await direct).structuredContent, { held: b });
    assert.equal(await server.stop(), 0);
  });

  it('answers job.result without waiting, repeatably, and keeps failures typed', async () => {
    const server = start();
    const port = await server.ready;
    const g = gate();
    const id = await startJob(port, 'Hold', holdArgs(g));
    const early = jobOf(await call(port, 'job.result', { job_id: id }));
    assert.deepEqual(
      [early['status'], early['ready'], 'result' in early],
      ['running', false, false],
    );
    open(g);
    await server.log.waitFor(jobEvent('exited', id));
    const first = await call(port, 'job.result', { job_id: id });
    const again = await call(port, 'job.result', { job_id: id });
    assert.deepEqual(again, first, 'reading a result does not consume it');
    const done = jobOf(first);
    assert.deepEqual([done['status'], done['ready'], done['draining']], ['succeeded', true, false]);
    const result = done['result'] as ToolReply;
    assert.deepEqual(result.structuredContent, { held: g });
    assert.equal(execution(result)['queue_wait_ms'], 0);

    const broken = await startJob(port, 'Broken', { context: { cwd } });
    await server.log.waitFor(jobEvent('exited', broken));
    const failed = jobOf(await call(port, 'job.result', { job_id: broken }));
    assert.equal(failed['status'], 'failed');
    assert.equal(diagnostic(failed['result'] as ToolReply)['code'], 'WORKFLOW_FAILED');

    for (const tool of ['job.status', 'job.result', 'job.cancel']) {
      const unknown = await call(port, tool, { job_id: UNKNOWN_JOB });
      assert.equal(unknown.isError, true);
      assert.deepEqual(
        [diagnostic(unknown)['code'], diagnostic(unknown)['retryable']],
        ['JOB_NOT_FOUND', false],
      );
    }
    assert.equal(await server.stop(), 0);
  });

  it('times a job out at its limit at once and names the execution phase', async () => {
    const server = start();
    const port = await server.ready;
    const id = await startJob(port, 'Hold', holdArgs(gate(), 'plain', { timeout_ms: 300 }));
    const ended = await server.log.waitFor(jobEvent('ended', id));
    assert.equal(ended['status'], 'timed_out');
    await server.log.waitFor(jobEvent('exited', id));
    const view = jobOf(await call(port, 'job.result', { job_id: id }));
    assert.deepEqual(
      [view['status'], view['ready'], view['draining'], view['timeout_ms']],
      ['timed_out', true, false, 300],
    );
    const timeout = diagnostic(view['result'] as ToolReply);
    assert.deepEqual([timeout['code'], timeout['phase']], ['TIMEOUT', 'execution']);
    const direct = await call(port, 'Hold', holdArgs(gate(), 'plain', { timeout_ms: 300 }));
    assert.equal(direct.isError, true);
    assert.deepEqual(
      [diagnostic(direct)['code'], diagnostic(direct)['phase']],
      ['TIMEOUT', 'execution'],
    );
    assert.equal(await server.stop(), 0);
  });

  it('hides a job from every other caller exactly as a job that does not exist', async () => {
    const server = start();
    const port = await server.ready;
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const [owner, other] = [
      new Client({ name: 'a', version: '1' }),
      new Client({ name: 'b', version: '1' }),
    ];
    await owner.connect(new StreamableHTTPClientTransport(url));
    await other.connect(new StreamableHTTPClientTransport(url));
    const g = gate();
    try {
      const started = await owner.callTool({
        name: 'job.start',
        arguments: { tool: 'Hold', arguments: holdArgs(g) },
      });
      const id = String((started.structuredContent as { job_id: string }).job_id);
      for (const tool of ['job.status', 'job.result', 'job.cancel']) {
        const theirs = await other.callTool({ name: tool, arguments: { job_id: id } });
        const none = await other.callTool({ name: tool, arguments: { job_id: UNKNOWN_JOB } });
        assert.equal(theirs.isError, true, tool);
        assert.equal(JSON.stringify(theirs), JSON.stringify(none), tool);
        const stateless = await call(port, tool, { job_id: id });
        assert.equal(diagnostic(stateless)['code'], 'JOB_NOT_FOUND', tool);
      }
      const mine = await owner.callTool({ name: 'job.status', arguments: { job_id: id } });
      assert.equal((mine.structuredContent as { status: string }).status, 'running');
    } finally {
      open(g);
      await owner.close();
      await other.close();
    }
    assert.equal(await server.stop(), 0);
  });

  it('answers malformed, oversized and non-workflow job arguments as INVALID_ARGUMENT results', async () => {
    const server = start();
    const port = await server.ready;
    const longKey = 'k'.repeat(10_000);
    const cases: [string, unknown, string][] = [
      ['job.start', { tool: 'Nope' }, 'tool'],
      ['job.start', { tool: 'job.status', arguments: { job_id: 'x' } }, 'tool'],
      ['job.start', {}, 'tool'],
      ['job.start', { tool: 7 }, 'tool'],
      ['job.start', { tool: 'Quick', arguments: 'word' }, 'arguments'],
      ['job.start', { tool: 'Quick', arguments: { word: 5, context: { cwd } } }, 'arguments.word'],
      [
        'job.start',
        { tool: 'Quick', arguments: { context: { cwd: 'rel' } } },
        'arguments.context.cwd',
      ],
      ['job.start', { tool: 'Quick', extra: 1 }, 'extra'],
      ['job.status', { job_id: 7 }, 'job_id'],
      ['job.status', {}, 'job_id'],
      ['job.result', { job_id: 'j'.repeat(100_000) }, 'job_id'],
      ['job.cancel', { job_id: 'x', [longKey]: 1 }, `${longKey.slice(0, 40)}…`],
    ];
    for (const [tool, args, field] of cases) {
      const what = `${tool} ${JSON.stringify(args).slice(0, 80)}`;
      const reply = await call(port, tool, args);
      assert.equal(reply.isError, true, what);
      assert.equal(diagnostic(reply)['code'], 'INVALID_ARGUMENT', what);
      assert.equal(diagnostic(reply)['field'], field, what);
      assert.equal(diagnostic(reply)['retryable'], false, what);
      assert.ok(JSON.stringify(reply).length < 1000, `the answer stays short: ${what}`);
    }
    // An unknown tool name in tools/call itself stays a protocol error.
    const unknown = await rpc(port, 'tools/call', { name: 'job.nope', arguments: {} });
    assert.equal(unknown.error?.code, -32602);
    assert.equal(await server.stop(), 0);
  });

  it('cancels running jobs at shutdown and exits 0 once their handlers have exited', async () => {
    const server = start();
    const port = await server.ready;
    const id = await startJob(port, 'Hold', holdArgs(gate()));
    await server.log.waitFor(callStarted('Hold'));
    assert.equal(await server.stop(), 0);
    const ended = server.log.lines.find(jobEvent('ended', id));
    assert.deepEqual([ended?.['status'], ended?.['draining']], ['cancelled', true]);
    assert.ok(server.log.lines.some(jobEvent('exited', id)));
  });
});

describe('job tools over stdio', { timeout: 60_000 }, () => {
  it('starts, reads and cancels jobs through the SDK v1 client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', FOLDER],
      stderr: 'pipe',
      // Debug logging: the test waits on the per-call `call started` line.
      env: { ...process.env, MHL_LOG_LEVEL: 'debug' } as Record<string, string>,
    });
    const log = new LogWatch();
    if (transport.stderr) log.attach(transport.stderr as Readable);
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    const g = gate();
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of ['job.start', 'job.status', 'job.result', 'job.cancel']) {
        assert.ok(names.includes(name), name);
      }
      const quick = await client.callTool({
        name: 'job.start',
        arguments: { tool: 'Quick', arguments: { word: 'yo' } },
      });
      const id = String((quick.structuredContent as { job_id: string }).job_id);
      await log.waitFor(jobEvent('exited', id));
      const read = await client.callTool({ name: 'job.result', arguments: { job_id: id } });
      assert.deepEqual(
        read,
        await client.callTool({ name: 'job.result', arguments: { job_id: id } }),
      );
      const view = read.structuredContent as { status: string; result: ToolReply };
      assert.equal(view.status, 'succeeded');
      assert.deepEqual(view.result.structuredContent, { echoed: 'yo!' });

      const held = await client.callTool({
        name: 'job.start',
        arguments: { tool: 'Hold', arguments: holdArgs(g) },
      });
      const holdId = String((held.structuredContent as { job_id: string }).job_id);
      await log.waitFor(callStarted('Hold'));
      const cancelled = await client.callTool({
        name: 'job.cancel',
        arguments: { job_id: holdId },
      });
      assert.equal((cancelled.structuredContent as { status: string }).status, 'cancelled');
      await log.waitFor(jobEvent('exited', holdId));
      const after = await client.callTool({ name: 'job.status', arguments: { job_id: holdId } });
      assert.deepEqual(
        [
          (after.structuredContent as { status: string }).status,
          (after.structuredContent as { draining: boolean }).draining,
        ],
        ['cancelled', false],
      );
      const unknown = await client.callTool({
        name: 'job.status',
        arguments: { job_id: UNKNOWN_JOB },
      });
      assert.equal(diagnostic(unknown as ToolReply)['code'], 'JOB_NOT_FOUND');
    } finally {
      await client.close();
    }
  });
});

describe('shutdown budget', { timeout: 60_000 }, () => {
  const startStdio = stdioStarter();

  it('exits 1 with MCP_SHUTDOWN_TIMEOUT once the budget runs out, though a job ignores cancellation', async () => {
    const server = startStdio(FOLDER);
    await server.initialize();
    const g = gate();
    const started = await server.request('tools/call', {
      name: 'job.start',
      arguments: { tool: 'Hold', arguments: holdArgs(g, 'escape') },
    });
    assert.equal((started['result'] as ToolReply).isError, undefined, JSON.stringify(started));
    // The escaped holder keeps the step's pipes open: cancelling the job cannot settle it.
    await until(() => existsSync(`${g}.ready`), { what: 'the escaped holder' });
    const began = Date.now();
    try {
      const code = await server.end();
      assert.equal(code, 1);
      assert.match(server.stderr, /"code":"MCP_SHUTDOWN_TIMEOUT"/);
      // The budget is 5 s; the holder would keep the process for up to 120 s.
      assert.ok(Date.now() - began < 30_000, 'the process exits when the budget ends');
    } finally {
      open(g);
    }
  });
});

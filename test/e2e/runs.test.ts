/**
 * Durable async runs over HTTP, end to end: `run/*` methods and `mhl_run_*` tools against the
 * built server, driven by the official SDK client and by raw JSON-RPC; ownership, restart with
 * `--state-dir`, pause/resume, cancel, shutdown with and without `--drain-timeout`, limits.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import {
  call,
  inLegacySession,
  modern,
  openLegacySession,
  rpc,
  send,
  serverStarter,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';
import { settle } from '../helpers/runs.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/runs');
const CWD = { context: { cwd: REPO_ROOT } };

const start = serverStarter(FOLDER, 'SIGKILL');

/** Starts a Blocker run and waits until its Hold step is running; resolves the held pid too. */
async function startHeld(port: number, dir: string): Promise<{ runId: string; pid: number }> {
  const view = await call(port, 'run/start', { name: 'Blocker', arguments: { dir, ...CWD } });
  const pid = await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step to start' });
  return { runId: view['runId'] as string, pid };
}

describe('async runs over HTTP', () => {
  it('an SDK client starts a 30-step run, polls status and logs to completion, and reads its result', async () => {
    const server = start();
    const port = await server.ready;
    const client = new Client({ name: 'runs-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of [
        'mhl_run_start',
        'mhl_run_status',
        'mhl_run_resume',
        'mhl_run_cancel',
        'mhl_run_list',
        'mhl_run_logs',
      ])
        assert.ok(names.includes(name), `${name} in ${names}`);
      const startTool = tools.find((t) => t.name === 'mhl_run_start');
      assert.deepEqual(
        (startTool?.inputSchema.properties?.['workflow'] as { enum: string[] } | undefined)?.enum,
        ['AgentDeclared', 'Approval', 'Blocker', 'Count', 'SecretPause', 'Secretive'],
      );
      const started = await client.callTool({
        name: 'mhl_run_start',
        arguments: { workflow: 'Count', arguments: { label: 'thirty', ...CWD } },
      });
      const view = started.structuredContent as Record<string, unknown>;
      const runId = view['runId'] as string;
      assert.match(runId, /^[0-9a-f]{32}$/);
      assert.ok(['working', 'queued', 'completed'].includes(view['state'] as string));
      const links = (started.content as { type: string; uri?: string }[]).filter(
        (c) => c.type === 'resource_link',
      );
      assert.deepEqual(
        links.map((l) => l.uri),
        [`mhl://run/${runId}/logs`, `mhl://run/${runId}/result`],
      );

      let since = 0;
      let logged = '';
      let status: Record<string, unknown>;
      for (;;) {
        status = (await client.callTool({ name: 'mhl_run_status', arguments: { runId } }))
          .structuredContent as Record<string, unknown>;
        const logs = (await client.callTool({ name: 'mhl_run_logs', arguments: { runId, since } }))
          .structuredContent as { text: string; nextSince: number; dropped?: boolean };
        assert.equal(logs.dropped, undefined);
        logged += logs.text;
        since = logs.nextSince;
        if (status['state'] === 'completed') {
          const rest = (
            await client.callTool({ name: 'mhl_run_logs', arguments: { runId, since } })
          ).structuredContent as { text: string };
          logged += rest.text;
          break;
        }
        assert.ok(
          ['working', 'queued'].includes(status['state'] as string),
          JSON.stringify(status),
        );
      }
      assert.deepEqual(status['vars'], { label: 'thirty', total: 465 });
      assert.equal(status['stepIndex'], 30);
      assert.equal(status['stepTotal'], 30);
      assert.equal((status['reached'] as string[]).length, 30);
      assert.equal(status['resumable'], undefined);
      const lines = logged.trimEnd().split('\n');
      assert.equal(lines.length, 30);
      assert.equal(lines[29], 'step 30 of 30, total 465');

      const result = await client.readResource({ uri: `mhl://run/${runId}/result` });
      assert.deepEqual(JSON.parse((result.contents[0] as { text: string }).text), status);
      const logResource = await client.readResource({ uri: `mhl://run/${runId}/logs` });
      assert.equal((logResource.contents[0] as { text: string }).text, logged);
      const listed = (await client.callTool({ name: 'mhl_run_list', arguments: {} }))
        .structuredContent as { runs: { runId: string }[] };
      assert.deepEqual(
        listed.runs.map((r) => r.runId),
        [runId],
      );
      // A run that cannot continue is the tool's own failure, not a protocol error.
      const again = await client.callTool({ name: 'mhl_run_resume', arguments: { runId } });
      assert.equal(again.isError, true);
      const diagnostic = again._meta?.['mhl/diagnostic'] as { code: string } | undefined;
      assert.equal(diagnostic?.code, 'RUN_NOT_RESUMABLE');
    } finally {
      await client.close();
    }
  });

  it('answers a foreign runId exactly like a random one, for sessions and for principals', async () => {
    const token = { authorization: 'Bearer t0ken' };
    const server = start(['--token', 't0ken', '--principal-header', 'X-Who']);
    const port = await server.ready;
    const ann = { ...token, 'x-who': 'ann' };
    const bob = { ...token, 'x-who': 'bob' };
    const runId = (await call(port, 'run/start', { name: 'Approval', arguments: CWD }, ann))[
      'runId'
    ] as string;
    assert.equal((await settle(port, runId, ann))['state'], 'paused');
    const random = '0123456789abcdef0123456789abcdef';
    const probes: [string, (id: string) => Record<string, unknown>][] = [
      ['run/status', (id) => ({ runId: id })],
      ['run/resume', (id) => ({ runId: id, arguments: { approved: true } })],
      ['run/cancel', (id) => ({ runId: id })],
      ['run/logs', (id) => ({ runId: id })],
      ['resources/read', (id) => ({ uri: `mhl://run/${id}/logs` })],
      ['resources/read', (id) => ({ uri: `mhl://run/${id}/result` })],
    ];
    for (const [method, params] of probes) {
      const foreign = await modern(port, method, params(runId), bob);
      const unknown = await modern(port, method, params(random), bob);
      assert.equal(foreign.json()['error'] !== undefined, true, `${method}: ${foreign.text}`);
      assert.equal(
        foreign.text.split(runId).join(random),
        unknown.text,
        `${method} must not tell a foreign run from a random id`,
      );
    }
    assert.deepEqual((await call(port, 'run/list', {}, bob))['runs'], []);
    assert.equal(((await call(port, 'run/list', {}, ann))['runs'] as unknown[]).length, 1);

    // Legacy sessions without a principal: the run belongs to the session that started it.
    const plain = start();
    const plainPort = await plain.ready;
    const mine = await openLegacySession(plainPort);
    const theirs = await openLegacySession(plainPort);
    const started = (
      await inLegacySession(plainPort, mine, 'run/start', { name: 'Approval', arguments: CWD })
    ).json();
    const id = (started['result'] as { runId: string }).runId;
    for (const [method, params] of probes) {
      const foreign = await inLegacySession(plainPort, theirs, method, params(id));
      const unknown = await inLegacySession(plainPort, theirs, method, params(random));
      assert.equal(foreign.text.split(id).join(random), unknown.text, method);
    }
    const own = (await inLegacySession(plainPort, mine, 'run/status', { runId: id })).json();
    assert.equal((own['result'] as { runId: string }).runId, id);
    const list = (await inLegacySession(plainPort, theirs, 'run/list', {})).json();
    assert.deepEqual((list['result'] as { runs: unknown[] }).runs, []);
  });

  it('pauses with a reason and resumes with new arguments merged over the original ones', async () => {
    const server = start();
    const port = await server.ready;
    const runId = (
      await call(port, 'run/start', { name: 'Approval', arguments: { who: 'ann', ...CWD } })
    )['runId'] as string;
    const paused = await settle(port, runId);
    assert.equal(paused['state'], 'paused');
    assert.equal(paused['reason'], 'waiting for approval');
    assert.equal(paused['resumable'], true);
    assert.deepEqual(paused['reached'], ['Draft', 'Review']);
    const resumed = await call(port, 'run/resume', { runId, arguments: { approved: true } });
    assert.ok(['working', 'queued', 'completed'].includes(resumed['state'] as string));
    const done = await settle(port, runId);
    assert.equal(done['state'], 'completed', JSON.stringify(done));
    assert.deepEqual((done['vars'] as { trail: string[] }).trail, [
      'draft',
      'approved by ann',
      'shipped',
    ]);
    assert.deepEqual(done['reached'], ['Draft', 'Review', 'Ship']);
    // The slot is released just after the run is published as completed: wait for it.
    const metrics = await until(
      async () => {
        const text = (await send(port, { method: 'GET', path: '/metrics' })).text;
        return /^mhl_execution_slots_active 0$/m.test(text) && text;
      },
      { what: 'the execution slot to be released' },
    );
    assert.match(metrics, /^mhl_runs_total\{outcome="paused"\} 1$/m);
    assert.match(metrics, /^mhl_runs_total\{outcome="completed"\} 1$/m);
    assert.match(metrics, /^mhl_runs_active 0$/m);
    assert.match(metrics, /^mhl_execution_slots_active 0$/m);
    const again = await modern(port, 'run/resume', { runId });
    assert.equal((again.json()['error'] as { code: number }).code, -32602);
    assert.match(again.text, /already completed/);
  });

  it('cancels a run mid-step, killing the step process, and keeps it resumable', async () => {
    const server = start();
    const port = await server.ready;
    const dir = tempDir('mhl-runs-');
    const { runId, pid } = await startHeld(port, dir);
    const canceled = await call(port, 'run/cancel', { runId });
    assert.equal(canceled['state'], 'canceled');
    await until(() => !isAlive(pid), { what: 'the held process to die' });
    const after = await settle(port, runId);
    assert.equal(after['state'], 'canceled');
    assert.equal(after['resumable'], true);
    writeFileSync(join(dir, 'go'), '');
    await call(port, 'run/resume', { runId });
    const done = await settle(port, runId);
    assert.equal(done['state'], 'completed', JSON.stringify(done));
    assert.equal(readFileSync(join(dir, 'marks'), 'utf8'), 'first\nlast\n');
  });

  it('survives SIGKILL with --state-dir: a new process resumes without repeating a completed step', async () => {
    const state = tempDir('mhl-state-');
    const dir = tempDir('mhl-runs-');
    const first = start(['--state-dir', state]);
    const port = await first.ready;
    const { runId, pid } = await startHeld(port, dir);
    await first.stop('SIGKILL');
    process.kill(pid, 'SIGKILL');

    const second = start(['--state-dir', state]);
    const port2 = await second.ready;
    const view = await call(port2, 'run/status', { runId });
    assert.equal(view['state'], 'failed');
    assert.equal(view['resumable'], true);
    assert.match(view['error'] as string, /server stopped/);
    writeFileSync(join(dir, 'go'), '');
    await call(port2, 'run/resume', { runId });
    const done = await settle(port2, runId);
    assert.equal(done['state'], 'completed', JSON.stringify(done));
    assert.deepEqual(done['reached'], ['First', 'Hold', 'Last']);
    assert.equal(readFileSync(join(dir, 'marks'), 'utf8'), 'first\nlast\n');
  });

  it('a principal-owned run survives a restart for that principal only', async () => {
    const state = tempDir('mhl-state-');
    const flags = ['--state-dir', state, '--token', 'k', '--principal-header', 'X-Who'];
    const ann = { authorization: 'Bearer k', 'x-who': 'ann' };
    const bob = { authorization: 'Bearer k', 'x-who': 'bob' };
    const first = start(flags);
    const port = await first.ready;
    const runId = (await call(port, 'run/start', { name: 'Approval', arguments: CWD }, ann))[
      'runId'
    ] as string;
    assert.equal((await settle(port, runId, ann))['state'], 'paused');
    assert.equal(await first.stop(), 0);
    const second = start(flags);
    const port2 = await second.ready;
    const foreign = await modern(port2, 'run/status', { runId }, bob);
    assert.equal((foreign.json()['error'] as { code: number }).code, -32602, foreign.text);
    assert.match(foreign.text, /unknown runId/);
    const view = await call(port2, 'run/status', { runId }, ann);
    assert.equal(view['state'], 'paused');
    await call(port2, 'run/resume', { runId, arguments: { approved: true, who: 'ann' } }, ann);
    assert.equal((await settle(port2, runId, ann))['state'], 'completed');
  });

  it('refuses to resume a run whose workflow changed since it started', async () => {
    const state = tempDir('mhl-state-');
    const folder = tempDir('mhl-flows-');
    cpSync(FOLDER, folder, { recursive: true });
    const first = start(['--state-dir', state], {}, folder);
    const port = await first.ready;
    const runId = (await call(port, 'run/start', { name: 'Approval', arguments: CWD }))[
      'runId'
    ] as string;
    assert.equal((await settle(port, runId))['state'], 'paused');
    assert.equal(await first.stop(), 0);
    const gate = join(folder, 'gate.mh');
    writeFileSync(gate, readFileSync(gate, 'utf8').replace('"shipped"', '"shipped twice"'));
    const second = start(['--state-dir', state], {}, folder);
    const port2 = await second.ready;
    const refused = await modern(port2, 'run/resume', { runId, arguments: { approved: true } });
    assert.equal((refused.json()['error'] as { code: number }).code, -32602, refused.text);
    assert.match(refused.text, /Approval changed since run/);
    assert.equal((await call(port2, 'run/status', { runId }))['state'], 'paused');
  });

  it('shutdown cancels working runs, or with --drain-timeout lets them finish', async () => {
    const state = tempDir('mhl-state-');
    const dir = tempDir('mhl-runs-');
    const first = start(['--state-dir', state]);
    const port = await first.ready;
    const { runId, pid } = await startHeld(port, dir);
    assert.equal(await first.stop(), 0);
    assert.equal(isAlive(pid), false);
    const second = start(['--state-dir', state]);
    const port2 = await second.ready;
    const canceled = await call(port2, 'run/status', { runId });
    assert.equal(canceled['state'], 'canceled');
    assert.equal(canceled['resumable'], true);
    assert.equal(await second.stop(), 0);

    const dir2 = tempDir('mhl-runs-');
    const draining = start(['--state-dir', state, '--drain-timeout', '20s']);
    const port3 = await draining.ready;
    const { runId: id2 } = await startHeld(port3, dir2);
    draining.child.kill('SIGTERM');
    await draining.logged(/"msg":"shutting down"/);
    const refused = await modern(port3, 'run/start', { name: 'Count', arguments: CWD });
    assert.equal((refused.json()['error'] as { code: number }).code, -32000, refused.text);
    // Still pollable while it drains; not ready for new work.
    assert.equal((await call(port3, 'run/status', { runId: id2 }))['state'], 'working');
    assert.equal((await send(port3, { method: 'GET', path: '/readyz' })).status, 503);
    writeFileSync(join(dir2, 'go'), '');
    assert.equal(await draining.exited, 0);
    const third = start(['--state-dir', state]);
    const port4 = await third.ready;
    assert.equal((await call(port4, 'run/status', { runId: id2 }))['state'], 'completed');
  });

  it('refuses oversized arguments and bad requests, and gives 200 concurrent starts distinct ids', async () => {
    const server = start();
    const port = await server.ready;
    const filler = 'x'.repeat(256 * 1024 - JSON.stringify({ label: '', ...CWD }).length + 1);
    const big = await modern(port, 'run/start', {
      name: 'Count',
      arguments: { label: filler, ...CWD },
    });
    assert.equal((big.json()['error'] as { code: number }).code, -32602);
    assert.match(big.text, /256 KiB.*by reference/);
    const fits = await modern(port, 'run/start', {
      name: 'Count',
      arguments: { label: filler.slice(1), ...CWD },
    });
    assert.equal(fits.json()['error'], undefined, fits.text.slice(0, 200));

    // The run/* methods answer -32602 naming the field in error.data.
    for (const [params, field] of [
      [{ name: 'Nope', arguments: CWD }, 'name'],
      [{ name: 'Count', arguments: { nope: 1, ...CWD } }, 'arguments.nope'],
      [{ name: 'Count', arguments: { context: { cwd: 'rel' } } }, 'arguments.context.cwd'],
      [{ name: 7 }, 'name'],
      [{ name: 'Count', arguments: [] }, 'arguments'],
    ] as const) {
      const reply = await modern(port, 'run/start', params);
      const error = reply.json()['error'] as { code: number; data?: Record<string, unknown> };
      assert.equal(error.code, -32602, reply.text);
      assert.deepEqual([error.data?.['code'], error.data?.['field']], ['INVALID_ARGUMENT', field]);
    }
    // The mhl_run_* tools answer the same refusals as results a model can act on.
    const tool = async (name: string, args: Record<string, unknown>) => {
      const result = await call(port, 'tools/call', { name, arguments: args });
      assert.equal(result['isError'], true, JSON.stringify(result));
      return (result['_meta'] as Record<string, Record<string, unknown>>)['mhl/diagnostic'];
    };
    for (const [name, args, field] of [
      ['mhl_run_start', { workflow: 'Nope' }, 'workflow'],
      ['mhl_run_start', { workflow: 'Count', arguments: { nope: 1 } }, 'arguments.nope'],
      ['mhl_run_start', { workflow: 'Count', arguments: { label: filler, ...CWD } }, 'arguments'],
      ['mhl_run_status', {}, 'runId'],
      ['mhl_run_logs', { runId: 'x', since: -1 }, 'since'],
    ] as const) {
      const diagnostic = await tool(name, args);
      assert.deepEqual([diagnostic?.['code'], diagnostic?.['field']], ['INVALID_ARGUMENT', field]);
    }
    assert.equal((await tool('mhl_run_status', { runId: 'x' }))?.['code'], 'RUN_NOT_FOUND');
    for (const params of [
      {},
      { runId: 5 },
      { runId: '../../etc' },
      { runId: 'A'.repeat(10_000) },
    ]) {
      const reply = await modern(port, 'run/status', params);
      assert.equal((reply.json()['error'] as { code: number }).code, -32602, reply.text);
    }
    const logs = await modern(port, 'run/logs', { runId: '0'.repeat(32), since: -1 });
    assert.match(logs.text, /since/);

    const started = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(port, 'run/start', { name: 'Count', arguments: { label: `n${i}`, ...CWD } }),
      ),
    );
    const ids = new Set(started.map((v) => v['runId'] as string));
    assert.equal(ids.size, 200);
    for (const runId of ids) {
      const done = await settle(port, runId);
      assert.equal(done['state'], 'completed');
    }
  });

  it('masks secrets in run logs, results and resources', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const server = start([], { RUNS_TEST_TOKEN: secret });
    const port = await server.ready;
    const runId = (await call(port, 'run/start', { name: 'Secretive', arguments: CWD }))[
      'runId'
    ] as string;
    const done = await settle(port, runId);
    assert.equal(done['state'], 'completed');
    const logs = await call(port, 'run/logs', { runId });
    assert.equal(logs['text'], 'token is [REDACTED]\n');
    const result = await modern(port, 'resources/read', { uri: `mhl://run/${runId}/result` });
    assert.doesNotMatch(result.text, new RegExp(secret));
    assert.match(result.text, /token is \[REDACTED\]/);
    assert.doesNotMatch(server.stderr, new RegExp(secret));
  });

  it('reaches the run methods at POST /mcp/run/<verb> and lists run resource templates', async () => {
    const server = start();
    const port = await server.ready;
    const templates = await call(port, 'resources/templates/list');
    assert.deepEqual(
      (templates['resourceTemplates'] as { uriTemplate: string }[]).map((t) => t.uriTemplate),
      [
        'mhl://workflow/{name}',
        'mhl://workflow/{name}/source',
        'mhl://run/{runId}/logs',
        'mhl://run/{runId}/result',
      ],
    );
    const reply = await send(port, {
      path: '/mcp/run/list',
      headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'run/list' },
      body: rpc(1, 'run/list', {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      }),
    });
    assert.deepEqual((reply.json()['result'] as { runs: unknown[] }).runs, []);
  });

  it('marks a run resource private and uncached, a workflow manifest public', async () => {
    const server = start();
    const port = await server.ready;
    const started = await call(port, 'run/start', { name: 'Count', arguments: CWD });
    const runId = started['runId'] as string;
    await settle(port, runId);
    for (const kind of ['result', 'logs']) {
      const read = await call(port, 'resources/read', { uri: `mhl://run/${runId}/${kind}` });
      assert.deepEqual([read['cacheScope'], read['ttlMs']], ['private', 0], kind);
      assert.equal(read['private'], undefined, 'the provider flag stays inside');
    }
    const manifest = await call(port, 'resources/read', { uri: 'mhl://workflow/Count' });
    assert.equal(manifest['cacheScope'], 'public');
  });
});

/**
 * No answer a client gets names a server path: the fixture folder is served from a deep
 * temporary path with the working directory elsewhere in tmp, every kind of failure is
 * triggered over stdio and over HTTP (a failing step, a runtime error here and in an imported
 * file, a failing agent and command, a missing file, a bad input, an unknown tool or resource,
 * a failed job, a refused resume), and no reply may contain the served folder, the working
 * directory, the tmp or home folder or the repository. The files still get named: relative to
 * the served folder.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { modern, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { stdioStarter } from '../helpers/stdio-server.js';

const FIXTURE = resolve(REPO_ROOT, 'test/fixtures/paths');
const BASE = tempDir('mhl-paths-');
const ROOT = join(BASE, 'a', 'very', 'deep', 'served', 'folder');
const WORK = join(BASE, 'work');
mkdirSync(WORK, { recursive: true });
cpSync(FIXTURE, ROOT, { recursive: true });

const ENV = { FAKE_AGENT: resolve(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs') };
const ARGS = ['--cwd', WORK];
/** Every absolute folder of this machine a reply could leak. */
const FORBIDDEN = [BASE, `${tmpdir()}/`, REPO_ROOT, `${homedir()}/`];

const startHttp = serverStarter(ROOT);
const startStdio = stdioStarter();

/** Each failing workflow, the (relative) place its message must name, its code and file. */
const FAILURES: readonly (readonly [string, RegExp, string, string])[] = [
  ['StepFails', /step "S" failed: failures\.mh:8:14: refusing/, 'FAIL', 'failures.mh'],
  ['TypeFails', /failures\.mh:\d+:\d+: cannot read \.foo of null/, 'NULL', 'failures.mh'],
  ['ImportedFails', /lib\/lib\.mh:3:\d+: cannot read \.foo of null/, 'NULL', 'lib/lib.mh'],
  ['AgentFails', /agent "Broken" failed \(exit code 3\)/, 'AGENT', 'failures.mh'],
  ['CmdFails', /cmd\.exec: cannot start/, 'NATIVE', 'failures.mh'],
  ['ReadsMissing', /no such file or directory: no-such-file\.txt/, 'NATIVE', 'failures.mh'],
  ['NamesItsCwd', /failed in \., reading missing\.txt/, 'FAIL', 'failures.mh'],
];

/** Fails naming the folder if `reply` mentions any absolute folder of this machine. */
function assertNoServerPath(what: string, reply: unknown): void {
  const text = JSON.stringify(reply);
  for (const dir of FORBIDDEN) {
    assert.ok(!text.includes(dir), `${what} names ${dir}: ${text}`);
  }
}

type Rpc = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The replies to every failure a client can provoke through `request`. */
async function provokeEverything(request: Rpc): Promise<void> {
  for (const [name, names, errorCode, file] of FAILURES) {
    const reply = await request('tools/call', { name, arguments: {} });
    assertNoServerPath(name, reply);
    const result = reply['result'] as Record<string, unknown>;
    assert.equal(result['isError'], true, `${name}: ${JSON.stringify(reply)}`);
    const diagnostic = (result['_meta'] as Record<string, Record<string, unknown>>)[
      'mhl/diagnostic'
    ];
    assert.equal(diagnostic?.['code'], 'WORKFLOW_FAILED');
    assert.match(String(diagnostic?.['message']), names);
    assert.deepEqual([diagnostic?.['error_code'], diagnostic?.['file']], [errorCode, file], name);
    assert.ok(Number(diagnostic?.['line']) > 0 && Number(diagnostic?.['col']) > 0, name);
    assert.ok(String(diagnostic?.['hint']).length > 0, name);
  }
  const others: [string, Record<string, unknown>][] = [
    ['tools/call', { name: 'Typed', arguments: { n: 'x' } }],
    ['tools/call', { name: 'Typed', arguments: {} }],
    ['tools/call', { name: 'Nope', arguments: {} }],
    ['tools/call', { name: 'StepFails', arguments: { context: { cwd: 'relative' } } }],
    ['resources/read', { uri: 'mhl://workflow/Nope' }],
    ['resources/list', {}],
    ['tools/list', {}],
  ];
  for (const [method, params] of others) {
    assertNoServerPath(`${method} ${JSON.stringify(params)}`, await request(method, params));
  }
  const listed = (await request('resources/list', {}))['result'] as {
    resources: { uri: string }[];
  };
  assert.ok(listed.resources.length > 0);
  for (const { uri } of listed.resources) {
    assertNoServerPath(uri, await request('resources/read', { uri }));
  }
  const manifest = await request('resources/read', { uri: 'mhl://workflow/StepFails' });
  assert.match(JSON.stringify(manifest), /\\"file\\": ?\\"failures\.mh\\"/);
  await provokeJob(request);
}

/** A job whose workflow fails: its status and result name no server path either. */
async function provokeJob(request: Rpc): Promise<void> {
  const started = await request('tools/call', {
    name: 'job.start',
    arguments: { tool: 'ImportedFails', arguments: {} },
  });
  const job = (started['result'] as { structuredContent: { job_id: string } }).structuredContent;
  const result = await until(
    async () => {
      const r = await request('tools/call', {
        name: 'job.result',
        arguments: { job_id: job.job_id },
      });
      const content = (r['result'] as { structuredContent?: { ready?: boolean } })
        .structuredContent;
      return content?.ready === false ? undefined : r;
    },
    { what: 'the failing job to finish', timeoutMs: 20_000 },
  );
  assertNoServerPath('job.result', result);
  assert.match(JSON.stringify(result), /lib\/lib\.mh:3/);
}

describe('no server path reaches a client', { timeout: 120_000 }, () => {
  it('over stdio', async () => {
    const server = startStdio(ROOT, ARGS, { env: ENV, cwd: WORK });
    assertNoServerPath('initialize', await server.initialize());
    await provokeEverything((method, params) => server.request(method, params));
  });

  it('over HTTP, async runs included', async () => {
    const server = startHttp(ARGS, ENV);
    const port = await server.ready;
    const request: Rpc = async (method, params) => (await modern(port, method, params)).json();
    await provokeEverything(request);
    const started = await request('run/start', { name: 'ImportedFails', arguments: {} });
    assertNoServerPath('run/start', started);
    const runId = (started['result'] as { runId: string }).runId;
    const view = await until(
      async () => {
        const v = (await request('run/status', { runId }))['result'] as Record<string, unknown>;
        return v['state'] === 'working' || v['state'] === 'queued' ? undefined : v;
      },
      { what: 'the failing run to settle', timeoutMs: 20_000 },
    );
    assertNoServerPath('run/status', view);
    assert.equal(view['state'], 'failed');
    assert.match(JSON.stringify(view), /lib\/lib\.mh:3/);
    for (const method of ['run/resume', 'run/logs', 'run/cancel']) {
      assertNoServerPath(method, await request(method, { runId }));
    }
    assertNoServerPath('run/list', await request('run/list', {}));
    // A refused resume: the run already completed.
    const typed = await request('run/start', { name: 'Typed', arguments: { n: 1 } });
    const done = (typed['result'] as { runId: string }).runId;
    await until(
      async () =>
        ((await request('run/status', { runId: done }))['result'] as { state: string }).state ===
        'completed',
      { what: 'the Typed run to complete', timeoutMs: 20_000 },
    );
    const refused = await request('run/resume', { runId: done });
    assert.equal((refused['error'] as { code: number }).code, -32602, JSON.stringify(refused));
    assertNoServerPath('a refused run/resume', refused);
  });
});

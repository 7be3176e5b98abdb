/**
 * Several `mhl serve mcp --http` replicas on one PostgreSQL store (issue 12), as real processes
 * over real sockets: a run started on one is visible, cancellable and resumable on every other
 * and owned by its principal everywhere; exactly one of two racing resumes executes; a replica
 * killed mid-run leaves its run failed + resumable within TTL + 2 s, and a stopped one that
 * comes back has its next write refused; a store without cas is refused. Each test uses its
 * own table in this file's own schema. Under CI=true a missing database fails.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { runCli } from '../helpers/cli.js';
import {
  call,
  HttpServer,
  inLegacySession,
  modern,
  openLegacySession,
  resultOf,
  send,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { dropSchema, freshSchema, needPg, PG_URL, sql } from '../helpers/postgres.js';
import { settle } from '../helpers/runs.js';
import { FreezableProxy } from '../helpers/tcp-proxy.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/runs');
const schema = freshSchema('replicas');
const servers: HttpServer[] = [];
const scratch: string[] = [];
let tables = 0;

after(async () => {
  for (const server of servers) {
    server.child.kill('SIGCONT');
    server.child.kill('SIGKILL');
  }
  await Promise.all(servers.map((s) => s.exited));
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  await dropSchema(schema);
});

const TOKEN = 'replica-test-token';
const alice = { authorization: `Bearer ${TOKEN}`, 'x-who': 'alice' };
const bob = { authorization: `Bearer ${TOKEN}`, 'x-who': 'bob' };

/** `n` replicas on a fresh table, each ready to serve. */
async function replicas(
  n: number,
  env: Record<string, string> = {},
  principals = true,
): Promise<number[]> {
  tables += 1;
  const store = `${PG_URL}?table=${schema}.t${tables}`;
  const started = Array.from({ length: n }, (_, i) => {
    const server = new HttpServer(
      FIXTURES,
      ['--store', store, ...(principals ? ['--token', TOKEN, '--principal-header', 'X-Who'] : [])],
      { MHL_LOG_LEVEL: 'info', MHL_SERVE_REPLICA_ID: `r${tables}-${i}`, ...env },
    );
    servers.push(server);
    return server;
  });
  return Promise.all(started.map((s) => s.ready));
}

function server(port: number): HttpServer {
  const found = servers.find((s) => s.stderr.includes(`:${port}`));
  assert.ok(found, `server on ${port}`);
  return found;
}

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-replicas-'));
  scratch.push(dir);
  return dir;
}

function marks(dir: string): string[] {
  return existsSync(join(dir, 'marks'))
    ? readFileSync(join(dir, 'marks'), 'utf8').trim().split('\n')
    : [];
}

async function status(port: number, runId: string, who = alice) {
  return call(port, 'run/status', { runId }, who);
}

/** Waits until the Hold step of `runId` is under way on `port`. */
function holding(port: number, runId: string) {
  return until(
    async () => {
      const view = await status(port, runId);
      return view['step'] === 'Hold' && view['state'] === 'working' ? view : undefined;
    },
    { what: 'the Hold step to start', timeoutMs: 15_000 },
  );
}

/**
 * Starts a Blocker on `a`, stops `a` (SIGSTOP) while it holds, waits for `b` to read the run
 * failed once the lease lapses, resumes it on `b` and waits for `b`'s leg to hold in turn.
 */
async function stallAndResume(a: number, b: number): Promise<{ dir: string; runId: string }> {
  const dir = folder();
  const runId = (await call(a, 'run/start', { name: 'Blocker', arguments: { dir } }, alice))[
    'runId'
  ] as string;
  await holding(b, runId);
  server(a).child.kill('SIGSTOP');
  await until(async () => ((await status(b, runId))['state'] === 'failed' ? true : undefined), {
    what: 'the stopped replica’s lease to lapse',
    // Waits on the event, not a time bound: a 2 s lease on a loaded 2-core machine (three
    // replicas, PostgreSQL and the runner) has lapsed in the store long before this.
    timeoutMs: 30_000,
  });
  await call(b, 'run/resume', { runId }, alice);
  await server(b).logged(/"output":"holding/);
  return { dir, runId };
}

async function pg(t: TestContext): Promise<boolean> {
  return needPg(t);
}

describe('replicas on one PostgreSQL store', () => {
  it('shows, cancels and resumes a run from every replica, only for its principal', async (t) => {
    if (!(await pg(t))) return;
    const [a, b, c] = (await replicas(3)) as [number, number, number];
    const dir = folder();
    const started = await call(a, 'run/start', { name: 'Blocker', arguments: { dir } }, alice);
    const runId = started['runId'] as string;
    await holding(b, runId);
    assert.equal((await status(c, runId))['state'], 'working');
    for (const port of [a, b, c]) {
      const foreign = (await modern(port, 'run/status', { runId }, bob)).json();
      assert.equal((foreign['error'] as { code: number }).code, -32602, 'bob sees no such run');
    }
    const listed = (await call(c, 'run/list', {}, alice))['runs'] as { runId: string }[];
    assert.ok(
      listed.some((r) => r.runId === runId),
      'run/list on another replica has it',
    );
    assert.equal(((await call(c, 'run/list', {}, bob))['runs'] as unknown[]).length, 0);
    const asked = Date.now();
    await call(c, 'run/cancel', { runId }, alice);
    const canceled = await until(
      async () => ((await status(b, runId))['state'] === 'canceled' ? Date.now() : undefined),
      { what: 'the cancel to reach the executing replica', timeoutMs: 20_000 },
    );
    // Within a second (seed 000), the status poll's own back-off included.
    t.diagnostic(`cancel reached the executing replica in ${canceled - asked} ms`);
    assert.ok(canceled - asked < 1000, `cancel took ${canceled - asked} ms`);
    const resumed = await call(b, 'run/resume', { runId }, alice);
    assert.equal(resumed['state'], 'working');
    await holding(a, runId);
    writeFileSync(join(dir, 'go'), '');
    const done = await settle(a, runId, alice);
    assert.equal(done['state'], 'completed');
    assert.deepEqual(marks(dir), ['first', 'last'], 'no completed step ran twice');
    assert.match(server(b).stderr, /"msg":"run resumed"/);
  });

  it('resolves a legacy session on every replica, and its runs are that session’s alone', async (t) => {
    if (!(await pg(t))) return;
    const [a, b, c] = (await replicas(3, {}, false)) as [number, number, number];
    const mine = await openLegacySession(a);
    const other = await openLegacySession(c);
    const started = resultOf(
      await inLegacySession(b, mine, 'run/start', { name: 'Approval', arguments: {} }),
      'run/start on another replica',
    );
    const runId = started['runId'] as string;
    await until(
      async () => {
        const reply = await inLegacySession(c, mine, 'run/status', { runId });
        return resultOf(reply, 'run/status')['state'] === 'paused' ? true : undefined;
      },
      { what: 'the run to pause, seen from a third replica' },
    );
    for (const port of [a, b, c]) {
      const foreign = (await inLegacySession(port, other, 'run/status', { runId })).json();
      assert.equal((foreign['error'] as { code: number }).code, -32602, `on ${port}`);
    }
    const listed = resultOf(await inLegacySession(a, mine, 'run/list', {}), 'run/list');
    assert.deepEqual(
      (listed['runs'] as { runId: string }[]).map((r) => r.runId),
      [runId],
    );
    const unknown = await inLegacySession(b, '00000000-0000-4000-8000-000000000000', 'ping', {});
    assert.equal(unknown.status, 404);
    // Ended on a replica that never served it: gone for every replica that had not adopted it.
    const brief = await openLegacySession(a);
    const ended = await send(b, { method: 'DELETE', headers: { 'mcp-session-id': brief } });
    assert.equal(ended.status, 204);
    assert.equal((await inLegacySession(c, brief, 'ping', {})).status, 404);
  });

  it('lets exactly one of two callers on two replicas claim an ended session’s run', async (t) => {
    if (!(await pg(t))) return;
    const [a, b, c] = (await replicas(3, {}, false)) as [number, number, number];
    const table = `"${schema}".t${tables}`;
    const dir = folder();
    const ended = await openLegacySession(a);
    const started = resultOf(
      await inLegacySession(a, ended, 'run/start', { name: 'Blocker', arguments: { dir } }),
      'run/start',
    );
    const runId = started['runId'] as string;
    await server(a).logged(/"output":"holding/);
    const gone = await send(a, { method: 'DELETE', headers: { 'mcp-session-id': ended } });
    assert.equal(gone.status, 204);
    const stored = async (key: string) =>
      ((await sql(`SELECT value FROM ${table} WHERE key = $1`, [key])) as { value: string }[])[0]
        ?.value;
    await until(async () => (await stored(`state/${runId}/mhl-claim.json`)) !== undefined, {
      what: 'the ended session’s run to be released',
    });
    // The leg's last record write comes after the release: it must not make the run open to all.
    writeFileSync(join(dir, 'go'), '');
    await until(
      async () => {
        const record = await stored(`state/${runId}/mhl-run.json`);
        return record !== undefined && JSON.parse(record).state === 'completed';
      },
      { what: 'the run to complete' },
    );
    const x = await openLegacySession(b);
    const y = await openLegacySession(c);
    const replies = await Promise.all([
      inLegacySession(b, x, 'run/status', { runId }),
      inLegacySession(c, y, 'run/status', { runId }),
    ]);
    const won = replies.map((reply) => reply.json()['error'] === undefined);
    assert.equal(won.filter(Boolean).length, 1, `exactly one claim wins: ${won}`);
    const [winner, loser] = won[0]
      ? [
          [b, x],
          [c, y],
        ]
      : [
          [c, y],
          [b, x],
        ];
    const z = await openLegacySession(a);
    for (const [port, session] of [loser, [a, z]] as [number, string][]) {
      const reply = (await inLegacySession(port, session, 'run/status', { runId })).json();
      assert.equal((reply['error'] as { code: number }).code, -32602, `on ${port}`);
    }
    const again = resultOf(
      await inLegacySession(winner[0] as number, winner[1] as string, 'run/status', { runId }),
      'the winner again',
    );
    assert.equal(again['state'], 'completed');
  });

  it('cancels a paused run only when no resume holds it, and says so otherwise', async (t) => {
    if (!(await pg(t))) return;
    const [a, b] = (await replicas(2)) as [number, number];
    const leases = `"${schema}".t${tables}_leases`;
    const pause = async () => {
      const runId = (await call(a, 'run/start', { name: 'Approval', arguments: {} }, alice))[
        'runId'
      ] as string;
      await until(async () => ((await status(b, runId))['state'] === 'paused' ? true : undefined), {
        what: 'the run to pause',
      });
      return runId;
    };
    // A resume on another replica has taken the run's lease and not yet written its record.
    const resuming = await pause();
    await sql(
      `INSERT INTO ${leases} (run_id, holder, token, expires_at)
         VALUES ($1, 'elsewhere', 'resume-token', now() + interval '1 minute')`,
      [resuming],
    );
    const refused = (await modern(b, 'run/cancel', { runId: resuming }, alice)).json();
    // RUN_ACTIVE travels as invalid params, as a resume refused for the same reason does.
    assert.equal((refused['error'] as { code?: number } | undefined)?.code, -32602);
    assert.equal((await status(a, resuming))['state'], 'paused', 'the cancel wrote nothing');
    // With nobody holding it, the cancel lands.
    const free = await pause();
    assert.equal((await call(b, 'run/cancel', { runId: free }, alice))['state'], 'canceled');
    assert.equal((await status(a, free))['state'], 'canceled');
  });

  it('lets exactly one of two racing resumes execute, every time', async (t) => {
    if (!(await pg(t))) return;
    const [a, b] = (await replicas(2)) as [number, number];
    for (let trial = 0; trial < 10; trial++) {
      const started = await call(a, 'run/start', { name: 'Approval', arguments: {} }, alice);
      const runId = started['runId'] as string;
      await until(async () => ((await status(b, runId))['state'] === 'paused' ? true : undefined), {
        what: 'the run to pause',
      });
      const replies = await Promise.all(
        [a, b].map((port) =>
          modern(port, 'run/resume', { runId, arguments: { approved: true } }, alice),
        ),
      );
      const won = replies.filter((r) => r.json()['error'] === undefined);
      assert.equal(won.length, 1, `trial ${trial}: ${replies.map((r) => r.text).join(' | ')}`);
      assert.equal((await settle(a, runId, alice))['state'], 'completed');
    }
  });

  it('reports a killed replica’s run failed + resumable within TTL + 2 s, and finishes it elsewhere', async (t) => {
    if (!(await pg(t))) return;
    const ttl = 2000;
    const [a, b] = (await replicas(2, { MHL_SERVE_RUN_LOCK_TTL: '2s' })) as [number, number];
    const dir = folder();
    const runId = (await call(a, 'run/start', { name: 'Blocker', arguments: { dir } }, alice))[
      'runId'
    ] as string;
    await holding(b, runId);
    await until(() => existsSync(join(dir, 'hold.pid')), { what: 'the hold shell' });
    const killed = Date.now();
    server(a).child.kill('SIGKILL');
    // Its Hold shell outlives it: stop it, as a host's process supervisor would.
    process.kill(Number(readFileSync(join(dir, 'hold.pid'), 'utf8')), 'SIGKILL');
    const view = await until(
      async () => {
        const v = await status(b, runId);
        return v['state'] === 'failed' ? v : undefined;
      },
      { what: 'the run to read failed', timeoutMs: ttl + 5000 },
    );
    const took = Date.now() - killed;
    assert.equal(view['resumable'], true);
    assert.ok(took <= ttl + 2000, `failed + resumable after ${took} ms`);
    rmSync(join(dir, 'hold.pid'));
    await call(b, 'run/resume', { runId }, alice);
    await until(() => existsSync(join(dir, 'hold.pid')), { what: 'the resumed Hold' });
    writeFileSync(join(dir, 'go'), '');
    assert.equal((await settle(b, runId, alice))['state'], 'completed');
    assert.deepEqual(marks(dir), ['first', 'last'], 'First ran once, before the kill');
  });

  it('refuses the writes of a replica stopped past its TTL once another resumed its run', async (t) => {
    if (!(await pg(t))) return;
    const [a, b] = (await replicas(2, { MHL_SERVE_RUN_LOCK_TTL: '2s' })) as [number, number];
    const { dir, runId } = await stallAndResume(a, b);
    server(a).child.kill('SIGCONT');
    await server(a).logged('run execution lease lost');
    writeFileSync(join(dir, 'go'), '');
    const done = await settle(b, runId, alice);
    assert.equal(done['state'], 'completed');
    assert.deepEqual(marks(dir), ['first', 'last'], 'the stale replica never reached Last');
    // Once its own copy has wound down, the stale replica answers from the store: the
    // successor's run.
    await until(async () => (await status(a, runId))['state'] === 'completed', {
      what: 'the stale replica to report the successor’s run',
    });
  });

  it('leaves a cancel meant for the successor to the successor, not the stalled replica', async (t) => {
    if (!(await pg(t))) return;
    const [a, b, c] = (await replicas(3, { MHL_SERVE_RUN_LOCK_TTL: '2s' })) as [
      number,
      number,
      number,
    ];
    const { dir, runId } = await stallAndResume(a, b);
    await call(c, 'run/cancel', { runId }, alice);
    server(a).child.kill('SIGCONT');
    await until(async () => ((await status(b, runId))['state'] === 'canceled' ? true : undefined), {
      what: 'the successor to cancel its run',
      timeoutMs: 15_000,
    });
    await server(b).logged('run cancelled from another replica');
    assert.ok(!server(a).stderr.includes('run cancelled from another replica'));
    writeFileSync(join(dir, 'go'), '');
  });

  it('stops its own run before the lease expires when the store goes silent', async (t) => {
    if (!(await pg(t))) return;
    const ttl = 3000;
    const url = new URL(PG_URL);
    const proxy = new FreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    t.after(() => proxy.close());
    const port = await proxy.listen();
    url.host = `127.0.0.1:${port}`;
    tables += 1;
    const table = `${schema}.t${tables}`;
    const args = (dsn: string) => ['--store', `${dsn}?table=${table}`, '--token', TOKEN];
    const env = { MHL_LOG_LEVEL: 'info', MHL_SERVE_RUN_LOCK_TTL: '3s' };
    const partitioned = new HttpServer(
      FIXTURES,
      [...args(url.href), '--principal-header', 'X-Who'],
      env,
    );
    const healthy = new HttpServer(FIXTURES, [...args(PG_URL), '--principal-header', 'X-Who'], env);
    servers.push(partitioned, healthy);
    const [a, b] = (await Promise.all([partitioned.ready, healthy.ready])) as [number, number];
    const dir = folder();
    const runId = (await call(a, 'run/start', { name: 'Blocker', arguments: { dir } }, alice))[
      'runId'
    ] as string;
    await holding(b, runId);
    const frozen = Date.now();
    proxy.freeze();
    // Its leg ends at once (its view then reads the unreachable store), so its log says it.
    await until(() => partitioned.stderr.includes('run execution lease lost'), {
      what: 'the partitioned replica to stop its own run',
      timeoutMs: ttl,
    });
    const stopped = Date.now() - frozen;
    t.diagnostic(`the partitioned replica stopped its run ${stopped} ms after the partition`);
    assert.ok(stopped < ttl, `stopped ${stopped} ms after the partition, TTL ${ttl} ms`);
    // Only then does the lease lapse for everyone else.
    await until(async () => ((await status(b, runId))['state'] === 'failed' ? true : undefined), {
      what: 'the healthy replica to see the lease lapse',
      timeoutMs: ttl + 5000,
    });
    writeFileSync(join(dir, 'go'), '');
  });
});

describe('housekeeping on a shared store', () => {
  it('purges terminal runs past the TTL in batches, keeps paused ones, and counts pending', async (t) => {
    if (!(await pg(t))) return;
    const [a] = (await replicas(1)) as [number];
    const table = `t${tables}`;
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      const args = { approved: true };
      ids.push(
        (await call(a, 'run/start', { name: 'Approval', arguments: args }, alice))[
          'runId'
        ] as string,
      );
    }
    const paused = (await call(a, 'run/start', { name: 'Approval', arguments: {} }, alice))[
      'runId'
    ] as string;
    for (const runId of [...ids, paused]) await settle(a, runId, alice);
    await server(a).stop();
    // A later replica whose TTL they are all past sweeps them at start-up, 100 at a time.
    const store = `${PG_URL}?table=${schema}.${table}`;
    const later = new HttpServer(
      FIXTURES,
      ['--store', store, '--token', TOKEN, '--principal-header', 'X-Who'],
      { MHL_LOG_LEVEL: 'info', MHL_SERVE_TERMINAL_RUN_TTL: '1ms' },
    );
    servers.push(later);
    const port = await later.ready;
    await later.logged('"msg":"finished runs purged"');
    assert.match(later.stderr, /"runs":130,"msg":"finished runs purged"/);
    const left = (await sql(
      `SELECT key FROM "${schema}".${table} WHERE key LIKE 'state/%/mhl-run.json'`,
    )) as { key: string }[];
    assert.deepEqual(
      left.map((r) => r.key),
      [`state/${paused}/mhl-run.json`],
    );
    assert.equal((await status(port, paused))['state'], 'paused');
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    }).then((r) => r.text());
    assert.match(metrics, /^mhl_serve_runs_pending 0$/m);
  });

  it('purges a dead replica’s never-resumed run and stray lease rows once past the TTL', async (t) => {
    if (!(await pg(t))) return;
    const [a] = (await replicas(1, { MHL_SERVE_RUN_LOCK_TTL: '2s' })) as [number];
    const table = `"${schema}".t${tables}`;
    const dir = folder();
    const runId = (await call(a, 'run/start', { name: 'Blocker', arguments: { dir } }, alice))[
      'runId'
    ] as string;
    await holding(a, runId);
    await until(() => existsSync(join(dir, 'hold.pid')), { what: 'the hold shell' });
    server(a).child.kill('SIGKILL');
    process.kill(Number(readFileSync(join(dir, 'hold.pid'), 'utf8')), 'SIGKILL');
    // A lease row left by a run whose record is already gone.
    const stray = '0123456789abcdef0123456789abcdef';
    await sql(
      `INSERT INTO ${table}_leases (run_id, holder, token, expires_at)
         VALUES ($1, 'gone', 'gone-token', now() - interval '1 minute')`,
      [stray],
    );
    await until(
      async () =>
        (
          (await sql(`SELECT 1 FROM ${table}_leases WHERE run_id = $1 AND expires_at < now()`, [
            runId,
          ])) as unknown[]
        ).length === 1,
      { what: 'the dead replica’s lease to lapse', timeoutMs: 30_000 },
    );
    const later = new HttpServer(
      FIXTURES,
      [
        '--store',
        `${PG_URL}?table=${schema}.t${tables}`,
        '--token',
        TOKEN,
        '--principal-header',
        'X-Who',
      ],
      { MHL_LOG_LEVEL: 'info', MHL_SERVE_TERMINAL_RUN_TTL: '1ms' },
    );
    servers.push(later);
    await later.ready;
    await later.logged('"msg":"abandoned runs purged"');
    const keys = (await sql(`SELECT key FROM ${table} WHERE key LIKE $1`, [
      `state/${runId}/%`,
    ])) as unknown[];
    assert.deepEqual(keys, [], 'the run and its checkpoints are gone');
    const rows = (await sql(`SELECT run_id FROM ${table}_leases`)) as unknown[];
    assert.deepEqual(rows, [], 'no lease row is left');
  });
});

describe('extension store in a served folder', () => {
  function served(declarations: string[]): string {
    const dir = folder();
    writeFileSync(join(dir, 'gate.mh'), readFileSync(join(FIXTURES, 'gate.mh')));
    for (const [i, text] of declarations.entries()) writeFileSync(join(dir, `store${i}.mh`), text);
    return dir;
  }

  it('keeps runs in the declared PostgreSQL store, its DSN from env()', async (t) => {
    if (!(await pg(t))) return;
    const dir = served([
      `extension store State { dsn: env("MHL_TEST_DSN") table: "${schema}.declared" }\n`,
    ]);
    const url = new URL(PG_URL);
    url.password = 'not-needed-pw';
    const server = new HttpServer(dir, [], { MHL_TEST_DSN: url.toString(), MHL_LOG_LEVEL: 'info' });
    servers.push(server);
    const port = await server.ready;
    const runId = (await call(port, 'run/start', { name: 'Approval', arguments: {} }))['runId'];
    assert.equal(typeof runId, 'string');
    assert.match(server.stderr, /"msg":"state store opened"/);
    assert.match(server.stderr, new RegExp(`#${schema}\\.declared`));
    assert.doesNotMatch(server.stderr, /not-needed-pw/);
  });

  it('refuses two declarations, naming both', async () => {
    const dir = served([
      'extension store A { dsn: "postgres://x@127.0.0.1:1/db" }\n',
      'extension store B { dsn: "postgres://x@127.0.0.1:1/db" }\n',
    ]);
    const refused = await runCli(['serve', 'mcp', dir, '--http', '--port', '0']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /one extension store; found A \(store0\.mh:1:1\) and B \(store1\.mh:1:1\)/,
    );
  });

  it('refuses a dsn whose env() is unset, or that is not a literal', async () => {
    for (const text of [
      'extension store A { dsn: env("MHL_UNSET_DSN_VAR") }\n',
      'extension store A { dsn: ["postgres://x"] }\n',
    ]) {
      const refused = await runCli(['serve', 'mcp', served([text]), '--http', '--port', '0']);
      assert.equal(refused.code, 1, text);
      assert.match(refused.stderr, /extension store A \(store0\.mh:1:1\): dsn /);
    }
  });
});

describe('the store policy', () => {
  it('refuses a store without cas unless --single-replica', async () => {
    const dir = folder();
    const refused = await runCli([
      'serve',
      'mcp',
      FIXTURES,
      '--http',
      '--port',
      '0',
      '--store',
      `file://${dir}`,
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /no compare-and-swap \(cas\).*--single-replica/);
  });

  it('starts on a store without cas with --single-replica', async () => {
    const dir = folder();
    const single = new HttpServer(FIXTURES, ['--store', `file://${dir}`, '--single-replica']);
    servers.push(single);
    const port = await single.ready;
    const started = await call(port, 'run/start', { name: 'Approval', arguments: {} });
    assert.equal(typeof started['runId'], 'string');
  });

  it('refuses an unreachable database at start-up without repeating its password', async () => {
    const refused = await runCli([
      'serve',
      'mcp',
      FIXTURES,
      '--http',
      '--port',
      '0',
      '--store',
      'postgres://mhl:s3cret-pw@127.0.0.1:1/test',
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /could not open the store postgres:\/\/mhl@127\.0\.0\.1:1\/test/);
    assert.doesNotMatch(refused.stderr, /s3cret/);
  });
});

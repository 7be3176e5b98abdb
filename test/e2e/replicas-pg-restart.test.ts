/**
 * A PostgreSQL restart under a running replica (issue 12, "Database faults"): the database is
 * restarted (`pg_ctlcluster … restart`) while a run is mid-step; the run then continues or
 * fails with a clear error, nothing it checkpointed is lost, and the replica serves new runs
 * on fresh connections without being restarted itself. Restarting the machine's database
 * disturbs every other user of it (other test files run in parallel against it), so it runs
 * only with MHL_TEST_PG_RESTART=1, and skips with that reason otherwise.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { call, HttpServer } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { dropSchema, freshSchema, needPg, PG_URL } from '../helpers/postgres.js';
import { settle } from '../helpers/runs.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/runs');
const schema = freshSchema('restart');
const dir = mkdtempSync(join(tmpdir(), 'mhl-pg-restart-'));
let server: HttpServer | undefined;

after(async () => {
  server?.child.kill('SIGKILL');
  await server?.exited;
  rmSync(dir, { recursive: true, force: true });
  await dropSchema(schema);
});

const enabled = process.env['MHL_TEST_PG_RESTART'] === '1';

describe('a PostgreSQL restart under a replica', () => {
  it('keeps the run’s checkpoints and serves new runs without a replica restart', async (t) => {
    if (!enabled) return t.skip('restarts the shared database: set MHL_TEST_PG_RESTART=1');
    if (!(await needPg(t))) return;
    server = new HttpServer(FIXTURES, ['--store', `${PG_URL}?table=${schema}.runs`], {
      MHL_LOG_LEVEL: 'info',
    });
    const port = await server.ready;
    const runId = (await call(port, 'run/start', { name: 'Blocker', arguments: { dir } }))[
      'runId'
    ] as string;
    await until(() => existsSync(join(dir, 'hold.pid')), { what: 'the Hold step' });
    const version = readdirSync('/etc/postgresql')[0] as string;
    const restarted = spawnSync(
      'pg_ctlcluster',
      ['--skip-systemctl-redirect', version, 'main', 'restart'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(restarted.status, 0, restarted.stderr);
    writeFileSync(join(dir, 'go'), '');
    const ended = await settle(port, runId);
    // Either outcome is clean: completed, or failed with the store named and resumable.
    if (ended['state'] !== 'completed') {
      assert.equal(ended['state'], 'failed');
      assert.equal(ended['resumable'], true);
      assert.match(String(ended['error']), /state could not be saved/);
      await call(port, 'run/resume', { runId });
      assert.equal((await settle(port, runId))['state'], 'completed');
    }
    assert.deepEqual(readFileSync(join(dir, 'marks'), 'utf8').trim().split('\n'), [
      'first',
      'last',
    ]);
    const fresh = (await call(port, 'run/start', { name: 'Approval', arguments: {} }))[
      'runId'
    ] as string;
    assert.equal((await settle(port, fresh))['state'], 'paused');
  });
});

/**
 * The PostgreSQL store: the shared Store contract (cas, lease, fence, scan), then what only a
 * database shows: migrations that many replicas race safely, a schema newer than this build
 * refused, the password kept out of every error, and the pools' statement timeout.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Store } from '../../../src/store/index.js';
import { describeDsn, openPostgresStore } from '../../../src/store/postgres.js';
import { until } from '../../helpers/poll.js';
import {
  connectPg,
  dropSchema,
  freshSchema,
  needPg,
  PG_URL,
  pgProblem,
  sql,
} from '../../helpers/postgres.js';
import { storeContract } from './store-contract.js';

const schema = freshSchema('store');
const opened: Store[] = [];
let tables = 0;

after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await dropSchema(schema);
});

async function fresh(): Promise<Store> {
  tables += 1;
  const store = await openPostgresStore({ dsn: PG_URL, table: `${schema}.t${tables}` });
  opened.push(store);
  return store;
}

if ((await pgProblem()) === undefined) {
  storeContract('PostgresStore', fresh);
} else {
  describe('PostgresStore: Store contract', () => {
    it('needs PostgreSQL', async (t) => {
      await needPg(t);
    });
  });
}

describe('PostgresStore', () => {
  it('answers lease reads while every lease connection waits on a renew', async (t) => {
    if (!(await needPg(t))) return;
    tables += 1;
    const table = `${schema}.t${tables}`;
    const store = await openPostgresStore({ dsn: PG_URL, table, leaseConnections: 2 });
    opened.push(store);
    const held = await store.lease.acquire('run-a', 'me', 60_000);
    assert.ok(held);
    // Another transaction locks the lease row, so both lease connections wait in a renew.
    const blocker = await connectPg();
    t.after(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query(
      `SELECT 1 FROM "${schema}".t${tables}_leases WHERE run_id = $1 FOR UPDATE`,
      ['run-a'],
    );
    const renews = [store.lease.renew(held, 60_000), store.lease.renew(held, 60_000)];
    await until(
      async () => {
        const rows = (await sql(
          `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE application_name = 'mhl' AND wait_event_type = 'Lock'`,
        )) as { n: number }[];
        return (rows[0]?.n ?? 0) >= 2 ? true : undefined;
      },
      { what: 'both lease connections to wait' },
    );
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      store.lease.read('run-b').then(() => 'answered'),
      new Promise((done) => {
        timer = setTimeout(() => done('queued behind the renews'), 2000);
      }),
    ]);
    clearTimeout(timer);
    await blocker.query('COMMIT');
    await Promise.all(renews);
    assert.equal(answered, 'answered');
  });

  it('migrates once when many replicas open the same table at once', async (t) => {
    if (!(await needPg(t))) return;
    const table = `${schema}.race`;
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => openPostgresStore({ dsn: PG_URL, table })),
    );
    opened.push(...stores);
    const rows = (await sql(`SELECT version FROM "${schema}".race_migrations`)) as unknown[];
    assert.equal(rows.length, 1);
    await stores[0]?.put('k', 'v');
    assert.equal(await stores[5]?.get('k'), 'v');
  });

  it('refuses a schema newer than it knows', async (t) => {
    if (!(await needPg(t))) return;
    const table = `${schema}.newer`;
    opened.push(await openPostgresStore({ dsn: PG_URL, table }));
    await sql(`INSERT INTO "${schema}".newer_migrations (version) VALUES (99)`);
    await assert.rejects(openPostgresStore({ dsn: PG_URL, table }), (error: unknown) => {
      assert.equal((error as { code?: string }).code, 'STORE_IO');
      assert.match(String(error), /newer than this mhl knows/);
      return true;
    });
  });

  it('never repeats the password of the DSN', async (t) => {
    if (!(await needPg(t))) return;
    const url = new URL(PG_URL);
    url.password = 'hunter2-secret';
    url.port = '1';
    const dsn = url.toString();
    await assert.rejects(
      openPostgresStore({ dsn, table: `${schema}.nope`, connectTimeoutMs: 500 }),
      (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'STORE_IO');
        assert.doesNotMatch(String(error), /hunter2/);
        return true;
      },
    );
    assert.doesNotMatch(describeDsn(dsn), /hunter2/);
    assert.match(describeDsn(dsn), /^postgres:\/\/postgres@127\.0\.0\.1:1\/test$/);
  });

  it('rejects a table name that is not a plain identifier', async (t) => {
    if (!(await needPg(t))) return;
    for (const table of ['x; DROP TABLE y', 'A"b', 'a.b.c', '']) {
      await assert.rejects(openPostgresStore({ dsn: PG_URL, table }), { code: 'STORE_IO' });
    }
  });

  it('bounds every statement with statement_timeout', async (t) => {
    if (!(await needPg(t))) return;
    const store = await openPostgresStore({
      dsn: PG_URL,
      table: `${schema}.slow`,
      statementTimeoutMs: 200,
    });
    opened.push(store);
    // A lock held elsewhere makes the put wait; the timeout ends the wait, not the test.
    const { Client } = (await import('pg')).default;
    const holder = new Client({ connectionString: PG_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE "${schema}".slow IN ACCESS EXCLUSIVE MODE`);
      await assert.rejects(store.put('k', 'v'), (error: unknown) => {
        assert.equal((error as { code?: string }).code, 'STORE_IO');
        assert.match(String(error), /57014/);
        return true;
      });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });
});

/**
 * Exactly-once at the store level (issue 12): 1,000 trials of two replicas, each with its own
 * connection pools on one PostgreSQL table, racing to take one run's lease, half of them for a
 * run whose previous holder's lease lapsed (a takeover race, the case of two replicas racing
 * `run/resume`). Each time exactly one wins, only the winner's fenced write lands, and the
 * loser's is refused. The same race through real server processes is in
 * test/e2e/replicas.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres.js';
import { dropSchema, freshSchema, needPg, PG_URL, sql } from '../../helpers/postgres.js';

const schema = freshSchema('race');
const opened: PostgresStore[] = [];
after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await dropSchema(schema);
});

const TRIALS = 1000;

describe('PostgresStore leases under contention', () => {
  it(`lets exactly one of two replicas take a lease, ${TRIALS} times`, async (t) => {
    if (!(await needPg(t))) return;
    const table = `${schema}.runs`;
    const replicas = await Promise.all([
      openPostgresStore({ dsn: PG_URL, table }),
      openPostgresStore({ dsn: PG_URL, table }),
    ]);
    opened.push(...replicas);
    // Half the runs start with a lapsed lease of a dead third replica.
    const lapsed = Array.from({ length: TRIALS / 2 }, (_, i) => `run-${i * 2}`);
    await sql(
      `INSERT INTO "${schema}".runs_leases (run_id, holder, token, expires_at)
       SELECT id, 'dead', md5(id), now() - interval '1 second' FROM unnest($1::text[]) AS id`,
      [lapsed],
    );
    const started = performance.now();
    let takeovers = 0;
    for (let batch = 0; batch < TRIALS; batch += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, k) => {
          const runId = `run-${batch + k}`;
          const [a, b] = await Promise.all(
            replicas.map((store, i) => store.lease.acquire(runId, `replica-${i}`, 30_000)),
          );
          assert.ok((a === undefined) !== (b === undefined), `${runId}: exactly one lease`);
          const winner = (a ?? b) as NonNullable<typeof a>;
          const loser = { runId, token: a ? 'loser-token' : 'loser-token-b' };
          const [won, lost] = await Promise.all([
            replicas[0]?.fence.putFenced(`state/${runId}/cp`, winner.holder, winner),
            replicas[1]?.fence.putFenced(`state/${runId}/cp`, 'loser', loser),
          ]);
          assert.equal(won, true);
          assert.equal(lost, false);
          if ((batch + k) % 2 === 0) takeovers++;
        }),
      );
    }
    const ms = performance.now() - started;
    t.diagnostic(
      `${TRIALS} trials (${takeovers} takeovers of a lapsed lease) in ${Math.round(ms)} ms`,
    );
    const rows = (await sql(
      `SELECT count(*)::int AS n FROM "${schema}".runs WHERE value = 'loser'`,
    )) as { n: number }[];
    assert.equal(rows[0]?.n, 0);
  });
});

/**
 * The store a served leg writes its checkpoints through on PostgreSQL (`fencedStore`): a run's
 * completion (its result written, its checkpoint cleared) is one transaction under the lease,
 * so a failure half-way leaves neither change. The failure is a real one: a trigger in the
 * test's own table refuses the checkpoint's delete. Under CI=true a missing database fails.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../../src/log/index.js';
import { fencedStore, RunLease } from '../../../src/runs/run-lease.js';
import { CheckpointStore, stateKeys } from '../../../src/runtime/checkpoints/checkpoints.js';
import { Redactor } from '../../../src/runtime/services/redact.js';
import type { Store } from '../../../src/store/index.js';
import { openPostgresStore } from '../../../src/store/postgres.js';
import { dropSchema, freshSchema, needPg, PG_URL, sql } from '../../helpers/postgres.js';

const schema = freshSchema('fenced');
const opened: Store[] = [];

after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await dropSchema(schema);
});

describe('fencedStore', () => {
  it('completes a run in one transaction: a failed checkpoint delete leaves no result', async (t) => {
    if (!(await needPg(t))) return;
    const table = `"${schema}".runs`;
    const store = await openPostgresStore({ dsn: PG_URL, table: `${schema}.runs` });
    opened.push(store);
    const session = '0123456789abcdef0123456789abcdef';
    const taken = await store.lease.acquire(session, 'me', 60_000);
    assert.ok(taken);
    const lease = new RunLease(store, taken, 60_000, createLogger('silent'), () => {});
    t.after(() => lease.release());
    const state = new CheckpointStore(fencedStore(store, lease), new Redactor());
    const draft = {
      last_step: 'First',
      next_step: 'Last',
      completed_steps: ['First'],
      variables: { n: 1 },
      ttl_seconds: 0,
    };
    await state.save(session, 'Build', draft);
    const checkpoint = stateKeys.checkpoint(session, 'Build');
    await sql(`CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await sql(`CREATE TRIGGER refuse BEFORE DELETE ON ${table} FOR EACH ROW
      WHEN (OLD.key = '${checkpoint}') EXECUTE FUNCTION "${schema}".refuse()`);
    await assert.rejects(state.complete(session, 'Build', { variables: { n: 2 } }));
    assert.equal(await store.get(stateKeys.result(session)), undefined, 'no torn completion');
    assert.notEqual(await store.get(checkpoint), undefined);
    await sql(`DROP TRIGGER refuse ON ${table}`);
    await state.complete(session, 'Build', { variables: { n: 2 } });
    assert.notEqual(await store.get(stateKeys.result(session)), undefined);
    assert.equal(await store.get(checkpoint), undefined);
  });
});

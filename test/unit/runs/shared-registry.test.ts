/**
 * Two run registries on one shared store (the memory store has `lease` and `fence`): two
 * replicas in one process, so the shared-store paths of the registry run thousands of times in
 * seconds. Exactly one of two racing resumes executes, a record another replica cannot parse
 * or does not own answers as an unknown run, and a cancel on one reaches the other's leg.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCatalog } from '../../../src/catalog/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { Admission } from '../../../src/runs/admission.js';
import { checkWorkflowCall } from '../../../src/runs/call-context.js';
import { RunRegistry } from '../../../src/runs/registry.js';
import { type Caller, RunError } from '../../../src/runs/types.js';
import { MemoryStore } from '../../../src/store/index.js';
import { until } from '../../helpers/poll.js';

const FOLDER = resolve(import.meta.dirname, '../../fixtures/runs');
const alice: Caller = { owner: 'a'.repeat(64), quota: 'alice' };
const bob: Caller = { owner: 'b'.repeat(64), quota: 'bob' };

function replica(store: MemoryStore, id: string): RunRegistry {
  const loaded = loadCatalog(FOLDER);
  if (!loaded.ok) throw new Error('fixture folder does not load');
  const pipelines = { defaultCwd: tmpdir(), defaultTimeoutMs: 60_000, requireCwd: false };
  return new RunRegistry({
    catalog: loaded.catalog,
    store,
    admission: new Admission(64),
    logger: createLogger('silent'),
    services: { childEnv: {}, env: {}, cacheRoot: tmpdir() },
    check: (workflow, args) => {
      const { inputs, call } = checkWorkflowCall(workflow, args, pipelines);
      return { inputs, cwd: call.cwd };
    },
    replica: { id, leaseTtlMs: 30_000 },
    limits: { runsPerCaller: 10_000 },
  });
}

const TRIALS = 1000;

/** A shared memory store whose lease operations fail while `down` is set: an unreachable store. */
class FlakyLeases extends MemoryStore {
  down = false;
  override get lease() {
    const real = super.lease;
    const fail = () => {
      if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    };
    return {
      acquire: async (...args: Parameters<typeof real.acquire>) => {
        fail();
        return real.acquire(...args);
      },
      renew: async (...args: Parameters<typeof real.renew>) => {
        fail();
        return real.renew(...args);
      },
      release: async (...args: Parameters<typeof real.release>) => {
        fail();
        return real.release(...args);
      },
      read: async (...args: Parameters<typeof real.read>) => {
        fail();
        return real.read(...args);
      },
    };
  }
}

describe('RunRegistry on a shared store', () => {
  it(`lets exactly one of two replicas resume a run, ${TRIALS} times`, async (t) => {
    const store = new MemoryStore();
    const [a, b] = [replica(store, 'a'), replica(store, 'b')];
    const started = performance.now();
    for (let trial = 0; trial < TRIALS; trial++) {
      const { runId } = await a.start('Approval', {}, alice);
      await until(async () => (await b.status(runId, alice)).state === 'paused', {
        what: 'the run to pause',
      });
      const outcomes = await Promise.allSettled([
        a.resume(runId, { approved: true }, alice),
        b.resume(runId, { approved: true }, alice),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      assert.equal(won.length, 1, `trial ${trial}`);
      for (const lost of outcomes.filter((o) => o.status === 'rejected')) {
        assert.ok(
          lost.reason instanceof RunError && lost.reason.code === 'RUN_ACTIVE',
          String(lost.reason),
        );
      }
      const winner = outcomes[0]?.status === 'fulfilled' ? a : b;
      await until(async () => (await winner.status(runId, alice)).state === 'completed', {
        what: 'the resumed run to complete',
      });
    }
    t.diagnostic(`${TRIALS} trials in ${Math.round(performance.now() - started)} ms`);
    await Promise.all([a.cancelAll(), b.cancelAll()]);
  });

  it('answers a record it cannot parse, or one another caller owns, as an unknown run', async () => {
    const store = new MemoryStore();
    const [a, b] = [replica(store, 'a'), replica(store, 'b')];
    const { runId } = await a.start('Approval', {}, alice);
    await until(async () => (await b.status(runId, alice)).state === 'paused', {
      what: 'the run to pause',
    });
    await assert.rejects(b.status(runId, bob), { code: 'RUN_NOT_FOUND' });
    assert.deepEqual(await b.listAll(bob), []);
    assert.deepEqual(
      (await b.listAll(alice)).map((v) => v.runId),
      [runId],
    );
    for (const text of ['{', '[]', '{"version":1}', JSON.stringify({ version: 9 }), '']) {
      await store.put(`state/${runId}/mhl-run.json`, text);
      await assert.rejects(b.status(runId, alice), { code: 'RUN_NOT_FOUND' }, text);
    }
    await assert.rejects(b.status('../../etc/passwd', alice), { code: 'RUN_NOT_FOUND' });
  });

  it('stops a run executing on one replica when another cancels it', async () => {
    const store = new MemoryStore();
    const [a, b] = [replica(store, 'a'), replica(store, 'b')];
    const dir = mkdtempSync(join(tmpdir(), 'mhl-shared-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const { runId } = await a.start('Blocker', { dir }, alice);
    await until(async () => (await a.status(runId, alice)).step === 'Hold', { what: 'Hold' });
    const asked = Date.now();
    assert.equal((await b.cancel(runId, alice)).state, 'canceled');
    await until(async () => (await a.status(runId, alice)).state === 'canceled', {
      what: 'the cancel to reach the executing replica',
    });
    assert.ok(Date.now() - asked < 2000);
    await until(async () => (await b.status(runId, alice)).state === 'canceled', {
      what: 'the other replica to read it cancelled',
    });
    assert.equal((await b.status(runId, alice)).resumable, true);
  });

  it('refuses a start whose lease cannot be taken, and a resume whose lock cannot be read', async () => {
    const store = new FlakyLeases();
    const [a, b] = [replica(store, 'a'), replica(store, 'b')];
    store.down = true;
    await assert.rejects(a.start('Approval', {}, alice), (error: unknown) => {
      assert.ok(error instanceof RunError);
      assert.equal(error.code, 'LEASE_UNAVAILABLE');
      assert.match(error.message, /could not acquire run execution lease/);
      return true;
    });
    store.down = false;
    const { runId } = await a.start('Approval', {}, alice);
    await until(async () => (await b.status(runId, alice)).state === 'paused', {
      what: 'the run to pause',
    });
    store.down = true;
    await assert.rejects(b.resume(runId, { approved: true }, alice), { code: 'LEASE_UNAVAILABLE' });
    store.down = false;
    assert.equal((await b.status(runId, alice)).state, 'paused', 'nothing changed');
    await b.resume(runId, { approved: true }, alice);
    await until(async () => (await a.status(runId, alice)).state === 'completed', {
      what: 'the resume on the other replica to complete',
    });
  });
});

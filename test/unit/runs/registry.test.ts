import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { loadCatalog } from '../../../src/catalog/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { Admission } from '../../../src/runs/admission.js';
import { type Caller, RunRegistry } from '../../../src/runs/registry.js';
import { RunError, type RunView } from '../../../src/runs/types.js';
import { MemoryStore } from '../../../src/store/index.js';
import { checkCall } from '../../../src/surfaces/pipelines.js';

const FOLDER = resolve(import.meta.dirname, '../../fixtures/runs');

function registry(options: { capacity?: number; now?: () => number; store?: MemoryStore } = {}) {
  const loaded = loadCatalog(FOLDER);
  if (!loaded.ok) throw new Error('fixture folder does not load');
  const store = options.store ?? new MemoryStore();
  const admission = new Admission(options.capacity ?? 4);
  const pipelines = {
    defaultCwd: tmpdir(),
    defaultTimeoutMs: 60_000,
    requireCwd: false,
  };
  const runs = new RunRegistry({
    catalog: loaded.catalog,
    store,
    admission,
    logger: createLogger('silent'),
    services: { childEnv: {}, env: {}, cacheRoot: tmpdir() },
    check: (workflow, args) => {
      const { inputs, call } = checkCall(workflow, args, pipelines);
      return { inputs, cwd: call.cwd };
    },
    ...(options.now ? { now: options.now } : {}),
  });
  return { runs, store, admission };
}

const ann: Caller = { owner: 'ann' };
const bob: Caller = { owner: 'bob' };

async function settled(runs: RunRegistry, runId: string, caller = ann): Promise<RunView> {
  for (;;) {
    const view = await runs.status(runId, caller);
    if (view.state !== 'working' && view.state !== 'queued') return view;
    await delay(5);
  }
}

describe('RunRegistry', () => {
  it('queues runs beyond capacity and starts them as slots free', async () => {
    const { runs, admission } = registry({ capacity: 1 });
    const a = await runs.start('Count', {}, ann);
    const b = await runs.start('Count', {}, ann);
    assert.equal(a.state, 'working');
    assert.equal(b.state, 'queued');
    assert.equal(runs.counts.queued, 1);
    assert.equal((await settled(runs, b.runId)).state, 'completed');
    assert.equal((await settled(runs, a.runId)).state, 'completed');
    assert.equal(admission.active, 0);
  });

  it('hides runs from everyone but their owner', async () => {
    const { runs } = registry();
    const { runId } = await runs.start('Count', {}, ann);
    await assert.rejects(
      runs.status(runId, bob),
      (e: unknown) => e instanceof RunError && e.code === 'UNKNOWN_RUN',
    );
    assert.deepEqual(runs.list(bob), []);
    assert.equal(runs.list(ann).length, 1);
  });

  it('sweeps finished runs after the TTL, with their state', async () => {
    let now = 1_000_000;
    const { runs, store } = registry({ now: () => now });
    const { runId } = await runs.start('Count', {}, ann);
    await settled(runs, runId);
    assert.ok((await store.list(`state/${runId}/`)).length > 0);
    assert.equal(await runs.sweep(), 0);
    now += 60 * 60 * 1000 + 1;
    assert.equal(await runs.sweep(), 1);
    assert.deepEqual(await store.list(`state/${runId}/`), []);
    await assert.rejects(runs.status(runId, ann), RunError);
  });

  it('rebuilds a run from its record for the first caller in a new registry', async () => {
    const store = new MemoryStore();
    const first = registry({ store }).runs;
    const { runId } = await first.start('Approval', {}, ann);
    assert.equal((await settled(first, runId)).state, 'paused');
    const second = registry({ store }).runs;
    const view = await second.status(runId, bob);
    assert.equal(view.state, 'paused');
    assert.equal(view.resumable, true);
    await assert.rejects(second.status(runId, ann), RunError, 'claimed by bob now');
    await second.resume(runId, { approved: true }, bob);
    assert.equal((await settled(second, runId, bob)).state, 'completed');
  });

  it('refuses new work once draining', async () => {
    const { runs } = registry();
    await runs.drain(0);
    await assert.rejects(
      runs.start('Count', {}, ann),
      (e: unknown) => e instanceof RunError && e.code === 'DRAINING',
    );
  });
});

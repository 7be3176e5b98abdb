import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadCatalog } from '../../../src/catalog/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { Admission } from '../../../src/runs/admission.js';
import { ArgumentError } from '../../../src/runs/argument-error.js';
import { checkWorkflowCall } from '../../../src/runs/call-context.js';
import { RunRegistry } from '../../../src/runs/registry.js';
import { type Caller, RunError, type RunView } from '../../../src/runs/types.js';
import { MemoryStore, STORE_ERROR_CODES, StoreError } from '../../../src/store/index.js';
import { until } from '../../helpers/poll.js';

const FOLDER = resolve(import.meta.dirname, '../../fixtures/runs');

/** A memory store whose writes wait until the test opens the gate: a slow disk, on demand. */
class GatedStore extends MemoryStore {
  #open: Promise<void> = Promise.resolve();
  #release: () => void = () => {};
  shut(): void {
    this.#open = new Promise((done) => {
      this.#release = done;
    });
  }
  open(): void {
    this.#release();
  }
  override async put(key: string, value: string): Promise<void> {
    await this.#open;
    return super.put(key, value);
  }
}

/** A memory store that takes `room` more writes, then refuses them as a full disk would. */
class FullStore extends MemoryStore {
  room = Number.POSITIVE_INFINITY;
  override async put(key: string, value: string): Promise<void> {
    if (this.room <= 0) throw new StoreError(STORE_ERROR_CODES.FULL, key, 'no space left (ENOSPC)');
    this.room--;
    return super.put(key, value);
  }
}

function registry(
  options: {
    capacity?: number;
    now?: () => number;
    store?: MemoryStore;
    env?: Record<string, string>;
    cacheRoot?: string;
    limits?: { runs?: number; queued?: number; runsPerCaller?: number; queuedPerCaller?: number };
  } = {},
) {
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
    services: { childEnv: {}, env: options.env ?? {}, cacheRoot: options.cacheRoot ?? tmpdir() },
    check: (workflow, args) => {
      const { inputs, call } = checkWorkflowCall(workflow, args, pipelines);
      return { inputs, cwd: call.cwd, timeoutMs: call.timeoutMs };
    },
    ...(options.now ? { now: options.now } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  return { runs, store, admission };
}

const ann: Caller = { owner: 'ann', quota: 'ann' };
const bob: Caller = { owner: 'bob', quota: 'bob' };
/** Two sessions of one client (one address): two owners, one quota key. */
const tab1: Caller = { owner: 'tab1', quota: 'client:host' };
const tab2: Caller = { owner: 'tab2', quota: 'client:host' };

const isCode = (code: string) => (e: unknown) => e instanceof RunError && e.code === code;

/** A memory store whose next `failLists` listings, and reads of `failGets` keys, throw. */
class FlakyStore extends MemoryStore {
  failLists = 0;
  readonly failGets = new Set<string>();
  override async list(prefix: string): Promise<string[]> {
    if (this.failLists > 0) {
      this.failLists--;
      throw new Error('EIO listing');
    }
    return super.list(prefix);
  }
  override async get(key: string): Promise<string | undefined> {
    if (this.failGets.delete(key)) throw new Error('EIO reading');
    return super.get(key);
  }
}

function settled(runs: RunRegistry, runId: string, caller = ann): Promise<RunView> {
  return until(
    async () => {
      const view = await runs.status(runId, caller);
      return view.state === 'working' || view.state === 'queued' ? undefined : view;
    },
    { what: `run ${runId} to settle`, timeoutMs: 30_000 },
  );
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

  it('refuses as busy past the queue and memory limits, and a slot still frees', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhl-reg-'));
    const { runs, admission } = registry({ capacity: 1, limits: { runs: 4, queued: 2 } });
    const busy = (e: unknown) => e instanceof RunError && e.code === 'CAPACITY_FULL';
    const held = await runs.start('Blocker', { dir }, ann);
    assert.equal(held.state, 'working');
    await runs.start('Count', {}, ann);
    await runs.start('Count', {}, ann);
    await assert.rejects(runs.start('Count', {}, ann), busy, 'a third would queue');
    await runs.cancel(held.runId, ann);
    const done = await Promise.all(runs.list(ann).map((v) => settled(runs, v.runId)));
    assert.deepEqual(done.map((v) => v.state).sort(), ['canceled', 'completed', 'completed']);
    const last = await runs.start('Count', {}, ann);
    await assert.rejects(runs.start('Count', {}, ann), busy, 'four runs held in memory');
    assert.equal((await settled(runs, last.runId)).state, 'completed');
    assert.equal(admission.active, 0);
  });

  it("refuses an owner past its quota of unfinished runs, while another owner's start succeeds", async () => {
    let t = 1_000_000;
    const { runs, store } = registry({ now: () => (t += 1000), limits: { runsPerCaller: 2 } });
    const quota = (e: unknown) =>
      e instanceof RunError &&
      e.code === 'QUOTA_EXCEEDED' &&
      e.data?.['limit'] === '--max-runs-per-caller' &&
      e.data?.['max'] === 2;
    const first = (await runs.start('Approval', {}, ann)).runId;
    const second = (await runs.start('Approval', {}, ann)).runId;
    assert.equal((await settled(runs, first)).state, 'paused');
    assert.equal((await settled(runs, second)).state, 'paused');
    await assert.rejects(runs.start('Count', {}, ann), quota, 'both held runs are unfinished');
    const theirs = await runs.start('Count', {}, bob);
    assert.equal((await settled(runs, theirs.runId, bob)).state, 'completed');
    // A finished run of her own makes room: the oldest finished one is forgotten, state and all.
    await runs.cancel(second, ann);
    await runs.cancel(first, ann);
    const third = (await runs.start('Count', {}, ann)).runId;
    await assert.rejects(
      runs.status(second, ann),
      (e: unknown) => e instanceof RunError && e.code === 'RUN_NOT_FOUND',
    );
    await until(async () => (await store.list(`state/${second}/`)).length === 0 || undefined, {
      what: 'the forgotten run state to be deleted',
    });
    assert.equal((await runs.status(first, ann)).state, 'canceled');
    assert.deepEqual(
      runs
        .list(ann)
        .map((v) => v.runId)
        .sort(),
      [first, third].sort(),
    );
    assert.equal((await settled(runs, third)).state, 'completed');
    assert.equal((await runs.status(theirs.runId, bob)).state, 'completed', "bob's run untouched");
  });

  it("refuses an owner past its quota of queued runs, while another owner's run still queues", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhl-reg-'));
    const limits = { queuedPerCaller: 1, runsPerCaller: 3 };
    const { runs, admission } = registry({ capacity: 1, limits });
    const finished = (await runs.start('Count', {}, ann)).runId;
    assert.equal((await settled(runs, finished)).state, 'completed');
    const held = await runs.start('Blocker', { dir }, ann);
    assert.equal(held.state, 'working');
    assert.equal((await runs.start('Count', {}, ann)).state, 'queued');
    await assert.rejects(
      runs.start('Count', {}, ann),
      (e: unknown) =>
        e instanceof RunError &&
        e.code === 'QUOTA_EXCEEDED' &&
        e.data?.['limit'] === '--max-queued-per-caller',
    );
    // At both quotas: refused for the queue, without forgetting her finished run to make room.
    assert.equal((await runs.status(finished, ann)).state, 'completed');
    const theirs = await runs.start('Count', {}, bob);
    assert.equal(theirs.state, 'queued');
    writeFileSync(join(dir, 'go'), '');
    assert.equal((await settled(runs, held.runId)).state, 'completed');
    assert.equal((await settled(runs, theirs.runId, bob)).state, 'completed');
    assert.equal(admission.active, 0);
  });

  it('counts the runs of all sessions of one client against one quota key, released ones too', async () => {
    const { runs } = registry({ limits: { runsPerCaller: 2 } });
    const one = (await runs.start('Approval', {}, tab1)).runId;
    const two = (await runs.start('Approval', {}, tab2)).runId;
    await settled(runs, one, tab1);
    await settled(runs, two, tab2);
    await assert.rejects(runs.start('Count', {}, tab2), isCode('QUOTA_EXCEEDED'), 'one client');
    // Ending the session releases its run, but it still counts against the client's key.
    assert.equal(runs.release(tab1.owner), 1);
    await assert.rejects(runs.start('Count', {}, tab2), isCode('QUOTA_EXCEEDED'), 'released');
    const theirs = (await runs.start('Count', {}, bob)).runId;
    assert.equal((await settled(runs, theirs, bob)).state, 'completed');
    // Claimed, it counts against its claimer: the client has room again.
    assert.equal((await runs.status(one, bob)).state, 'paused');
    const next = (await runs.start('Count', {}, tab2)).runId;
    assert.equal((await settled(runs, next, tab2)).state, 'completed');
    assert.deepEqual(
      runs.list(tab1),
      [],
      'access stays by owner: tab1 lists nothing, tab2 only its own',
    );
    assert.equal(runs.list(tab2).length, 2);
  });

  it('forgets no finished run for a start that is refused for the server-wide queue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhl-reg-'));
    const limits = { runsPerCaller: 1, queued: 1 };
    const { runs } = registry({ capacity: 1, limits });
    const finished = (await runs.start('Count', {}, ann)).runId;
    assert.equal((await settled(runs, finished)).state, 'completed');
    const held = await runs.start('Blocker', { dir }, bob);
    assert.equal(held.state, 'working');
    assert.equal((await runs.start('Count', {}, { owner: 'cy', quota: 'cy' })).state, 'queued');
    await assert.rejects(runs.start('Count', {}, ann), isCode('CAPACITY_FULL'));
    assert.equal((await runs.status(finished, ann)).state, 'completed', 'still held');
    writeFileSync(join(dir, 'go'), '');
    assert.equal((await settled(runs, held.runId, bob)).state, 'completed');
  });

  it('forgets no finished run for a start whose record cannot be written', async () => {
    const store = new FullStore();
    const { runs } = registry({ store, limits: { runsPerCaller: 1 } });
    const finished = (await runs.start('Count', {}, ann)).runId;
    assert.equal((await settled(runs, finished)).state, 'completed');
    store.room = 0;
    await assert.rejects(runs.start('Count', {}, ann), isCode('STATE_STORAGE_FULL'));
    assert.equal((await runs.status(finished, ann)).state, 'completed', 'still held');
    assert.ok((await store.list(`state/${finished}/`)).length > 0, 'its state kept');
    assert.equal(runs.list(ann).length, 1);
  });

  it('lets a read claim or rebuild runs past the quota, and the next start makes room', async () => {
    const store = new MemoryStore();
    const first = registry({ store }).runs;
    const stored = (await first.start('Count', {}, bob)).runId;
    assert.equal((await settled(first, stored, bob)).state, 'completed');
    const { runs } = registry({ store, limits: { runsPerCaller: 1 } });
    const own = (await runs.start('Count', {}, ann)).runId;
    assert.equal((await settled(runs, own)).state, 'completed');
    const released = (await runs.start('Count', {}, bob)).runId;
    assert.equal((await settled(runs, released, bob)).state, 'completed');
    runs.release(bob.owner);
    // Ann is at her quota; naming a released run and a stored one neither refuses nor evicts.
    assert.equal((await runs.status(released, ann)).state, 'completed');
    assert.equal((await runs.status(stored, ann)).state, 'completed');
    assert.equal((await runs.status(own, ann)).state, 'completed', 'her own run kept');
    assert.equal(runs.list(ann).length, 3);
    const next = (await runs.start('Count', {}, ann)).runId;
    assert.deepEqual(
      runs.list(ann).map((v) => v.runId),
      [next],
      'the start forgot all three',
    );
  });

  it('looks runs up in the store when the start-up scan failed, or could not read their record', async () => {
    const store = new FlakyStore();
    const first = registry({ store }).runs;
    const paused = (await first.start('Approval', {}, ann)).runId;
    const other = (await first.start('Approval', {}, ann)).runId;
    await settled(first, paused);
    await settled(first, other);
    store.failLists = 1;
    const unlisted = registry({ store }).runs;
    assert.equal((await unlisted.status(paused, bob)).state, 'paused');
    await assert.rejects(unlisted.status(paused, ann), isCode('RUN_NOT_FOUND'), "bob's now");
    store.failGets.add(`state/${other}/mhl-run.json`);
    const unread = registry({ store }).runs;
    await assert.rejects(unread.status('0'.repeat(32), ann), isCode('RUN_NOT_FOUND'));
    assert.equal((await unread.status(other, ann)).state, 'paused');
  });

  it('lets the first caller to name a released run claim it; its old owner no longer reaches it', async () => {
    const { runs } = registry();
    const { runId } = await runs.start('Approval', {}, ann);
    assert.equal((await settled(runs, runId)).state, 'paused');
    assert.equal(runs.release(ann.owner), 1);
    assert.deepEqual(runs.list(ann), [], 'released: nobody lists it until it is claimed');
    assert.equal((await runs.status(runId, bob)).state, 'paused');
    await assert.rejects(
      runs.status(runId, ann),
      (e: unknown) => e instanceof RunError && e.code === 'RUN_NOT_FOUND',
    );
    await runs.resume(runId, { approved: true }, bob);
    assert.equal((await settled(runs, runId, bob)).state, 'completed');
  });

  it('hides runs from everyone but their owner', async () => {
    const { runs } = registry();
    const { runId } = await runs.start('Count', {}, ann);
    await assert.rejects(
      runs.status(runId, bob),
      (e: unknown) => e instanceof RunError && e.code === 'RUN_NOT_FOUND',
    );
    assert.deepEqual(runs.list(bob), []);
    assert.equal(runs.list(ann).length, 1);
  });

  it('throws its own errors with stable codes, never protocol errors', async () => {
    const { runs } = registry();
    const code = (expected: string) => (e: unknown) => e instanceof RunError && e.code === expected;
    // Argument problems are ArgumentErrors naming the field; the rest are RunErrors.
    const field = (expected: string) => (e: unknown) =>
      e instanceof ArgumentError && e.field === expected;
    await assert.rejects(runs.start('Nope', {}, ann), field('name'));
    const big = { who: 'x'.repeat(256 * 1024) };
    await assert.rejects(runs.start('Approval', big, ann), field('arguments'));
    const { runId } = await runs.start('Approval', {}, ann);
    assert.equal((await settled(runs, runId)).state, 'paused');
    await runs.resume(runId, { approved: true }, ann);
    assert.equal((await settled(runs, runId)).state, 'completed');
    await assert.rejects(runs.resume(runId, {}, ann), code('RUN_NOT_RESUMABLE'));
    await assert.rejects(runs.status(runId, bob), code('RUN_NOT_FOUND'));
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

  it('sweeps finished runs an earlier process left in the store, and keeps resumable ones', async () => {
    const store = new MemoryStore();
    const first = registry({ store }).runs;
    const done = (await first.start('Count', {}, ann)).runId;
    const paused = (await first.start('Approval', {}, ann)).runId;
    await settled(first, done);
    await settled(first, paused);
    let now = Date.now();
    const later = registry({ store, now: () => now }).runs;
    assert.equal(await later.sweep(), 0, 'not yet past the TTL');
    now += 60 * 60 * 1000 + 1;
    assert.equal(await later.sweep(), 1);
    assert.deepEqual(await store.list(`state/${done}/`), []);
    assert.ok((await store.list(`state/${paused}/`)).length > 0, 'a paused run stays');
    assert.equal((await later.status(paused, ann)).state, 'paused');
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

  it('refuses bad arguments with an ArgumentError naming the field from the params side', async () => {
    const { runs } = registry();
    const refusal = async (start: Promise<unknown>): Promise<ArgumentError> => {
      const error = await start.then(
        () => assert.fail('the start was accepted'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ArgumentError, String(error));
      return error;
    };
    assert.equal((await refusal(runs.start('Nope', {}, ann))).field, 'name');
    const typed = await refusal(runs.start('Count', { label: 5 }, ann));
    assert.deepEqual([typed.code, typed.field], ['INVALID_ARGUMENT', 'arguments.label']);
    const context = await refusal(runs.start('Count', { context: { cwd: 'rel' } }, ann));
    assert.equal(context.field, 'arguments.context.cwd');
    const big = { label: 'x'.repeat(300 * 1024) };
    assert.equal((await refusal(runs.start('Count', big, ann))).field, 'arguments');
    assert.deepEqual(runs.list(ann), []);
  });

  it('refuses new work once draining', async () => {
    const { runs } = registry();
    await runs.drain(0);
    await assert.rejects(
      runs.start('Count', {}, ann),
      (e: unknown) => e instanceof RunError && e.code === 'SHUTTING_DOWN',
    );
  });

  it('cancels a run whose record is still being written; it never runs', async () => {
    const store = new GatedStore();
    const { runs, admission } = registry({ store });
    store.shut();
    const starting = runs.start('Count', {}, ann);
    const [pending] = runs.list(ann);
    assert.ok(pending);
    assert.equal((await runs.cancel(pending.runId, ann)).state, 'canceled');
    store.open();
    await starting;
    const view = await settled(runs, pending.runId);
    assert.equal(view.state, 'canceled');
    assert.equal(view.reached, undefined, 'no step ran');
    assert.equal((await runs.logs(pending.runId, 0, ann)).text, '');
    assert.equal(admission.active, 0);
  });

  it('stops a run started while shutdown cancels everything', async () => {
    const store = new GatedStore();
    const { runs, admission } = registry({ store });
    store.shut();
    const starting = runs.start('Count', {}, ann);
    const cancelled = runs.cancelAll();
    store.open();
    await Promise.all([starting, cancelled]);
    const [run] = runs.list(ann);
    assert.equal(run?.state, 'canceled');
    assert.equal(run?.reached, undefined, 'no step ran');
    assert.equal(admission.active, 0);
    await assert.rejects(
      runs.start('Count', {}, ann),
      (e: unknown) => e instanceof RunError && e.code === 'SHUTTING_DOWN',
    );
  });

  it('ends a run failed, not the process, when its leg throws', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mhl-reg-')), 'not-a-dir');
    writeFileSync(file, '');
    // A cache root that is a file: the leg cannot remove its agent cache folder, and throws.
    const { runs } = registry({ cacheRoot: file });
    const { runId } = await runs.start('AgentDeclared', {}, ann);
    const view = await settled(runs, runId);
    assert.equal(view.state, 'failed', JSON.stringify(view));
    assert.equal(view.resumable, true);
  });

  it('masks a secret in a pause reason, in the view and in the record', async () => {
    const secret = 'tok-0123456789abcdef';
    const { runs, store } = registry({ env: { RUNS_TEST_TOKEN: secret } });
    const { runId } = await runs.start('SecretPause', {}, ann);
    const view = await settled(runs, runId);
    assert.equal(view.state, 'paused');
    assert.equal(view.reason, 'approve with [REDACTED]');
    const record = await store.get(`state/${runId}/mhl-run.json`);
    assert.ok(record);
    assert.doesNotMatch(record, new RegExp(secret));
  });

  it("reports a run's own time limit as a failure, not a cancel", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhl-reg-'));
    const { runs } = registry();
    const { runId } = await runs.start('Blocker', { dir, context: { timeout_ms: 300 } }, ann);
    const view = await settled(runs, runId);
    assert.equal(view.state, 'failed', JSON.stringify(view));
    assert.match(view.error ?? '', /timed out after 300 ms/);
    assert.equal(view.resumable, true);
  });

  it('fails a run whose checkpoint cannot be written as STATE_STORAGE_FULL, and resumes it once writes work', async () => {
    const store = new FullStore();
    const { runs, admission } = registry({ store });
    // Room for the run record only: the first checkpoint finds the disk full.
    store.room = 1;
    const started = await runs.start('Count', {}, ann);
    const failed = await settled(runs, started.runId);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.errorCode, 'STATE_STORAGE_FULL');
    assert.equal(failed.resumable, true);
    assert.doesNotMatch(failed.error ?? '', /ENOSPC|state\//, 'the store detail stays in the log');
    const full = (e: unknown) => e instanceof RunError && e.code === 'STATE_STORAGE_FULL';
    await assert.rejects(runs.start('Count', {}, ann), full, 'a start is refused');
    await assert.rejects(runs.resume(started.runId, {}, ann), full, 'so is a resume');
    assert.equal(
      (await runs.status(started.runId, ann)).state,
      'failed',
      'the refusal changed nothing',
    );
    assert.equal(runs.list(ann).length, 1, 'the refused start left no run');
    store.room = Number.POSITIVE_INFINITY;
    await runs.resume(started.runId, {}, ann);
    const done = await settled(runs, started.runId);
    assert.equal(done.state, 'completed');
    assert.equal(done.errorCode, undefined);
    assert.equal(admission.active, 0);
  });

  it('keeps a paused run paused when its cancel cannot be recorded', async () => {
    const store = new FullStore();
    const { runs } = registry({ store });
    const { runId } = await runs.start('Approval', {}, ann);
    assert.equal((await settled(runs, runId)).state, 'paused');
    store.room = 0;
    await assert.rejects(
      runs.cancel(runId, ann),
      (e: unknown) => e instanceof RunError && e.code === 'STATE_STORAGE_FULL',
    );
    assert.equal((await runs.status(runId, ann)).state, 'paused');
    store.room = Number.POSITIVE_INFINITY;
    assert.equal((await runs.cancel(runId, ann)).state, 'canceled');
  });
});

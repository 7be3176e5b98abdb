import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadCatalog } from '../../../src/catalog/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { Admission } from '../../../src/runs/admission.js';
import { checkWorkflowCall } from '../../../src/runs/call-context.js';
import { type RunChange, RunChangeFeed } from '../../../src/runs/change-feed.js';
import { RunRegistry } from '../../../src/runs/registry.js';
import { MAX_SPANS, StepTimeline } from '../../../src/runs/step-timeline.js';
import type { Caller } from '../../../src/runs/types.js';
import { MemoryStore } from '../../../src/store/index.js';

const FOLDER = resolve(import.meta.dirname, '../../fixtures/runs');

describe('RunChangeFeed', () => {
  it('tells every subscriber in order, survives a throwing one, and unsubscribes', () => {
    const faults: unknown[] = [];
    const feed = new RunChangeFeed((error) => faults.push(error));
    const seen: string[] = [];
    const first = feed.subscribe((c) => seen.push(`1:${c.runId}:${c.kind}`));
    feed.subscribe(() => {
      throw new Error('listener fault');
    });
    const third = feed.subscribe((c) => seen.push(`3:${c.runId}:${c.kind}`));
    feed.publish({ runId: 'r', kind: 'view' });
    assert.deepEqual(seen, ['1:r:view', '3:r:view']);
    assert.equal(faults.length, 1);
    first();
    first();
    third();
    feed.publish({ runId: 'r', kind: 'log' });
    assert.deepEqual(seen, ['1:r:view', '3:r:view']);
    assert.equal(feed.size, 1);
  });

  it('counts one function subscribed twice as two subscriptions', () => {
    const feed = new RunChangeFeed();
    let calls = 0;
    const listener = () => {
      calls++;
    };
    const undo = feed.subscribe(listener);
    feed.subscribe(listener);
    undo();
    feed.publish({ runId: 'r', kind: 'view' });
    assert.equal(calls, 1);
  });
});

describe('StepTimeline', () => {
  it('ends the open span when the next step begins, and the last with the run', () => {
    const timeline = new StepTimeline();
    timeline.enter('A', 1, 10);
    timeline.enter('B', 2, 25);
    timeline.end(40, 'paused');
    timeline.end(50, 'failed');
    assert.deepEqual(timeline.spans(), [
      { step: 'A', index: 1, startedAt: 10, endedAt: 25, outcome: 'done' },
      { step: 'B', index: 2, startedAt: 25, endedAt: 40, outcome: 'paused' },
    ]);
  });

  it(`keeps the latest ${MAX_SPANS} spans of a looping run`, () => {
    const timeline = new StepTimeline();
    for (let i = 0; i < MAX_SPANS + 5; i++) timeline.enter(`S${i}`, 1, i);
    assert.equal(timeline.spans().length, MAX_SPANS);
    assert.equal(timeline.spans()[0]?.step, 'S5');
    assert.equal(timeline.dropped, 5);
  });
});

describe('RunRegistry change feed and peek', () => {
  it('publishes view and log changes, times each step, and shows a run to its owner only', async () => {
    const loaded = loadCatalog(FOLDER);
    if (!loaded.ok) throw new Error('fixture folder does not load');
    const defaults = { defaultCwd: tmpdir(), defaultTimeoutMs: 60_000, requireCwd: false };
    const runs = new RunRegistry({
      catalog: loaded.catalog,
      store: new MemoryStore(),
      admission: new Admission(2),
      logger: createLogger('silent'),
      services: { childEnv: {}, env: {}, cacheRoot: tmpdir() },
      check: (workflow, args) => {
        const { inputs, call } = checkWorkflowCall(workflow, args, defaults);
        return { inputs, cwd: call.cwd };
      },
    });
    const ann: Caller = { owner: 'ann', quota: 'ann' };
    const bob: Caller = { owner: 'bob', quota: 'bob' };
    const changes: RunChange[] = [];
    let runId = '';
    const finished = new Promise<void>((done) => {
      runs.changes.subscribe((change) => {
        changes.push(change);
        if (runs.peek(change.runId, ann)?.view.state === 'completed') done();
      });
    });
    runId = (await runs.start('Count', {}, ann)).runId;
    await finished;
    const mine = changes.filter((c) => c.runId === runId);
    assert.ok(mine.filter((c) => c.kind === 'log').length >= 30, 'a change per log line');
    assert.ok(mine.filter((c) => c.kind === 'view').length >= 31, 'a change per step and the end');
    const peek = runs.peek(runId, ann);
    assert.ok(peek !== undefined);
    assert.equal(peek.timeline.length, 30);
    assert.ok(peek.timeline.every((s) => s.outcome === 'done' && s.endedAt !== undefined));
    assert.match(peek.log(0).text, /step 30 of 30/);
    assert.equal(peek.logEnd, peek.log(0).nextSince);
    assert.equal(runs.peek(runId, bob), undefined, 'bob cannot look at ann’s run');
    assert.equal(runs.peek('f'.repeat(32), ann), undefined);
    assert.deepEqual(
      runs.list(ann).map((v) => v.runId),
      [runId],
    );
  });
});

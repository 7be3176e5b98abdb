import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HeldRun, RunTable } from '../../../src/runs/run-table.js';
import type { RunView } from '../../../src/runs/types.js';

function held(runId: string, owner: string, quota: string, finishedAt?: number): HeldRun {
  const state = finishedAt === undefined ? 'working' : 'completed';
  const view: RunView = { runId, tool: 'T', state, startedAt: '', updatedAt: '' };
  return { runId, owner, quota, view, finishedAt, leg: undefined };
}

describe('RunTable', () => {
  it('counts runs by quota key, across owners, and keeps released runs counted until claimed', () => {
    const table = new RunTable<HeldRun>();
    const a = held('a'.repeat(32), 'tab1', 'client:host', 1);
    const b = held('b'.repeat(32), 'tab2', 'client:host');
    table.add(a);
    table.add(b);
    assert.equal(table.countOf('client:host').held, 2);
    assert.equal(table.countOf('tab1').held, 0, 'an owner is not a quota key');
    assert.equal(table.orphan('tab1'), 1);
    assert.equal(table.countOf('client:host').held, 2, 'released, still counted');
    assert.deepEqual(table.owned('tab1'), [], 'released: listed by nobody');
    table.setOwner(a, 'bob', 'bob');
    assert.equal(table.countOf('client:host').held, 1);
    assert.equal(table.countOf('bob').held, 1);
    assert.deepEqual(
      table.oldestFinished('bob', 5, () => true),
      [a],
    );
    assert.ok(table.remove(a));
    assert.equal(table.countOf('bob').held, 0);
  });

  it('remembers ids the scan could not read until they are held or swept', () => {
    const table = new RunTable<HeldRun>();
    const id = 'c'.repeat(32);
    table.addUnread(id);
    assert.equal(table.unread(id), true);
    table.add(held(id, 'ann', 'ann'));
    assert.equal(table.unread(id), false);
    table.addUnread('d'.repeat(32));
    table.removeStored('d'.repeat(32));
    assert.equal(table.unread('d'.repeat(32)), false);
  });
});

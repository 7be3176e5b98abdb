import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admission, AdmissionClosedError, type Slot } from '../../../src/runs/admission.js';

function slotOf(result: Slot | string): Slot {
  assert.notEqual(typeof result, 'string', `expected a slot, got ${String(result)}`);
  return result as Slot;
}

describe('Admission', () => {
  it('refuses a capacity that is not a positive whole number', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new Admission(bad), RangeError);
    }
  });

  it('hands out exactly `capacity` slots and refuses the next at once', () => {
    const admission = new Admission(2);
    const a = slotOf(admission.tryAcquire());
    slotOf(admission.tryAcquire());
    assert.equal(admission.tryAcquire(), 'full');
    assert.equal(admission.active, 2);
    a.release();
    assert.equal(admission.active, 1);
    slotOf(admission.tryAcquire());
  });

  it('frees a slot once however often it is released', () => {
    const admission = new Admission(2);
    const a = slotOf(admission.tryAcquire());
    slotOf(admission.tryAcquire());
    a.release();
    a.release();
    assert.equal(admission.active, 1);
    slotOf(admission.tryAcquire());
    assert.equal(admission.tryAcquire(), 'full');
  });

  it('queues acquire in arrival order and lets no direct call overtake the queue', async () => {
    const admission = new Admission(1);
    const held = slotOf(admission.tryAcquire());
    const order: string[] = [];
    const first = admission.acquire().then((s) => {
      order.push('first');
      return s;
    });
    const second = admission.acquire().then((s) => {
      order.push('second');
      return s;
    });
    assert.equal(admission.queued, 2);
    held.release();
    assert.equal(admission.tryAcquire(), 'full', 'a queued run is first in line');
    (await first).release();
    (await second).release();
    assert.deepEqual(order, ['first', 'second']);
    assert.equal(admission.active, 0);
  });

  it('drops a queued acquire whose signal aborts, with the signal reason', async () => {
    const admission = new Admission(1);
    const held = slotOf(admission.tryAcquire());
    const controller = new AbortController();
    const waiting = admission.acquire(controller.signal);
    controller.abort(new Error('caller gave up'));
    await assert.rejects(waiting, /caller gave up/);
    assert.equal(admission.queued, 0);
    held.release();
    assert.equal(admission.active, 0);
  });

  it('closes for shutdown: refuses new work and rejects the queue, keeps held slots', async () => {
    const admission = new Admission(1);
    const held = slotOf(admission.tryAcquire());
    const waiting = admission.acquire();
    admission.close();
    admission.close();
    await assert.rejects(waiting, AdmissionClosedError);
    assert.equal(admission.tryAcquire(), 'closed');
    await assert.rejects(admission.acquire(), AdmissionClosedError);
    assert.equal(admission.active, 1);
    held.release();
    assert.equal(admission.active, 0);
  });
});

describe('Admission.acquire with an aborted signal', () => {
  it('refuses even when a slot is free, and holds nothing', async () => {
    const admission = new Admission(1);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await assert.rejects(admission.acquire(controller.signal), /gone/);
    assert.equal(admission.active, 0);
  });
});

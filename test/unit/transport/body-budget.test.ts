import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BodyBudget } from '../../../src/transport/body.js';
import { addressBlock } from '../../../src/transport/client-key.js';

const KIB = 1024;

/** A budget on a clock the test moves, and readers that record being shed. */
function setup(capacity = 8 * KIB) {
  const clock = { now: 1_000 };
  const budget = new BodyBudget(capacity, () => clock.now);
  const shed: string[] = [];
  const open = (name: string, address: string) => {
    const reader = budget.open(address, () => {
      shed.push(name);
      budget.close(reader);
    });
    return reader;
  };
  return { budget, clock, shed, open };
}

describe('BodyBudget', () => {
  it('counts bytes as they are taken and gives them all back on close', () => {
    const { budget, open } = setup();
    const a = open('a', '10.0.0.1');
    assert.ok(budget.take(a, 1 * KIB, 100));
    assert.ok(budget.take(a, 2 * KIB, 100));
    assert.equal(budget.used, 3 * KIB);
    budget.close(a);
    budget.close(a);
    assert.equal(budget.used, 0);
  });

  it('holds one address to half the budget, other addresses still fit', () => {
    const { budget, open } = setup();
    const a = open('a', '10.0.0.1');
    assert.ok(budget.take(a, 4 * KIB, 100));
    assert.equal(budget.take(open('a2', '10.0.0.1'), 1, 100), false);
    assert.ok(budget.take(open('b', '10.0.0.2'), 4 * KIB, 100));
    assert.equal(budget.take(open('c', '10.0.0.3'), 1, 100), false, 'the whole budget is held');
  });

  it('sheds the longest-stalled readers of the same address to make room, only when that makes enough', () => {
    const { budget, clock, shed, open } = setup();
    const old = open('old', '10.0.0.1');
    assert.ok(budget.take(old, 2 * KIB, 100));
    clock.now += 50;
    const newer = open('newer', '10.0.0.1');
    assert.ok(budget.take(newer, 2 * KIB, 100));
    const other = open('other', '10.0.0.2');
    assert.ok(budget.take(other, 3 * KIB, 100));
    // Nothing has stalled for 100 ms yet: refused, nobody shed.
    const arriving = open('arriving', '10.0.0.1');
    assert.equal(budget.take(arriving, 1 * KIB, 100), false);
    assert.deepEqual(shed, []);
    // Both of 10.0.0.1's have stalled: the longest stalled goes, and that is enough.
    clock.now += 200;
    assert.ok(budget.take(arriving, 1 * KIB, 100));
    assert.deepEqual(shed, ['old']);
    assert.equal(budget.shed, 1);
    assert.equal(budget.used, 6 * KIB);
  });

  it('sheds nobody when all the stalled bytes together would not make room', () => {
    const { budget, clock, shed, open } = setup();
    const small = open('small', '10.0.0.1');
    assert.ok(budget.take(small, 1 * KIB, 100));
    const busy = open('busy', '10.0.0.2');
    assert.ok(budget.take(busy, 4 * KIB, 100));
    const busier = open('busier', '10.0.0.4');
    assert.ok(budget.take(busier, 2 * KIB, 100));
    clock.now += 200;
    // busy and busier keep sending: they have not stalled.
    assert.ok(budget.take(busy, 0, 100));
    assert.ok(budget.take(busier, 0, 100));
    const big = open('big', '10.0.0.3');
    assert.equal(budget.take(big, 4 * KIB, 100), false, '1 KiB free + 1 KiB stalled < 4 KiB');
    assert.deepEqual(shed, []);
  });
});

describe('addressBlock', () => {
  it('keeps IPv4 as is, unwraps IPv4-mapped, and cuts IPv6 to its /64', () => {
    assert.equal(addressBlock('127.0.0.1'), '127.0.0.1');
    assert.equal(addressBlock('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(addressBlock('2001:db8:1:2:aaaa::1'), '2001:db8:1:2');
    assert.equal(addressBlock('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2');
    assert.equal(addressBlock('::1'), '0:0:0:0');
    assert.equal(addressBlock('fe80::1%eth0'), 'fe80:0:0:0');
    // An embedded dotted quad is two groups, not one.
    assert.equal(addressBlock('64:ff9b::1.2.3.4'), '64:ff9b:0:0');
    assert.equal(addressBlock('1:2:3:4:5:6:1.2.3.4'), '1:2:3:4');
    assert.equal(addressBlock(undefined), 'unknown');
  });
});

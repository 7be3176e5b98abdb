import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RunLog } from '../../../src/runs/run-log.js';

describe('RunLog', () => {
  it('reads from a byte cursor and hands back the next one', () => {
    const log = new RunLog();
    log.append('one');
    log.append('twö');
    const all = log.read();
    assert.deepEqual(all, { text: 'one\ntwö\n', nextSince: 9, dropped: false });
    assert.deepEqual(log.read(4), { text: 'twö\n', nextSince: 9, dropped: false });
    log.append('three');
    assert.deepEqual(log.read(all.nextSince), { text: 'three\n', nextSince: 15, dropped: false });
    assert.deepEqual(log.read(15), { text: '', nextSince: 15, dropped: false });
    assert.deepEqual(log.read(1_000_000), { text: '', nextSince: 15, dropped: false });
  });

  it('drops whole old lines when full and says so to a cursor behind them', () => {
    const log = new RunLog(10);
    log.append('aaaa'); // 0..5
    log.append('bbbb'); // 5..10
    log.append('cccc'); // 10..15: drops aaaa
    assert.deepEqual(log.read(0), { text: 'bbbb\ncccc\n', nextSince: 15, dropped: true });
    assert.deepEqual(log.read(5), { text: 'bbbb\ncccc\n', nextSince: 15, dropped: false });
    assert.equal(log.end, 15);
  });

  it('keeps the tail of a line longer than the buffer, cut at a character boundary', () => {
    const log = new RunLog(8);
    log.append('ééééééé'); // 14 bytes + newline
    const slice = log.read(0);
    assert.equal(slice.dropped, true);
    assert.equal(slice.text, 'ééé\n');
    assert.equal(slice.nextSince, log.end);
  });
});

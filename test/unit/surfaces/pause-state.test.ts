import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_PAUSE_STATE_CHARS,
  type PauseCheckpoint,
  PauseSealer,
} from '../../../src/surfaces/pause-state.js';

const CHECKPOINT: PauseCheckpoint = {
  session: 's1',
  key: 'Review',
  reason: 'waiting',
  records: [['state/s1/A.json', '{"pipeline":"A"}']],
};
const BINDING = { workflow: 'A', digest: 'd1', principal: 'ana', call: 'c1' };

describe('PauseSealer', () => {
  it('opens what it sealed for the same binding, and nothing it can read without the key', () => {
    const sealer = new PauseSealer();
    const text = sealer.seal(CHECKPOINT, BINDING);
    assert.ok(text);
    assert.equal(text.includes('pipeline'), false, 'the checkpoint is not readable');
    const opened = sealer.open(text, BINDING);
    assert.ok(opened.ok);
    const { expiresAt: _expires, ...checkpoint } = opened.checkpoint;
    assert.deepEqual(checkpoint, CHECKPOINT);
    assert.equal(new PauseSealer().open(text, BINDING).ok, false, 'another key');
  });

  it('refuses a state bound to another workflow, definition, principal or call', () => {
    const sealer = new PauseSealer();
    const text = sealer.seal(CHECKPOINT, BINDING) ?? '';
    for (const other of [
      { ...BINDING, workflow: 'B' },
      { ...BINDING, digest: 'd2' },
      { ...BINDING, principal: 'bob' },
      { ...BINDING, principal: undefined },
      { ...BINDING, call: 'c2' },
    ]) {
      const opened = sealer.open(text, other);
      assert.equal(opened.ok ? 'opened' : opened.reason, 'unverified', JSON.stringify(other));
    }
  });

  it('refuses an expired state', () => {
    let now = 1_000;
    const sealer = new PauseSealer({ now: () => now, ttlMs: 50 });
    const text = sealer.seal(CHECKPOINT, BINDING) ?? '';
    now = 1_049;
    assert.equal(sealer.open(text, BINDING).ok, true);
    now = 1_050;
    const expired = sealer.open(text, BINDING);
    assert.equal(expired.ok ? 'opened' : expired.reason, 'expired');
  });

  it('seals without compressing, so its length tells nothing of what the values share', () => {
    const sealer = new PauseSealer();
    const records = (text: string) => [['state/s1/A.json', text] as const];
    // Two states whose values repeat (compressible) or not, of one length: sealed alike long.
    const repeated = sealer.seal({ ...CHECKPOINT, records: records('a'.repeat(4096)) }, BINDING);
    const varied = sealer.seal(
      { ...CHECKPOINT, records: records(Buffer.alloc(3072, 7).toString('base64').slice(0, 4096)) },
      BINDING,
    );
    assert.equal(repeated?.length, varied?.length);
  });

  it('keeps a pause’s expiry when the same pause is sealed again', () => {
    let now = 1_000;
    const sealer = new PauseSealer({ now: () => now, ttlMs: 50 });
    const first = sealer.open(sealer.seal(CHECKPOINT, BINDING) ?? '', BINDING);
    assert.ok(first.ok);
    assert.equal(first.checkpoint.expiresAt, 1_050);
    // Asked again (no answer) at 1_040: the new state still ends at 1_050.
    now = 1_040;
    const again = sealer.seal(first.checkpoint, BINDING) ?? '';
    now = 1_049;
    assert.equal(sealer.open(again, BINDING).ok, true);
    now = 1_050;
    const expired = sealer.open(again, BINDING);
    assert.equal(expired.ok ? 'opened' : expired.reason, 'expired');
  });

  it('does not seal, nor try to open, more than the size cap', () => {
    const sealer = new PauseSealer();
    const noise = Buffer.from(
      Array.from({ length: MAX_PAUSE_STATE_CHARS }, () => Math.floor(Math.random() * 256)),
    ).toString('base64');
    const big = { ...CHECKPOINT, records: [['state/s1/A.json', noise] as const] };
    assert.equal(sealer.seal(big, BINDING), undefined);
    assert.equal(sealer.open(`mhl1.${'A'.repeat(MAX_PAUSE_STATE_CHARS)}`, BINDING).ok, false);
    const reasons = ['', 'mhl1.', 'mhl1.AAAA', 'mhl2.AAAA', '\u0000'].map((junk) => {
      const opened = sealer.open(junk, BINDING);
      return opened.ok ? 'opened' : opened.reason;
    });
    assert.deepEqual(reasons, ['unknown', 'truncated', 'truncated', 'unknown', 'unknown']);
  });
});

/**
 * `CheckpointEncoder` (`checkpoint-codec.ts`) writes what `encodeRecord` writes, byte for byte,
 * whatever the sequence of checkpoints: a list that grows a step at a time, one that restarts (a
 * loop's next iteration) or changes under the same key, many keys at once (past the ones it
 * remembers), step names JSON must escape, empty lists, optional fields, and a secret
 * registered mid-run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CheckpointEncoder,
  encodeRecord,
} from '../../../../src/runtime/checkpoints/checkpoint-codec.js';
import type { CheckpointRecord } from '../../../../src/runtime/checkpoints/checkpoint-records.schema.js';
import { Redactor } from '../../../../src/runtime/services/redact.js';

function record(steps: readonly string[], extra: Partial<CheckpointRecord> = {}): CheckpointRecord {
  return {
    pipeline: 'Build',
    last_step: steps.at(-1) ?? '',
    next_step: 'Next',
    completed_steps: [...steps],
    variables: {
      __last_step: steps.at(-1) ?? '',
      __mem: {},
      nested: { list: [1, 'two', { three: null }], text: 'line\nbreak "quoted"' },
      tricky: '\n  "completed_steps": "\\u0000completed_steps"',
    },
    saved_at: '2026-12-01T00:00:00.000Z',
    ttl_seconds: 0,
    digest: 'd'.repeat(64),
    state_version: 1,
    ...extra,
  };
}

function same(encoder: CheckpointEncoder, key: string, r: CheckpointRecord, redactor: Redactor) {
  assert.equal(encoder.encode(key, r, redactor), encodeRecord(r, redactor));
}

describe('CheckpointEncoder', () => {
  it('matches encodeRecord as a run adds one step at a time, then restarts', () => {
    const encoder = new CheckpointEncoder();
    const redactor = new Redactor();
    const steps: string[] = [];
    same(encoder, 'k', record(steps), redactor);
    for (let i = 0; i < 40; i++) {
      steps.push(`S${i}`);
      same(encoder, 'k', record(steps), redactor);
    }
    same(encoder, 'k', record(['S0']), redactor);
    same(encoder, 'k', record(['S0', 'S1']), redactor);
    same(encoder, 'k', record(['Other', 'S1']), redactor);
    same(encoder, 'k', record([]), redactor);
  });

  it('matches it with optional fields, a pause, and names JSON escapes', () => {
    const encoder = new CheckpointEncoder();
    const redactor = new Redactor();
    const names = ['plain', 'quo"te', 'back\\slash', 'tab\there', 'ünï€ødé', '\u2028'];
    for (let n = 1; n <= names.length; n++) {
      const steps = names.slice(0, n);
      same(encoder, 'k', record(steps, { paused: { reason: 'wait' } }), redactor);
      const { digest: _digest, ...noDigest } = record(steps, { runtime_version: '1.2.3' });
      same(encoder, 'k', noDigest, redactor);
    }
  });

  it('keeps many keys apart, past the ones it remembers', () => {
    const encoder = new CheckpointEncoder();
    const redactor = new Redactor();
    for (let round = 1; round <= 3; round++) {
      for (let k = 0; k < 40; k++) {
        const steps = Array.from({ length: round + (k % 5) }, (_, i) => `K${k}S${i}`);
        same(encoder, `state/s${k}/P.json`, record(steps), redactor);
      }
    }
  });

  it('redacts as encodeRecord does once a secret is registered mid-run', () => {
    const encoder = new CheckpointEncoder();
    const redactor = new Redactor();
    same(encoder, 'k', record(['S0', 'S1']), redactor);
    redactor.register('S1-secret');
    const r = record(['S0', 'S1', 'S1-secret'], { last_step: 'S1-secret' });
    same(encoder, 'k', r, redactor);
    assert.ok(!encoder.encode('k', r, redactor).includes('S1-secret'));
  });
});

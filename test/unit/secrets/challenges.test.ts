/**
 * Mint challenges on an injected clock: thirty seconds to the millisecond, one answer per nonce
 * (right or wrong), a bounded number outstanding, and a proof bound to nonce, instance, origin.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  CHALLENGE_TTL_MS,
  ChallengeStore,
  MAX_CHALLENGES,
} from '../../../src/secrets/challenges.js';
import { controlProof } from '../../../src/secrets/key.js';

describe('ChallengeStore', () => {
  it('takes a nonce once, and not past its thirty seconds', () => {
    let now = 5_000;
    const store = new ChallengeStore({ now: () => now });
    const a = store.issue();
    const b = store.issue();
    assert.ok(a && b && a.nonce !== b.nonce);
    assert.equal(store.take(a.nonce), true);
    assert.equal(store.take(a.nonce), false, 'single use');
    now += CHALLENGE_TTL_MS;
    assert.equal(store.take(b.nonce), false, 'expired at exactly the TTL');
    assert.equal(store.take(b.nonce), false);
  });

  it('refuses unknown and malformed nonces, and caps those outstanding', () => {
    const store = new ChallengeStore();
    for (const nonce of ['', 'x', 'A'.repeat(43), `${'A'.repeat(42)}!`]) {
      assert.equal(store.take(nonce), false, nonce);
    }
    for (let i = 0; i < MAX_CHALLENGES; i++) assert.ok(store.issue());
    assert.equal(store.issue(), undefined);
  });
});

describe('controlProof', () => {
  it('differs for another nonce, instance or origin', () => {
    const key = randomBytes(32);
    const base = {
      nonce: 'A'.repeat(43),
      instanceId: '550e8400-e29b-41d4-a716-446655440000',
      origin: 'http://127.0.0.1:8787',
    };
    const proof = controlProof(key, base);
    assert.match(proof, /^[A-Za-z0-9_-]{43}$/);
    for (const other of [
      { ...base, nonce: 'B'.repeat(43) },
      { ...base, instanceId: '550e8400-e29b-41d4-a716-446655440001' },
      { ...base, origin: 'http://127.0.0.1:8788' },
    ]) {
      assert.notEqual(controlProof(key, other), proof);
    }
    assert.notEqual(controlProof(randomBytes(32), base), proof);
  });
});

/**
 * Setup capabilities on an injected clock: ten minutes to the millisecond, single use (only a
 * consumed claim uses one up), one claim at a time, a bounded number outstanding, and nothing
 * accepted but the exact 43-character shape.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CAPABILITY_TTL_MS,
  CapabilityStore,
  MAX_CAPABILITIES,
} from '../../../src/secrets/capabilities.js';

const GRANT = { mode: 'add', name: 'db' } as const;

function clocked() {
  let now = 1_000_000;
  const store = new CapabilityStore({ now: () => now });
  const advance = (ms: number) => {
    now += ms;
  };
  return { store, advance };
}

describe('setup capabilities', () => {
  it('are 256-bit base64url values that live exactly ten minutes', () => {
    const { store, advance } = clocked();
    const minted = store.mint(GRANT);
    assert.ok(minted);
    assert.match(minted.capability, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(minted.capability, 'base64url').length, 32);
    advance(CAPABILITY_TTL_MS - 1);
    assert.deepEqual(store.check(minted.capability), GRANT);
    advance(1);
    assert.equal(store.check(minted.capability), undefined, 'expired at ten minutes');
    assert.equal(store.claim(minted.capability), undefined);
  });

  it('can be shortened (to zero: expired at once) but never lengthened', () => {
    const zero = new CapabilityStore({ ttlMs: 0 });
    assert.equal(zero.check(zero.mint(GRANT)?.capability), undefined);
    let now = 0;
    const long = new CapabilityStore({ ttlMs: 10 * CAPABILITY_TTL_MS, now: () => now });
    const minted = long.mint(GRANT);
    now = CAPABILITY_TTL_MS;
    assert.equal(long.check(minted?.capability), undefined);
  });

  it('are used up only by a consumed claim; a released claim leaves it usable', () => {
    const { store } = clocked();
    const { capability } = store.mint(GRANT) ?? assert.fail();
    const first = store.claim(capability);
    assert.ok(first);
    assert.equal(store.claim(capability), undefined, 'one claim at a time');
    assert.equal(store.check(capability), undefined, 'a claimed capability shows no page');
    first.release();
    const second = store.claim(capability);
    assert.ok(second);
    second.consume();
    assert.equal(store.check(capability), undefined);
    assert.equal(store.claim(capability), undefined, 'replay refused');
  });

  it('accept nothing but the exact shape', () => {
    const { store } = clocked();
    const { capability } = store.mint(GRANT) ?? assert.fail();
    for (const bad of [
      undefined,
      '',
      `${capability}=`,
      ` ${capability}`,
      capability.slice(1),
      capability.toUpperCase() === capability ? 'x' : capability.toUpperCase(),
    ]) {
      assert.equal(store.check(bad), undefined, String(bad));
    }
  });

  it('bound how many are outstanding, and expired ones make room', () => {
    const { store, advance } = clocked();
    for (let i = 0; i < MAX_CAPABILITIES; i++) assert.ok(store.mint(GRANT));
    assert.equal(store.mint(GRANT), undefined);
    advance(CAPABILITY_TTL_MS);
    assert.ok(store.mint(GRANT));
    assert.equal(store.size, 1);
  });
});

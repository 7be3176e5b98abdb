import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session } from '../../../src/protocol/index.js';

describe('Session', () => {
  it('starts unnegotiated with a random visible-ASCII id', () => {
    const a = new Session({ now: 5 });
    const b = new Session();
    assert.notEqual(a.id, b.id);
    assert.match(a.id, /^[\x21-\x7e]+$/);
    assert.equal(a.negotiated, false);
    assert.equal(a.initialized, false);
    assert.equal(a.protocolVersion, undefined);
    assert.equal(a.allowsBatch, false);
    assert.equal(a.createdAt, 5);
    assert.equal(a.lastSeenAt, 5);
  });

  it('records a negotiation and the initialized notification', () => {
    const session = new Session({ id: 'fixed' });
    session.negotiate({
      protocolVersion: '2025-06-18',
      clientInfo: { name: 'c', version: '1' },
      clientCapabilities: { roots: {} },
    });
    session.markInitialized();
    assert.equal(session.id, 'fixed');
    assert.equal(session.negotiated, true);
    assert.equal(session.initialized, true);
    assert.equal(session.protocolVersion, '2025-06-18');
    assert.deepEqual(session.clientInfo, { name: 'c', version: '1' });
    assert.deepEqual(session.clientCapabilities, { roots: {} });
  });

  it('allows batches only once 2025-03-26 is negotiated', () => {
    const session = new Session();
    for (const [version, allowed] of [
      ['2025-11-25', false],
      ['2025-06-18', false],
      ['2025-03-26', true],
    ] as const) {
      session.negotiate({ protocolVersion: version });
      assert.equal(session.allowsBatch, allowed, version);
    }
  });

  it('tracks activity for idle sweeps without going backwards', () => {
    const session = new Session({ now: 1000 });
    session.touch(5000);
    session.touch(3000);
    assert.equal(session.lastSeenAt, 5000);
    assert.equal(session.idleFor(65_000), 60_000);
    assert.equal(session.idleFor(0), 0);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session } from '../../../src/protocol/index.js';
import { clientKey } from '../../../src/transport/client-key.js';
import { SessionTable, type SessionTableOptions } from '../../../src/transport/sessions.js';

const MIN = 60_000;

/** A table with its ended sessions recorded and a mutable set of pinned ones. */
function table(options: Omit<SessionTableOptions, 'onEnd' | 'pins'> = {}) {
  const ended: Session[] = [];
  const pinned = new Set<Session>();
  const sessions = new SessionTable({
    ttlMs: 30 * MIN,
    evictableAfterMs: 5 * MIN,
    ...options,
    pins: () => (session) => pinned.has(session),
    onEnd: (session) => ended.push(session),
  });
  return { sessions, ended, pinned };
}

function open(sessions: SessionTable, now: number, client: string) {
  const session = new Session({ now });
  return { session, refusal: sessions.add(session, now, client) };
}

describe('SessionTable', () => {
  it('refuses a client at its own cap without touching another client', () => {
    const { sessions, ended } = table({ max: 10, maxPerClient: 2 });
    open(sessions, 0, 'a');
    open(sessions, 0, 'a');
    const refused = open(sessions, 1000, 'a');
    assert.equal(refused.refusal?.cap, 'client');
    assert.equal(refused.refusal?.limit, 2);
    assert.equal(refused.refusal?.retryAfterMs, 5 * MIN - 1000);
    assert.equal(sessions.holds(refused.session), false);
    assert.equal(open(sessions, 1000, 'b').refusal, undefined);
    assert.deepEqual(ended, []);
    assert.equal(sessions.size, 3);
  });

  it('at its own cap, evicts only that client`s stalest session idle past the grace', () => {
    const { sessions, ended } = table({ max: 10, maxPerClient: 2 });
    const other = open(sessions, 0, 'b').session;
    const first = open(sessions, 1, 'a').session;
    open(sessions, 2, 'a');
    const fresh = open(sessions, 5 * MIN + 1, 'a');
    assert.equal(fresh.refusal, undefined);
    assert.deepEqual(ended, [first]);
    assert.equal(sessions.holds(other), true, 'another client is never evicted for it');
  });

  it('refuses at the global cap when no session is idle past the grace', () => {
    const { sessions, ended } = table({ max: 2, maxPerClient: 2 });
    open(sessions, 0, 'a');
    open(sessions, 0, 'b');
    const refused = open(sessions, MIN, 'c');
    assert.deepEqual(refused.refusal, { cap: 'server', limit: 2, retryAfterMs: 4 * MIN });
    assert.deepEqual(ended, []);
  });

  it('at the global cap, evicts the stalest unpinned session idle past the grace', () => {
    const { sessions, ended, pinned } = table({ max: 3, maxPerClient: 3 });
    const busy = open(sessions, 0, 'a').session;
    const idle = open(sessions, 1, 'b').session;
    const recent = open(sessions, 6 * MIN, 'b').session;
    pinned.add(busy);
    assert.equal(open(sessions, 6 * MIN + 1, 'c').refusal, undefined);
    assert.deepEqual(ended, [idle]);
    assert.equal(sessions.holds(busy) && sessions.holds(recent), true);
  });

  it('never sweeps or evicts a pinned session, and counts a pin as activity', () => {
    const { sessions, ended, pinned } = table({ max: 1, maxPerClient: 1 });
    const busy = open(sessions, 0, 'a').session;
    pinned.add(busy);
    sessions.sweep(60 * MIN);
    assert.deepEqual(ended, []);
    assert.equal(busy.lastSeenAt, 60 * MIN, 'seen at the sweep');
    const refused = open(sessions, 100 * MIN, 'b').refusal;
    assert.equal(refused?.cap, 'server');
    assert.equal(refused?.retryAfterMs, 60_000, 'every candidate pinned: check back in a minute');
    // Unpinned, its idle time runs from the last look, so the TTL is whole again.
    pinned.delete(busy);
    sessions.sweep(100 * MIN + 29 * MIN);
    assert.deepEqual(ended, []);
    sessions.sweep(100 * MIN + 31 * MIN);
    assert.deepEqual(ended, [busy]);
  });

  it('sweeps idle unpinned sessions and frees their client`s count', () => {
    const { sessions, ended } = table({ max: 10, maxPerClient: 1 });
    const old = open(sessions, 0, 'a').session;
    sessions.sweep(31 * MIN);
    assert.deepEqual(ended, [old]);
    assert.equal(open(sessions, 31 * MIN, 'a').refusal, undefined);
  });

  it('caps a client at the global cap when asked for more', () => {
    const { sessions } = table({ max: 1, maxPerClient: 5 });
    open(sessions, 0, 'a');
    assert.equal(open(sessions, 0, 'a').refusal?.cap, 'client');
  });

  it('deletes and clears through onEnd, once each', () => {
    const { sessions, ended } = table();
    const a = open(sessions, 0, 'a').session;
    const b = open(sessions, 0, 'b').session;
    assert.equal(sessions.delete(a.id), true);
    assert.equal(sessions.delete(a.id), false);
    sessions.clear();
    assert.deepEqual(ended, [a, b]);
    assert.equal(sessions.size, 0);
  });
});

describe('clientKey', () => {
  it('keys by principal first, else by address, and never in clear', () => {
    assert.equal(clientKey('alice', '10.0.0.1'), clientKey('alice', '10.0.0.2'));
    assert.notEqual(clientKey('alice', '10.0.0.1'), clientKey('bob', '10.0.0.1'));
    assert.notEqual(clientKey(undefined, '10.0.0.1'), clientKey(undefined, '10.0.0.2'));
    assert.match(clientKey('alice', undefined), /^[0-9a-f]{64}$/);
  });

  it('reads an IPv4-mapped address as IPv4 and an IPv6 address by its /64', () => {
    assert.equal(clientKey(undefined, '::ffff:10.0.0.1'), clientKey(undefined, '10.0.0.1'));
    assert.equal(
      clientKey(undefined, '2001:db8:1:2::1'),
      clientKey(undefined, '2001:0db8:0001:0002:ffff:1:2:3'),
    );
    assert.notEqual(
      clientKey(undefined, '2001:db8:1:2::1'),
      clientKey(undefined, '2001:db8:1:3::1'),
    );
    assert.notEqual(clientKey(undefined, '::1'), clientKey(undefined, '::2:0:0:0:1'));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session } from '../../../src/protocol/index.js';
import { clientKey } from '../../../src/transport/client-key.js';
import { SessionTable, type SessionTableOptions } from '../../../src/transport/sessions.js';

const MIN = 60_000;

/** A table with its ended sessions recorded, mutable sets of busy and kept ones, and keep looks. */
function table(options: Omit<SessionTableOptions, 'onEnd' | 'busy' | 'keeps'> = {}) {
  const ended: Session[] = [];
  const busy = new Set<Session>();
  const kept = new Set<Session>();
  const looks = { keeps: 0 };
  const sessions = new SessionTable({
    ttlMs: 30 * MIN,
    evictableAfterMs: 5 * MIN,
    ...options,
    busy: (session) => busy.has(session),
    keeps: () => {
      looks.keeps++;
      return (session) => kept.has(session);
    },
    onEnd: (session) => ended.push(session),
  });
  return { sessions, ended, busy, kept, looks };
}

/** Admits and files one session, as an `initialize` that succeeds does. */
function open(sessions: SessionTable, now: number, client: string) {
  const session = new Session({ now, client });
  const refusal = sessions.admit(now, client);
  if (refusal === undefined) sessions.add(session);
  return { session, refusal };
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

  it('at the global cap, evicts the stalest session neither busy nor kept', () => {
    const { sessions, ended, busy, kept } = table({ max: 4, maxPerClient: 4 });
    const calling = open(sessions, 0, 'a').session;
    const running = open(sessions, 1, 'a').session;
    const idle = open(sessions, 2, 'b').session;
    const recent = open(sessions, 6 * MIN, 'b').session;
    busy.add(calling);
    kept.add(running);
    assert.equal(open(sessions, 6 * MIN + 1, 'c').refusal, undefined);
    assert.deepEqual(ended, [idle]);
    assert.equal(sessions.holds(calling) && sessions.holds(running), true);
    assert.equal(sessions.holds(recent), true);
  });

  it('keeps a session with a live run through a flood at the cap, refusing the flood', () => {
    const { sessions, ended, kept } = table({ max: 2, maxPerClient: 2 });
    const running = open(sessions, 0, 'a').session;
    kept.add(running);
    open(sessions, 0, 'b');
    // Ten minutes on, both are past the grace; only the one without work may go.
    assert.equal(open(sessions, 10 * MIN, 'flood').refusal, undefined);
    for (let i = 1; i <= 50; i++) {
      const refused = open(sessions, 10 * MIN + i, 'flood').refusal;
      assert.equal(refused?.cap, 'server', `flood ${i} refused`);
    }
    assert.equal(ended.length, 1);
    assert.equal(sessions.holds(running), true, 'the session owning the run stays');
    assert.equal(running.lastSeenAt, 0, 'owning work is not activity');
  });

  it('sweeps a session with a live run once it is idle past the TTL', () => {
    const { sessions, ended, kept, looks } = table();
    const running = open(sessions, 0, 'a').session;
    kept.add(running);
    sessions.sweep(29 * MIN);
    assert.deepEqual(ended, []);
    sessions.sweep(31 * MIN);
    assert.deepEqual(ended, [running], 'its client was silent past the TTL');
    assert.equal(looks.keeps, 0, 'the sweep never needs the work snapshot');
  });

  it('never sweeps or evicts a busy session, and counts busy as activity', () => {
    const { sessions, ended, busy } = table({ max: 1, maxPerClient: 1 });
    const calling = open(sessions, 0, 'a').session;
    busy.add(calling);
    sessions.sweep(60 * MIN);
    assert.deepEqual(ended, []);
    assert.equal(calling.lastSeenAt, 60 * MIN, 'seen at the sweep');
    const refused = open(sessions, 100 * MIN, 'b').refusal;
    assert.equal(refused?.cap, 'server');
    assert.equal(refused?.retryAfterMs, 60_000, 'every candidate busy: check back in a minute');
    // No longer busy, its idle time runs from the last look, so the TTL is whole again.
    busy.delete(calling);
    sessions.sweep(100 * MIN + 29 * MIN);
    assert.deepEqual(ended, []);
    sessions.sweep(100 * MIN + 31 * MIN);
    assert.deepEqual(ended, [calling]);
  });

  it('asks for the work snapshot only at a cap with a session past the grace', () => {
    const { sessions, looks } = table({ max: 3, maxPerClient: 3 });
    open(sessions, 0, 'a');
    open(sessions, 0, 'b');
    open(sessions, 0, 'c');
    assert.equal(looks.keeps, 0, 'under the caps, admission looks at nothing');
    for (let i = 0; i < 20; i++) open(sessions, MIN, 'flood');
    assert.equal(looks.keeps, 0, 'a flood of fresh sessions never needs it');
    open(sessions, 6 * MIN, 'flood');
    assert.equal(looks.keeps, 1);
  });

  it('counts an admitted slot against the caps until it is filed or released', () => {
    const { sessions } = table({ max: 2, maxPerClient: 2 });
    assert.equal(sessions.admit(0, 'a'), undefined);
    assert.equal(sessions.admit(0, 'a'), undefined);
    assert.equal(sessions.admit(0, 'b')?.cap, 'server', 'both slots reserved');
    sessions.release('a');
    assert.equal(sessions.admit(0, 'b'), undefined, 'a released slot is free again');
    assert.equal(sessions.size, 0, 'reservations are not sessions');
  });

  it('sweeps idle sessions and frees their client`s count', () => {
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

  it('at the per-client cap, looks at no other client`s session', () => {
    // `busy` is asked of every session a sweep or an eviction pass looks at: count by client.
    const asked = new Map<string, number>();
    const sessions = new SessionTable({
      max: 1000,
      maxPerClient: 3,
      busy: (session) => {
        asked.set(session.client ?? '', (asked.get(session.client ?? '') ?? 0) + 1);
        return false;
      },
      onEnd: () => {},
    });
    for (let i = 0; i < 300; i++) open(sessions, 0, `other-${i % 100}`);
    for (let i = 0; i < 3; i++) open(sessions, 0, 'a');
    assert.equal(asked.size, 0, 'under the caps, admission looks at nothing');
    for (let i = 1; i <= 50; i++) {
      assert.equal(open(sessions, i * 1000, 'a').refusal?.cap, 'client');
    }
    assert.deepEqual([...asked.keys()], ['a'], 'only the client at its cap is looked at');
    // Each refusal: its three sessions swept and looked at for a candidate in one pass.
    assert.equal(asked.get('a'), 50 * 3);
    // Past the grace, its own stalest goes; still nobody else is looked at.
    assert.equal(open(sessions, 6 * MIN, 'a').refusal, undefined);
    assert.deepEqual([...asked.keys()], ['a']);
    assert.equal(sessions.size, 303);
  });

  it('keeps its per-client index through delete, sweep and eviction', () => {
    const { sessions, ended } = table({ max: 10, maxPerClient: 2 });
    const a1 = open(sessions, 0, 'a').session;
    const a2 = open(sessions, 0, 'a').session;
    sessions.delete(a1.id);
    const a3 = open(sessions, 1, 'a').session;
    assert.equal(open(sessions, 2, 'a').refusal?.cap, 'client');
    sessions.sweep(31 * MIN);
    assert.deepEqual(ended, [a1, a2, a3]);
    const b = open(sessions, 31 * MIN, 'a').session;
    open(sessions, 31 * MIN, 'a');
    assert.equal(open(sessions, 37 * MIN, 'a').refusal, undefined);
    assert.equal(ended.at(-1), b, 'evicted from the index as from the table');
    assert.equal(sessions.size, 2);
  });

  it('at the global cap, sweeps and looks for a candidate in one pass', () => {
    const asked = new Map<Session, number>();
    const kept = new Set<Session>();
    const ended: Session[] = [];
    const sessions = new SessionTable({
      max: 3,
      maxPerClient: 3,
      ttlMs: 10 * MIN,
      evictableAfterMs: 5 * MIN,
      busy: (session) => {
        asked.set(session, (asked.get(session) ?? 0) + 1);
        return false;
      },
      keeps: () => (session) => kept.has(session),
      onEnd: (session) => ended.push(session),
    });
    const running = open(sessions, 0, 'a').session;
    kept.add(running);
    open(sessions, 8 * MIN, 'b');
    open(sessions, 8 * MIN, 'c');
    for (let i = 0; i < 10; i++) open(sessions, 9 * MIN, 'flood');
    // Ten refusals: each asks of every session once (the sweep makes no pass of its own), and
    // again of the one past the grace, whose work is then looked up.
    assert.deepEqual([...asked.values()], [20, 10, 10]);
    // Past the TTL, the session owning a run is swept, not evicted: room without an eviction.
    assert.equal(open(sessions, 10 * MIN + 1, 'flood').refusal, undefined);
    assert.deepEqual(ended, [running]);
  });

  it('at the global cap, makes no pass until a session can be past the grace', () => {
    let asked = 0;
    const ended: Session[] = [];
    const sessions = new SessionTable({
      max: 2,
      maxPerClient: 2,
      ttlMs: 30 * MIN,
      evictableAfterMs: 5 * MIN,
      busy: () => {
        asked++;
        return false;
      },
      onEnd: (session) => ended.push(session),
    });
    const stalest = open(sessions, 0, 'a').session;
    open(sessions, MIN, 'b');
    assert.equal(open(sessions, 2 * MIN, 'c').refusal?.retryAfterMs, 3 * MIN);
    assert.equal(asked, 2, 'one pass');
    for (let t = 2 * MIN; t < 5 * MIN; t += 10_000) {
      assert.deepEqual(open(sessions, t, 'c').refusal, {
        cap: 'server',
        limit: 2,
        retryAfterMs: 5 * MIN - t,
      });
    }
    assert.equal(asked, 2, 'no session could be evicted yet: no pass');
    assert.equal(open(sessions, 5 * MIN, 'c').refusal, undefined);
    assert.deepEqual(ended, [stalest]);
  });

  it('bounds that quiet by a session filed after the pass but made before it', () => {
    const { sessions, ended } = table({ max: 2, maxPerClient: 2 });
    // Admitted at 0, its initialize answered only after the refusal below.
    const slow = new Session({ now: 0, client: 'b' });
    assert.equal(sessions.admit(0, 'b'), undefined);
    open(sessions, MIN, 'a');
    assert.equal(open(sessions, 2 * MIN, 'c').refusal?.retryAfterMs, 4 * MIN);
    sessions.add(slow);
    assert.equal(open(sessions, 5 * MIN, 'c').refusal, undefined, 'the slow one is past the grace');
    assert.deepEqual(ended, [slow]);
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

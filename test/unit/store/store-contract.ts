/**
 * The one contract every `Store` implementation passes. Each implementation's test file calls
 * `storeContract` with a factory for fresh, empty stores; capability tests skip (with a reason)
 * when the store does not declare the capability.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { STORE_CAPABILITIES, type Store, storeCan } from '../../../src/store/index.js';

/** Keys every store must reject with `STORE_INVALID_KEY`, and why. */
export const HOSTILE_KEYS: readonly (readonly [string, string])[] = [
  ['', 'empty'],
  ['/etc/passwd', 'absolute'],
  ['../escape', 'parent segment'],
  ['a/../../escape', 'parent segment inside'],
  ['a/./b', 'dot segment'],
  ['a//b', 'empty segment'],
  ['a/', 'trailing slash'],
  ['a\0b', 'NUL'],
  ['a\nb', 'control character'],
  ['a\\..\\b', 'backslash'],
  ['.hidden', 'dot-prefixed segment'],
  ['a/.tmp-0123', 'temp-file name'],
  ['x'.repeat(1025), 'too long'],
  [`a/${'é'.repeat(128)}`, 'segment over 255 bytes'],
  ['a\uD800b', 'lone surrogate'],
];

function rejectsCode(code: string) {
  return (err: unknown) => {
    assert.equal((err as { code?: unknown }).code, code);
    return true;
  };
}

/** Registers the contract tests for the stores `open` makes. */
export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`${name}: Store contract`, () => {
    basics(open);
    listing(open);
    validation(open);
    concurrency(open);
    casContract(open);
    leaseContract(open);
    fenceContract(open);
    scanContract(open);
  });
}

function basics(open: () => Promise<Store>): void {
  it('returns undefined for an absent key', async () => {
    const store = await open();
    assert.equal(await store.get('nothing/here'), undefined);
  });

  it('round-trips values exactly: empty, unicode, JSON, 1 MiB', async () => {
    const store = await open();
    const values = [
      '',
      'héllo 🌍\n\ttabs "quotes" \\',
      JSON.stringify({ a: [1, 2] }),
      'z'.repeat(1 << 20),
    ];
    for (const [i, v] of values.entries()) {
      await store.put(`rt/${i}`, v);
      assert.equal(await store.get(`rt/${i}`), v);
    }
  });

  it('overwrites a value with a shorter one', async () => {
    const store = await open();
    await store.put('k', 'a long first value');
    await store.put('k', 'short');
    assert.equal(await store.get('k'), 'short');
  });

  it('deletes a key, and deleting an absent key is a no-op', async () => {
    const store = await open();
    await store.put('d/one', '1');
    await store.delete('d/one');
    assert.equal(await store.get('d/one'), undefined);
    await store.delete('d/one');
    await store.delete('never/was');
    await store.put('d/one', 'again');
    assert.equal(await store.get('d/one'), 'again');
  });

  it('keeps a key from being a parent of another key', async () => {
    const store = await open();
    await store.put('p/q', '1');
    await assert.rejects(store.put('p', '2'), rejectsCode('STORE_KEY_CONFLICT'));
    await store.put('leaf', '1');
    await assert.rejects(store.put('leaf/child', '2'), rejectsCode('STORE_KEY_CONFLICT'));
    assert.equal(await store.get('p'), undefined);
    assert.equal(await store.get('leaf/child'), undefined);
  });

  it('rejects an operation whose signal is already aborted, writing nothing', async () => {
    const store = await open();
    const signal = AbortSignal.abort();
    await assert.rejects(store.put('ab/k', 'v', { signal }), { name: 'AbortError' });
    await assert.rejects(store.get('ab/k', { signal }), { name: 'AbortError' });
    await assert.rejects(store.list('', { signal }), { name: 'AbortError' });
    assert.equal(await store.get('ab/k'), undefined);
  });

  it('refuses operations once closed', async () => {
    const store = await open();
    await store.close();
    await store.close();
    await assert.rejects(store.get('k'), rejectsCode('STORE_CLOSED'));
    await assert.rejects(store.put('k', 'v'), rejectsCode('STORE_CLOSED'));
  });

  it('declares exactly the capabilities whose members it has', async () => {
    const store = await open();
    for (const cap of STORE_CAPABILITIES) {
      assert.equal(store.capabilities.has(cap), store[cap] !== undefined, cap);
      assert.equal(storeCan(store, cap), store.capabilities.has(cap), cap);
    }
  });
}

function listing(open: () => Promise<Store>): void {
  it('lists keys by prefix, ascending, at any depth', async () => {
    const store = await open();
    const keys = [
      'state/b/P.json',
      'state/a/P.json',
      'state/a/loop-P.json',
      'state/P.latest',
      'other/x',
    ];
    for (const k of keys) await store.put(k, k);
    assert.deepEqual(await store.list('state/'), [
      'state/P.latest',
      'state/a/P.json',
      'state/a/loop-P.json',
      'state/b/P.json',
    ]);
    assert.deepEqual(await store.list('state/a/'), ['state/a/P.json', 'state/a/loop-P.json']);
    assert.deepEqual(await store.list('state/a'), ['state/a/P.json', 'state/a/loop-P.json']);
    assert.deepEqual(await store.list('state/P'), ['state/P.latest']);
    assert.deepEqual(await store.list('state/a/loop'), ['state/a/loop-P.json']);
    assert.deepEqual(await store.list(''), [...keys].sort());
    assert.deepEqual(await store.list('missing/'), []);
    assert.deepEqual(await store.list('other/x'), ['other/x']);
  });

  it('stops listing a key once deleted', async () => {
    const store = await open();
    await store.put('l/a/1', '1');
    await store.put('l/a/2', '2');
    await store.delete('l/a/1');
    assert.deepEqual(await store.list('l/'), ['l/a/2']);
    await store.delete('l/a/2');
    assert.deepEqual(await store.list('l/'), []);
    assert.deepEqual(await store.list(''), []);
  });
}

function validation(open: () => Promise<Store>): void {
  it('rejects hostile keys with STORE_INVALID_KEY on every operation', async () => {
    const store = await open();
    for (const [key, why] of HOSTILE_KEYS) {
      const code = rejectsCode('STORE_INVALID_KEY');
      await assert.rejects(store.get(key), code, why);
      await assert.rejects(store.put(key, 'v'), code, why);
      await assert.rejects(store.delete(key), code, why);
    }
    assert.deepEqual(await store.list(''), []);
  });

  it('rejects hostile list prefixes', async () => {
    const store = await open();
    for (const prefix of ['../', '/', '/etc', 'a//', '..', 'a/../', 'a\0']) {
      await assert.rejects(store.list(prefix), rejectsCode('STORE_INVALID_KEY'), prefix);
    }
  });

  it('rejects a value that is not well-formed Unicode', async () => {
    const store = await open();
    await assert.rejects(store.put('v', 'bad \uDC00 half'), rejectsCode('STORE_INVALID_VALUE'));
    assert.equal(await store.get('v'), undefined);
  });
}

function concurrency(open: () => Promise<Store>): void {
  it('ends concurrent puts to one key with one complete value', async () => {
    const store = await open();
    const values = Array.from({ length: 40 }, (_, i) =>
      `${i}:`.padEnd(64 * 1024 + i * 7, String(i % 10)),
    );
    await Promise.all(values.map((v) => store.put('race/key', v)));
    const final = await store.get('race/key');
    assert.ok(
      final !== undefined && values.includes(final),
      'final value is one of the written values',
    );
  });

  it('keeps puts working while sibling deletes empty their directory', async () => {
    const store = await open();
    const ops: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      ops.push(store.put(`prune/s${i % 5}/k${i}`, String(i)));
      ops.push(store.delete(`prune/s${i % 5}/k${i - 1}`));
    }
    await Promise.all(ops);
    const left = await store.list('prune/');
    for (const key of left) assert.ok((await store.get(key)) !== undefined, key);
  });
}

function casContract(open: () => Promise<Store>): void {
  it('cas: putIfAbsent writes once, compareAndSwap needs the current version', async (t) => {
    const store = await open();
    if (!storeCan(store, 'cas')) return t.skip('store has no cas capability');
    const v1 = await store.cas.putIfAbsent('run/1/lock', 'a');
    assert.equal(typeof v1, 'string');
    assert.equal(await store.cas.putIfAbsent('run/1/lock', 'b'), undefined);
    assert.deepEqual(await store.cas.getVersioned('run/1/lock'), { value: 'a', version: v1 });
    const v2 = await store.cas.compareAndSwap('run/1/lock', v1 as string, 'c');
    assert.ok(v2 !== undefined && v2 !== v1);
    assert.equal(await store.cas.compareAndSwap('run/1/lock', v1 as string, 'd'), undefined);
    assert.equal(await store.get('run/1/lock'), 'c');
    await store.put('run/1/lock', 'e');
    assert.equal(await store.cas.compareAndSwap('run/1/lock', v2 as string, 'f'), undefined);
    assert.equal(await store.cas.compareAndSwap('run/absent', v2 as string, 'g'), undefined);
    assert.equal(await store.cas.getVersioned('run/absent'), undefined);
    await store.delete('run/1/lock');
    assert.equal(typeof (await store.cas.putIfAbsent('run/1/lock', 'h')), 'string');
  });

  it('cas: exactly one of many concurrent swaps from one version wins', async (t) => {
    const store = await open();
    if (!storeCan(store, 'cas')) return t.skip('store has no cas capability');
    const v = (await store.cas.putIfAbsent('lock', 'start')) as string;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.cas.compareAndSwap('lock', v, `w${i}`)),
    );
    const winners = results.filter((r) => r !== undefined);
    assert.equal(winners.length, 1);
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.cas.putIfAbsent('fresh', `${i}`)),
    );
    assert.equal(claims.filter((r) => r !== undefined).length, 1);
  });

  it('cas: validates keys like every other operation', async (t) => {
    const store = await open();
    if (!storeCan(store, 'cas')) return t.skip('store has no cas capability');
    await assert.rejects(store.cas.putIfAbsent('../x', 'v'), rejectsCode('STORE_INVALID_KEY'));
    await assert.rejects(
      store.cas.compareAndSwap('/x', '1', 'v'),
      rejectsCode('STORE_INVALID_KEY'),
    );
  });
}

/** Resolves once the lease of `runId` is no longer live, as the store's own clock judges. */
async function lapse(store: Store, runId: string): Promise<void> {
  if (!storeCan(store, 'lease')) return;
  for (;;) {
    const state = await store.lease.read(runId);
    if (state === undefined || !state.live) return;
    await new Promise((done) => setTimeout(done, 20));
  }
}

function leaseContract(open: () => Promise<Store>): void {
  it('lease: one holder at a time, renewed and released only by its token', async (t) => {
    const store = await open();
    if (!storeCan(store, 'lease')) return t.skip('store has no lease capability');
    const a = await store.lease.acquire('r1', 'replica-a', 30_000);
    assert.ok(a && a.holder === 'replica-a' && /^[0-9a-f]{32}$/.test(a.token));
    assert.equal(await store.lease.acquire('r1', 'replica-b', 30_000), undefined);
    assert.equal(
      await store.lease.acquire('r1', 'replica-a', 30_000),
      undefined,
      'even its holder',
    );
    const state = await store.lease.read('r1');
    assert.equal(state?.holder, 'replica-a');
    assert.equal(state?.live, true);
    const forged = { runId: 'r1', token: 'f'.repeat(32) };
    assert.equal(await store.lease.renew(forged, 30_000), undefined);
    assert.equal(await store.lease.release(forged), false);
    const renewed = await store.lease.renew(a, 60_000);
    assert.ok(renewed && renewed.expiresAt >= a.expiresAt && renewed.token === a.token);
    assert.equal(await store.lease.release(a), true);
    assert.equal(await store.lease.release(a), false);
    assert.equal(await store.lease.read('r1'), undefined);
    const b = await store.lease.acquire('r1', 'replica-b', 30_000);
    assert.ok(b && b.token !== a.token);
  });

  it('lease: a lapsed lease is taken over with a fresh token the old one cannot touch', async (t) => {
    const store = await open();
    if (!storeCan(store, 'lease')) return t.skip('store has no lease capability');
    const a = await store.lease.acquire('r2', 'replica-a', 150);
    assert.ok(a);
    await lapse(store, 'r2');
    assert.equal((await store.lease.read('r2'))?.live, false);
    assert.equal(await store.lease.renew(a, 30_000), undefined, 'a lapsed lease is not renewed');
    const b = await store.lease.acquire('r2', 'replica-b', 30_000);
    assert.ok(b && b.token !== a.token);
    assert.equal(await store.lease.release(a), false);
    assert.equal(await store.lease.renew(a, 30_000), undefined);
    assert.equal((await store.lease.read('r2'))?.holder, 'replica-b');
  });

  it('lease: exactly one of many concurrent acquisitions wins', async (t) => {
    const store = await open();
    if (!storeCan(store, 'lease')) return t.skip('store has no lease capability');
    const won = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.lease.acquire('race', `replica-${i}`, 30_000)),
    );
    assert.equal(won.filter((l) => l !== undefined).length, 1);
  });
}

function fenceContract(open: () => Promise<Store>): void {
  it('fence: writes land while the lease is held, and never after a takeover', async (t) => {
    const store = await open();
    if (!storeCan(store, 'fence') || !storeCan(store, 'lease')) {
      return t.skip('store has no fence and lease capabilities');
    }
    const a = await store.lease.acquire('f1', 'replica-a', 150);
    assert.ok(a);
    assert.equal(await store.fence.putFenced('run/f1/cp', 'a1', a), true);
    assert.equal(await store.get('run/f1/cp'), 'a1');
    await lapse(store, 'f1');
    assert.equal(await store.fence.putFenced('run/f1/cp', 'late', a), false, 'lapsed');
    const b = await store.lease.acquire('f1', 'replica-b', 30_000);
    assert.ok(b);
    assert.equal(await store.fence.putFenced('run/f1/cp', 'stale', a), false);
    assert.equal(await store.fence.deleteFenced('run/f1/cp', a), false);
    assert.equal(await store.get('run/f1/cp'), 'a1');
    assert.equal(await store.fence.putFenced('run/f1/cp', 'b1', b), true);
    assert.equal(await store.fence.deleteFenced('run/f1/cp', b), true);
    assert.equal(await store.get('run/f1/cp'), undefined);
  });

  it('fence: a batch lands whole or not at all', async (t) => {
    const store = await open();
    if (!storeCan(store, 'fence') || !storeCan(store, 'lease')) {
      return t.skip('store has no fence and lease capabilities');
    }
    const a = await store.lease.acquire('f2', 'replica-a', 30_000);
    assert.ok(a);
    await store.put('run/f2/old', 'x');
    const writes = [
      { key: 'run/f2/status', value: '{"state":"completed"}' },
      { key: 'run/f2/old', value: undefined },
    ];
    assert.equal(await store.fence.writeFenced(writes, a), true);
    assert.equal(await store.get('run/f2/status'), '{"state":"completed"}');
    assert.equal(await store.get('run/f2/old'), undefined);
    await store.lease.release(a);
    assert.equal(
      await store.fence.writeFenced([{ key: 'run/f2/status', value: 'late' }], a),
      false,
    );
    assert.equal(await store.get('run/f2/status'), '{"state":"completed"}');
    const b = await store.lease.acquire('f2', 'replica-b', 30_000);
    assert.ok(b);
    await assert.rejects(
      store.fence.writeFenced(
        [
          { key: 'run/f2/ok', value: '1' },
          { key: 'run/f2/status/child', value: '2' },
        ],
        b,
      ),
      rejectsCode('STORE_KEY_CONFLICT'),
    );
    assert.equal(await store.get('run/f2/ok'), undefined, 'the first write was rolled back');
    await assert.rejects(store.fence.putFenced('../x', 'v', b), rejectsCode('STORE_INVALID_KEY'));
  });
}

function scanContract(open: () => Promise<Store>): void {
  const record = (state: string, owner: string) => JSON.stringify({ state, owner, n: 1 });

  it('scan: filters by prefix, suffix and fields, in pages ascending by key', async (t) => {
    const store = await open();
    if (!storeCan(store, 'scan')) return t.skip('store has no scan capability');
    await store.put('state/a/mhl-run.json', record('completed', 'o1'));
    await store.put('state/a/P.json', record('completed', 'o1'));
    await store.put('state/b/mhl-run.json', record('working', 'o1'));
    await store.put('state/c/mhl-run.json', record('failed', 'o2'));
    await store.put('state/d/mhl-run.json', 'not json {');
    await store.put('other/e/mhl-run.json', record('completed', 'o1'));
    const base = { prefix: 'state/', suffix: '/mhl-run.json' };
    const terminal = await store.scan.scan({ ...base, where: { state: ['completed', 'failed'] } });
    assert.deepEqual(
      terminal.entries.map((e) => e.key),
      ['state/a/mhl-run.json', 'state/c/mhl-run.json'],
    );
    assert.equal(terminal.next, undefined);
    const mine = await store.scan.scan({ ...base, where: { owner: 'o1', n: 1 } });
    assert.deepEqual(
      mine.entries.map((e) => e.key),
      ['state/a/mhl-run.json', 'state/b/mhl-run.json'],
    );
    const first = await store.scan.scan({ ...base, limit: 2 });
    assert.equal(first.entries.length, 2);
    assert.ok(first.next !== undefined);
    const second = await store.scan.scan({ ...base, limit: 2, after: first.next });
    assert.deepEqual(
      second.entries.map((e) => e.key),
      ['state/c/mhl-run.json', 'state/d/mhl-run.json'],
    );
    assert.equal(await store.scan.count({ ...base, where: { owner: 'o1' } }), 2);
    const future = Date.now() + 3_600_000;
    assert.equal(await store.scan.count({ ...base, updatedBefore: future }), 4);
    assert.equal(await store.scan.count({ ...base, updatedBefore: 0 }), 0);
  });

  it('scan: purge deletes matches with their siblings, in bounded batches', async (t) => {
    const store = await open();
    if (!storeCan(store, 'scan')) return t.skip('store has no scan capability');
    for (let i = 0; i < 5; i++) {
      await store.put(`state/r${i}/mhl-run.json`, record(i < 4 ? 'completed' : 'paused', 'o'));
      await store.put(`state/r${i}/P.json`, '{}');
    }
    await store.put('state/r0x/keep.json', '{}');
    const query = {
      prefix: 'state/',
      suffix: '/mhl-run.json',
      where: { state: ['completed', 'failed', 'canceled'] },
      limit: 3,
    };
    assert.equal((await store.scan.purge(query)).length, 3);
    assert.deepEqual(await store.scan.purge(query), ['state/r3/mhl-run.json']);
    assert.deepEqual(await store.scan.purge(query), []);
    assert.deepEqual(await store.list('state/'), [
      'state/r0x/keep.json',
      'state/r4/P.json',
      'state/r4/mhl-run.json',
    ]);
  });
}

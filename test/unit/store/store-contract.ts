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

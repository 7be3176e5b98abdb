/**
 * Property: a pack made by the real `mhl pack`, with its bytes flipped, overwritten, cut,
 * extended, spliced or its entries reordered, is refused by the function `mhl serve mcp
 * --workflows-pack` loads packs with: a `PackError` with one of the documented codes, at once —
 * never another exception, never a hang, never a load. The one documented way a changed pack
 * still loads (docs/pack.md: drop whole trailing entries and lower the count to match) is
 * recognised and allowed; anything else that loads is a failure.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { loadPackCatalog } from '../../src/catalog/index.js';
import { HEADER_BYTES, NONCE_BYTES, PACK_ERROR_CODES, PackError } from '../../src/pack/index.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';

const FIXTURE = resolve(REPO_ROOT, 'test/fixtures/pack');
const KEY = '5eed'.repeat(16);
const ROOT = '/srv/workflows';
const CODES = new Set<string>(Object.values(PACK_ERROR_CODES));
/** Loading a pack of a few KiB is sub-millisecond; anything near this is a hang in the making. */
const LOAD_MS = 1000;

let PACK = Buffer.alloc(0);
/** [start, end) of each entry (nonce · length · sealed bytes) in PACK. */
const ENTRIES: [number, number][] = [];

before(async () => {
  const out = join(tempDir(), 'fuzz.dmpk');
  const made = await runCli(['pack', FIXTURE, '-o', out], {
    env: { MHL_SERVE_WORKFLOWS_KEY: KEY },
  });
  assert.equal(made.code, 0, made.stderr);
  PACK = readFileSync(out);
  for (let at = HEADER_BYTES; at < PACK.length; ) {
    const end = at + NONCE_BYTES + 4 + PACK.readUInt32LE(at + NONCE_BYTES);
    ENTRIES.push([at, end]);
    at = end;
  }
  assert.ok(ENTRIES.length >= 3, 'the fixture packs into several entries');
});

type Mutation =
  | { kind: 'flip'; at: number; mask: number }
  | { kind: 'overwrite'; at: number; bytes: Uint8Array }
  | { kind: 'truncate'; at: number }
  | { kind: 'extend'; bytes: Uint8Array }
  | { kind: 'splice'; at: number; bytes: Uint8Array }
  | { kind: 'swap'; a: number; b: number }
  | { kind: 'count'; value: number };

const where = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const junk = fc.uint8Array({ minLength: 1, maxLength: 32 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: where,
    mask: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({ kind: fc.constant('overwrite' as const), at: where, bytes: junk }),
  fc.record({ kind: fc.constant('truncate' as const), at: where }),
  fc.record({ kind: fc.constant('extend' as const), bytes: junk }),
  fc.record({ kind: fc.constant('splice' as const), at: where, bytes: junk }),
  fc.record({ kind: fc.constant('swap' as const), a: where, b: where }),
  fc.record({
    kind: fc.constant('count' as const),
    value: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constant(0xffffffff)),
  }),
);

function apply(pack: Buffer, m: Mutation): Buffer {
  const at = (f: number) => Math.floor(f * pack.length);
  switch (m.kind) {
    case 'flip': {
      const copy = Buffer.from(pack);
      if (copy.length > 0) copy[at(m.at)] = (copy[at(m.at)] as number) ^ m.mask;
      return copy;
    }
    case 'overwrite': {
      const copy = Buffer.from(pack);
      copy.set(m.bytes.subarray(0, copy.length - at(m.at)), at(m.at));
      return copy;
    }
    case 'truncate':
      return pack.subarray(0, at(m.at));
    case 'extend':
      return Buffer.concat([pack, m.bytes]);
    case 'splice':
      return Buffer.concat([pack.subarray(0, at(m.at)), m.bytes, pack.subarray(at(m.at))]);
    case 'swap': {
      // Whole entries of the original pack, in another order: each still authenticates alone.
      const order = ENTRIES.map((_, i) => i);
      const a = Math.floor(m.a * order.length);
      const b = Math.floor(m.b * order.length);
      [order[a], order[b]] = [order[b] as number, order[a] as number];
      const header = PACK.subarray(0, HEADER_BYTES);
      return Buffer.concat([
        header,
        ...order.map((i) => PACK.subarray(...(ENTRIES[i] as [number, number]))),
      ]);
    }
    case 'count': {
      const copy = Buffer.from(pack);
      if (copy.length >= HEADER_BYTES) copy.writeUInt32LE(m.value, 8);
      return copy;
    }
  }
}

/** The documented way a changed pack loads: trailing entries dropped, the count lowered to match. */
function droppedTrailingEntries(bytes: Buffer): boolean {
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, 8).equals(PACK.subarray(0, 8)))
    return false;
  const count = bytes.readUInt32LE(8);
  if (count >= ENTRIES.length) return false;
  const end = count === 0 ? HEADER_BYTES : (ENTRIES[count - 1] as [number, number])[1];
  return bytes.subarray(HEADER_BYTES).equals(PACK.subarray(HEADER_BYTES, end));
}

describe('loadPackCatalog on mutated packs', () => {
  it('loads the untouched pack', () => {
    assert.equal(loadPackCatalog(PACK, Buffer.from(KEY, 'hex'), ROOT).ok, true);
  });

  it('refuses every other pack with a documented code, at once', async (t) => {
    const key = Buffer.from(KEY, 'hex');
    const mutants = fc.oneof(
      {
        weight: 9,
        arbitrary: fc
          .array(mutation, { minLength: 1, maxLength: 4 })
          .map((ms) => ms.reduce(apply, PACK)),
      },
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)) },
    );
    await holds(
      t,
      fc.property(mutants, (bytes) => {
        const started = performance.now();
        let loaded = false;
        try {
          loaded = loadPackCatalog(bytes, key, ROOT).ok !== undefined;
        } catch (e) {
          assert.ok(e instanceof PackError, `not a PackError: ${(e as Error)?.stack ?? String(e)}`);
          assert.ok(CODES.has(e.code), `undocumented code ${e.code}`);
        }
        const elapsed = performance.now() - started;
        assert.ok(elapsed < LOAD_MS, `took ${elapsed.toFixed(0)} ms`);
        if (loaded) {
          assert.ok(
            bytes.equals(PACK) || droppedTrailingEntries(bytes),
            `a changed pack loaded (${bytes.length} bytes, count ${bytes.readUInt32LE(8)})`,
          );
        }
      }),
      500,
    );
  });
});

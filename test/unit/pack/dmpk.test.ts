import assert from 'node:assert/strict';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  decodePack,
  encodePack,
  PACK_ERROR_CODES,
  type PackEntry,
  PackError,
} from '../../../src/pack/index.js';

const KEY = Buffer.alloc(32, 7);
const text = (s: string) => Buffer.from(s, 'utf8');
const ENTRIES: PackEntry[] = [
  { path: 'a.mh', content: text('pipeline A { step S { log("a") } }\n') },
  { path: 'lib/b.txt', content: text('bee') },
];

/** Seals one entry by the wording alone, independently of the module under test. */
function seal(index: number, plaintext: Buffer, key = KEY): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: 16 });
  const aad = Buffer.alloc(4);
  aad.writeUInt32LE(index);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(body.length);
  return Buffer.concat([nonce, length, body]);
}

function plaintextOf(path: string | Buffer, content: string): Buffer {
  const p = typeof path === 'string' ? text(path) : path;
  const head = Buffer.alloc(2);
  head.writeUInt16LE(p.length);
  return Buffer.concat([head, p, text(content)]);
}

function packOf(count: number, entries: readonly Buffer[]): Buffer {
  const header = Buffer.from([0x44, 0x4d, 0x50, 0x4b, 2, 0, 0, 0, 0, 0, 0, 0]);
  header.writeUInt32LE(count, 8);
  return Buffer.concat([header, ...entries]);
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof PackError, `expected a PackError, got ${String(e)}`);
    return e.code;
  }
  assert.fail('expected the pack to be refused');
}

const decoded = (entries: readonly PackEntry[]) =>
  entries.map((e) => [e.path, Buffer.from(e.content).toString('utf8')]);

describe('encodePack / decodePack', () => {
  it('round-trips paths and contents in order', () => {
    const pack = encodePack(ENTRIES, KEY);
    assert.deepEqual(decoded(decodePack(pack, KEY)), decoded(ENTRIES));
  });

  it('writes the documented layout: header, then nonce, u32 LE length, sealed entry', () => {
    const pack = encodePack(ENTRIES, KEY);
    assert.deepEqual([...pack.subarray(0, 12)], [0x44, 0x4d, 0x50, 0x4b, 2, 0, 0, 0, 2, 0, 0, 0]);
    let offset = 12;
    for (const [index, entry] of ENTRIES.entries()) {
      const nonce = pack.subarray(offset, offset + 12);
      const length = pack.readUInt32LE(offset + 12);
      const sealed = pack.subarray(offset + 16, offset + 16 + length);
      const decipher = createDecipheriv('aes-256-gcm', KEY, nonce, { authTagLength: 16 });
      const aad = Buffer.alloc(4);
      aad.writeUInt32LE(index);
      decipher.setAAD(aad);
      decipher.setAuthTag(sealed.subarray(length - 16));
      const plain = Buffer.concat([
        decipher.update(sealed.subarray(0, length - 16)),
        decipher.final(),
      ]);
      assert.deepEqual(plain, plaintextOf(entry.path, Buffer.from(entry.content).toString()));
      offset += 16 + length;
    }
    assert.equal(offset, pack.length);
  });

  it('decodes a pack sealed by an independent implementation of the format', () => {
    const pack = packOf(2, [seal(0, plaintextOf('x.mh', 'one')), seal(1, plaintextOf('y', 'two'))]);
    assert.deepEqual(decoded(decodePack(pack, KEY)), [
      ['x.mh', 'one'],
      ['y', 'two'],
    ]);
  });

  it('draws a fresh nonce for every entry', () => {
    const one = encodePack(ENTRIES, KEY);
    const two = encodePack(ENTRIES, KEY);
    assert.notDeepEqual(one.subarray(12, 24), two.subarray(12, 24));
  });

  it('decodes an empty pack to no entries', () => {
    assert.deepEqual(decodePack(encodePack([], KEY), KEY), []);
  });

  it('refuses a wrong key at entry 0 without saying more than that', () => {
    const pack = encodePack(ENTRIES, KEY);
    const wrong = Buffer.alloc(32, 8);
    assert.equal(
      codeOf(() => decodePack(pack, wrong)),
      PACK_ERROR_CODES.AUTH_FAILED,
    );
    try {
      decodePack(pack, wrong);
    } catch (e) {
      assert.equal((e as PackError).entry, 0);
      assert.doesNotMatch((e as Error).message, /0808|0707/);
    }
  });

  it('refuses entries in another order (the index is authenticated)', () => {
    const a = seal(0, plaintextOf('a', '1'));
    const b = seal(1, plaintextOf('b', '2'));
    assert.equal(
      codeOf(() => decodePack(packOf(2, [b, a]), KEY)),
      PACK_ERROR_CODES.AUTH_FAILED,
    );
  });

  it('refuses a tag cut short, even with the length adjusted to match', () => {
    const whole = seal(0, plaintextOf('a', 'content'));
    const cut = Buffer.from(whole.subarray(0, whole.length - 4));
    cut.writeUInt32LE(cut.length - 16, 12);
    assert.equal(
      codeOf(() => decodePack(packOf(1, [cut]), KEY)),
      PACK_ERROR_CODES.AUTH_FAILED,
    );
  });

  it('refuses a repeated path, naming both entries', () => {
    const pack = packOf(2, [seal(0, plaintextOf('a', '1')), seal(1, plaintextOf('a', '2'))]);
    assert.equal(
      codeOf(() => decodePack(pack, KEY)),
      PACK_ERROR_CODES.DUPLICATE_PATH,
    );
    assert.throws(() => decodePack(pack, KEY), /entry 1 repeats the path "a" of entry 0/);
    const twice = [...ENTRIES, ...ENTRIES];
    assert.equal(
      codeOf(() => decodePack(encodePack(twice, KEY), KEY)),
      PACK_ERROR_CODES.DUPLICATE_PATH,
    );
  });

  it('refuses a count that does not match the entries present', () => {
    const entries = [seal(0, plaintextOf('a', '1')), seal(1, plaintextOf('b', '2'))];
    assert.equal(
      codeOf(() => decodePack(packOf(1, entries), KEY)),
      PACK_ERROR_CODES.COUNT_MISMATCH,
    );
    assert.equal(
      codeOf(() => decodePack(packOf(0, entries), KEY)),
      PACK_ERROR_CODES.COUNT_MISMATCH,
    );
    assert.equal(
      codeOf(() => decodePack(packOf(3, entries), KEY)),
      PACK_ERROR_CODES.TRUNCATED,
    );
    assert.equal(
      codeOf(() => decodePack(packOf(0xffffffff, entries), KEY)),
      PACK_ERROR_CODES.TRUNCATED,
    );
  });

  it('refuses paths that could leave the root or mean different files', () => {
    const bad = [
      '',
      '/etc/passwd',
      '../up',
      'a/../b',
      'a//b',
      './a',
      'a/',
      'a\\b',
      'nul\0',
      'tab\t',
    ];
    for (const path of bad) {
      const pack = packOf(1, [seal(0, plaintextOf(path, 'x'))]);
      assert.equal(
        codeOf(() => decodePack(pack, KEY)),
        PACK_ERROR_CODES.BAD_PATH,
        path,
      );
      assert.equal(
        codeOf(() => encodePack([{ path, content: text('x') }], KEY)),
        PACK_ERROR_CODES.BAD_PATH,
        path,
      );
    }
    const notUtf8 = packOf(1, [seal(0, plaintextOf(Buffer.from([0x61, 0xff]), 'x'))]);
    assert.equal(
      codeOf(() => decodePack(notUtf8, KEY)),
      PACK_ERROR_CODES.BAD_PATH,
    );
  });

  it('refuses an entry whose path length runs past its plaintext, or too short to hold one', () => {
    const head = Buffer.alloc(2);
    head.writeUInt16LE(50);
    const long = packOf(1, [seal(0, Buffer.concat([head, text('short')]))]);
    assert.equal(
      codeOf(() => decodePack(long, KEY)),
      PACK_ERROR_CODES.BAD_ENTRY,
    );
    const tiny = Buffer.concat([randomBytes(12), Buffer.from([17, 0, 0, 0]), randomBytes(17)]);
    assert.equal(
      codeOf(() => decodePack(packOf(1, [tiny]), KEY)),
      PACK_ERROR_CODES.BAD_ENTRY,
    );
  });

  it('refuses a wrong magic, version or reserved byte with its own code', () => {
    const pack = encodePack(ENTRIES, KEY);
    const edit = (at: number, value: number) => {
      const copy = Buffer.from(pack);
      copy[at] = value;
      return codeOf(() => decodePack(copy, KEY));
    };
    assert.equal(edit(0, 0x58), PACK_ERROR_CODES.BAD_MAGIC);
    assert.equal(edit(4, 1), PACK_ERROR_CODES.UNSUPPORTED_VERSION);
    assert.equal(edit(4, 3), PACK_ERROR_CODES.UNSUPPORTED_VERSION);
    assert.equal(edit(7, 1), PACK_ERROR_CODES.BAD_HEADER);
  });

  it('refuses a key that is not 32 bytes', () => {
    assert.equal(
      codeOf(() => decodePack(encodePack([], KEY), Buffer.alloc(16))),
      PACK_ERROR_CODES.KEY_MALFORMED,
    );
    assert.equal(
      codeOf(() => encodePack([], Buffer.alloc(31))),
      PACK_ERROR_CODES.KEY_MALFORMED,
    );
  });
});

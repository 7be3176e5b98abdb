// Every single-byte change and every truncation of a small pack is refused by the function
// `mhl serve mcp --workflows-pack` loads packs with, before any workflow is built. The e2e test
// (test/e2e/pack.test.ts) spawns the real server for a sample of these.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadPackCatalog } from '../../../src/catalog/index.js';
import {
  encodePack,
  HEADER_BYTES,
  NONCE_BYTES,
  PACK_ERROR_CODES,
  PackError,
} from '../../../src/pack/index.js';

const KEY = Buffer.alloc(32, 3);
const ROOT = '/srv/workflows';
const PACK = encodePack(
  [
    { path: 'a.mh', content: Buffer.from('pipeline A {\n  step S { log("a") }\n}\n') },
    { path: 'b.txt', content: Buffer.from('b') },
  ],
  KEY,
);

/** The refusal's code, or a failed assertion when the variant loads. */
function refusal(bytes: Buffer, what: string): string {
  try {
    loadPackCatalog(bytes, KEY, ROOT);
  } catch (e) {
    assert.ok(e instanceof PackError, `${what}: expected a PackError, got ${String(e)}`);
    return e.code;
  }
  assert.fail(`${what}: the tampered pack loaded`);
}

/** Which codes a change at byte `at` may produce, by the field it falls in. */
function expectedCodes(at: number): readonly string[] {
  if (at < 4) return [PACK_ERROR_CODES.BAD_MAGIC];
  if (at === 4) return [PACK_ERROR_CODES.UNSUPPORTED_VERSION];
  if (at < 8) return [PACK_ERROR_CODES.BAD_HEADER];
  if (at < HEADER_BYTES) return [PACK_ERROR_CODES.TRUNCATED, PACK_ERROR_CODES.COUNT_MISMATCH];
  let offset = HEADER_BYTES;
  while (offset < PACK.length) {
    const length = PACK.readUInt32LE(offset + NONCE_BYTES);
    const lengthAt = offset + NONCE_BYTES;
    if (at >= lengthAt && at < lengthAt + 4) {
      return [PACK_ERROR_CODES.TRUNCATED, PACK_ERROR_CODES.AUTH_FAILED, PACK_ERROR_CODES.BAD_ENTRY];
    }
    offset += NONCE_BYTES + 4 + length;
    if (at < offset) return [PACK_ERROR_CODES.AUTH_FAILED];
  }
  throw new Error(`byte ${at} is past the pack`);
}

describe('loadPackCatalog on a tampered pack', () => {
  it('loads the untouched pack', () => {
    const loaded = loadPackCatalog(PACK, KEY, ROOT);
    assert.equal(loaded.ok, true);
  });

  it('refuses every byte flipped, one at a time, with the code of the field it is in', () => {
    for (let at = 0; at < PACK.length; at++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const copy = Buffer.from(PACK);
        copy[at] = (copy[at] as number) ^ mask;
        const code = refusal(copy, `byte ${at} ^ ${mask}`);
        assert.ok(expectedCodes(at).includes(code), `byte ${at} ^ ${mask}: ${code}`);
      }
    }
  });

  it('refuses the pack truncated at every length as truncated', () => {
    for (let length = 0; length < PACK.length; length++) {
      assert.equal(
        refusal(PACK.subarray(0, length), `length ${length}`),
        PACK_ERROR_CODES.TRUNCATED,
      );
    }
  });

  it('refuses the pack with any bytes appended as a count mismatch', () => {
    for (const extra of [Buffer.alloc(1), Buffer.alloc(16), PACK.subarray(HEADER_BYTES)]) {
      const longer = Buffer.concat([PACK, extra]);
      assert.equal(refusal(longer, `+${extra.length}`), PACK_ERROR_CODES.COUNT_MISMATCH);
    }
  });
});

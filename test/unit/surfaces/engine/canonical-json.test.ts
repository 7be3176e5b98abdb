/**
 * RFC 8785 canonical JSON: the RFC's own examples (§3.2.2 numbers and strings, §3.2.3 member
 * order by UTF-16 code units) and the values JSON cannot carry, refused rather than dropped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalDigest, canonicalJson } from '../../../../src/surfaces/engine/canonical-json.js';

describe('canonicalJson', () => {
  it('writes numbers as RFC 8785 §3.2.2.3 does', () => {
    const table: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1e30, '1e+30'],
      [4.5, '4.5'],
      [0.002, '0.002'],
      [1e-7, '1e-7'],
      [333333333.3333333, '333333333.3333333'],
      [1e21, '1e+21'],
      [1e20, '100000000000000000000'],
      [Number.MAX_SAFE_INTEGER, '9007199254740991'],
      [-1.5e-300, '-1.5e-300'],
    ];
    for (const [value, text] of table) assert.equal(canonicalJson(value), text, String(value));
  });

  it('escapes strings minimally, with lower-case hex', () => {
    assert.equal(
      canonicalJson('\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/'),
      '"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"',
    );
  });

  it('sorts members by UTF-16 code units, recursively, without whitespace', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read as text: a parsed object would put the integer-like key "1" first again.
    const text = canonicalJson(value);
    const order = Object.keys(value).sort(
      (a, b) => text.indexOf(`"${a}"`) - text.indexOf(`"${b}"`),
    );
    assert.deepEqual(order, ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    assert.ok(text.startsWith('{"\\r":"Carriage Return","1":"One",'));
    assert.equal(
      canonicalJson({ b: [1, { d: true, c: null }], a: 'x' }),
      '{"a":"x","b":[1,{"c":null,"d":true}]}',
    );
  });

  it('refuses what JSON cannot carry', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, { a: undefined }, [() => 1], 1n]) {
      assert.throws(() => canonicalJson(bad), TypeError);
    }
  });

  it('digests equal values equally, whatever their key order', () => {
    assert.equal(canonicalDigest({ a: 1, b: 2 }), canonicalDigest({ b: 2, a: 1 }));
    assert.match(canonicalDigest({}), /^[0-9a-f]{64}$/);
  });
});

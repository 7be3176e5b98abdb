/**
 * Value methods (spec: mhl-language.md §7.10): every method on strings, arrays and objects, all
 * non-mutating; string sizes and offsets in UTF-8 bytes; callbacks that must return bools.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { raises, value } from './harness.js';

describe('value methods: any value', () => {
  const table: [string, unknown][] = [
    ['"héllo".size()', 6],
    ['"".size()', 0],
    ['[1, [2, 3]].size()', 2],
    ['{a: 1, b: 2}.size()', 2],
    [
      '["".is_empty(), "é".is_empty(), [].is_empty(), [0].is_empty(), {}.is_empty()]',
      [true, false, true, false, true],
    ],
    [
      '[{a: 1}.equals({a: 1}), [1].deep_equal([1, 2]), 1.equals(1), "1".equals(1)]',
      [true, false, true, false],
    ],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src), expected));
  }
});

describe('value methods: strings', () => {
  const table: [string, unknown][] = [
    ['"a,b,,c".split(",")', ['a', 'b', '', 'c']],
    ['"aXbXc".replace("X", "-")', 'a-b-c'],
    ['["abc".contains("b"), "abc".contains("d")]', [true, false]],
    ['["abc".starts_with("ab"), "abc".starts_with("b")]', [true, false]],
    ['["abc".ends_with("bc"), "abc".ends_with("b")]', [true, false]],
    // matches is a whole-string match.
    [
      '["abc123".matches("[a-z]+[0-9]+"), "abc123".matches("[a-z]+"), "abc".matches("b")]',
      [true, false, false],
    ],
    ['"  x y \\n".trim()', 'x y'],
    ['"aBc".to_upper()', 'ABC'],
    ['"aBc".to_lower()', 'abc'],
    // substring takes byte offsets, half-open.
    ['"hello".substring(1, 3)', 'el'],
    ['"héllo".substring(0, 3)', 'hé'],
    ['"héllo".substring(3, 6)', 'llo'],
    ['"hello".substring(2, 2)', ''],
    ['"keep <!--a-->mid<!--b--> end".remove_content("<!--a-->", "<!--b-->")', 'keep  end'],
    ['"no markers".remove_content("<", ">")', 'no markers'],
    ['"pre BEGIN inner END post".extract_content("BEGIN", "END")', ' inner '],
    ['s.replace("a", "b")', 'b'],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src, 'var s = "a"'), expected));
  }

  it('leaves the receiver unchanged', async () => {
    assert.deepEqual(
      await value('[s, t]', 'var s = "aXa" var t = s.replace("a", "b").to_upper()'),
      ['aXa', 'BXB'],
    );
  });

  const errors: [string, number][] = [
    ['"abc".substring(1, 9)', 0],
    ['"abc".substring(2, 1)', 0],
    ['"abc".substring(-1, 2)', 0],
    ['"abc".split(1)', 0],
    ['"abc".no_such_method()', 0],
  ];
  for (const [src, offset] of errors) {
    it(`raises for ${src}`, async () => {
      assert.deepEqual(await raises(src), { kind: 'step_failed', step: 'S', offset });
    });
  }
});

describe('value methods: arrays', () => {
  const table: [string, unknown][] = [
    ['[1, 2, 3].get_index(1)', 2],
    ['[[1, 2], [3]].index_of([3])', 1],
    ['[1, 2].index_of(3)', -1],
    ['[{a: [1]}].contains({a: [1]})', true],
    ['[1, 2].contains("1")', false],
    ['[1, 2, 3, 4].filter((x) -> x % 2 == 0)', [2, 4]],
    ['[1, 2, 3].find((x) -> x > 1)', 2],
    ['[1].find((x) -> x > 5)', null],
    ['[10, 9, 100, 1].sort_by((x) -> x)', [1, 9, 10, 100]],
    ['["b", "B", "a", "10", "9"].sort_by((x) -> x)', ['10', '9', 'B', 'a', 'b']],
    [
      '[{n: "b", k: 1}, {n: "a", k: 1}, {n: "c", k: 0}].sort_by((x) -> x.k).map((x) -> x.n)',
      ['c', 'b', 'a'],
    ],
    ['[1, 2, 3].map((x) -> x * 2)', [2, 4, 6]],
    ['[1, 2, 3].reduce((acc, x) -> acc + x, 10)', 16],
    ['["a", "b"].reduce((acc, x) -> acc + x, "")', 'ab'],
    ['[].reduce((acc, x) -> acc + x, 7)', 7],
    [
      '[[1, 2].any((x) -> x > 1), [1, 2].any((x) -> x > 5), [].any((x) -> true)]',
      [true, false, false],
    ],
    [
      '[[1, 2].all((x) -> x > 0), [1, 2].all((x) -> x > 1), [].all((x) -> false)]',
      [true, false, true],
    ],
    ['[1].append([2])', [1, [2]]],
    ['[1, "a", null, {b: 1, a: 2}, true, 0.5].join("|")', '1|a|null|{"a":2,"b":1}|true|0.5'],
    ['[1, 2].join(", ")', '1, 2'],
    ['[1, 1, [2], [2], "1", {a: 1, b: 2}, {b: 2, a: 1}].unique()', [1, [2], '1', { a: 1, b: 2 }]],
    ['[3, 1, 2].map((x) -> x + base)', [13, 11, 12]],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () =>
      assert.deepEqual(await value(src, 'var base = 10'), expected));
  }

  it('leaves the receiver unchanged', async () => {
    const setup = 'var a = [3, 1, 2] var b = a.sort_by((x) -> x).append(4).filter((x) -> x > 1)';
    assert.deepEqual(await value('[a, b]', setup), [
      [3, 1, 2],
      [2, 3, 4],
    ]);
  });

  const errors: [string, number][] = [
    ['[1].get_index(3)', 0],
    ['[1].filter((x) -> x)', 0],
    ['[1].any((x) -> "yes")', 0],
    ['[1, "a"].sort_by((x) -> x)', 0],
    ['[1, 2].sort_by((x) -> x > 1)', 0],
    ['[1].map(1)', 0],
    ['[1, 2].join(1)', 0],
  ];
  for (const [src, offset] of errors) {
    it(`raises for ${src}`, async () => {
      assert.deepEqual(await raises(src), { kind: 'step_failed', step: 'S', offset });
    });
  }
});

describe('value methods: objects', () => {
  const table: [string, unknown][] = [
    ['{b: 1, a: 2, c: 0}.keys()', ['a', 'b', 'c']],
    ['{b: 1, a: 2, c: 0}.values()', [2, 1, 0]],
    ['[{}.keys(), {}.values()]', [[], []]],
    ['{a: 1}.get("a")', 1],
    ['{a: 1}.get("z", 5)', 5],
    ['{a: 1}.get("z")', null],
    ['{a: null}.get("a", 5)', null],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src), expected));
  }

  it('raises for a method no value has', async () => {
    assert.deepEqual(await raises('5.size()'), { kind: 'step_failed', step: 'S', offset: 0 });
  });
});

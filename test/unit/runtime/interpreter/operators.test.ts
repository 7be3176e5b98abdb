/**
 * Expressions (spec: mhl-language.md §4, §7.2, §7.3, §7.6–7.8): precedence and associativity,
 * no truthiness, `??`, `?.`, deep equality, the `+` rules, division by zero, indexes and slices,
 * `match`, if-expressions, literals and value formatting.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { raises, value } from './harness.js';

describe('operators: results', () => {
  const table: [string, unknown][] = [
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 2 - 3', 5],
    ['2 * 3 % 4', 2],
    ['2 + 3 % 2', 3],
    ['7 / 2', 3.5],
    ['-7 % 3', -1],
    ['5.5 % 2', 1.5],
    ['-2 * -3', 6],
    ['1 == 1 == true', true],
    ['1 < 2 == 2 < 3', true],
    ['true || false && false', true],
    ['!false && false', false],
    ['1 ?? 2 == 3', 1],
    ['null ?? false || true', true],
    ['2 >= 2 && 2 <= 2 && 1 != 2 && 3 > 2', true],
    // `&&` and `||` short-circuit: the non-bool right side is never evaluated.
    ['false && 1', false],
    ['true || 1', true],
    ['"a" + "b"', 'ab'],
    ['[1] + [2, 3]', [1, 2, 3]],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src), expected));
  }
});

describe('operators: ??', () => {
  const table: [string, unknown][] = [
    ['null ?? 1', 1],
    ['0 ?? 1', 0],
    ['false ?? true', false],
    ['"" ?? "x"', ''],
    ['[] ?? [1]', []],
    ['null ?? null ?? 3', 3],
    ['1 ?? fail("never evaluated")', 1],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src), expected));
  }
});

describe('operators: ?.', () => {
  const setup = 'var n = null var o = {a: 1, b: {c: 2}} var a = [1] var s = "str"';
  const table: [string, unknown][] = [
    ['o?.a', 1],
    ['o?.b?.c', 2],
    ['o?.zz', null],
    ['n?.x', null],
    ['s?.x', null],
    ['o?.["a"]', 1],
    ['o?.["zz"]', null],
    ['a?.[0]', 1],
    ['a?.[5]', null],
    ['n?.[0]', null],
    // `?.` skips the rest of the chain.
    ['n?.a.b', null],
    ['o?.missing.deeper', null],
    ['n?.[0].x', null],
    ['a?.[3].x', null],
    ['n?.a.size()', null],
    ['n?.size()', null],
    ['n?.a.b(fail("arguments of a skipped call are not evaluated"))', null],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.deepEqual(await value(src, setup), expected));
  }
});

describe('operators: deep equality', () => {
  const table: [string, boolean][] = [
    ['[1, [2, {a: 3}]] == [1, [2, {a: 3}]]', true],
    ['{a: 1, b: 2} == {b: 2, a: 1}', true],
    ['[1, 2] == [2, 1]', false],
    ['{a: 1} == {a: 1, b: 2}', false],
    ['1 == "1"', false],
    ['true == 1', false],
    ['null == null', true],
    ['null == 0', false],
    ['{} == []', false],
    ['"a" != "a"', false],
    ['[1].equals([1])', true],
    ['{a: [1]}.deep_equal({a: [2]})', false],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => assert.equal(await value(src), expected));
  }
});

describe('operators: errors', () => {
  // [expression, setup, column of the raising construct within the expression]
  const table: [string, string, number][] = [
    ['"a" + 1', '', 0],
    ['1 + "a"', '', 0],
    ['[1] + 1', '', 0],
    ['{a: 1} + {b: 2}', '', 0],
    ['null + 1', '', 0],
    ['1 / 0', '', 0],
    ['5 % 0', '', 0],
    ['"a" - "b"', '', 0],
    ['"a" < "b"', '', 0],
    ['1 < 2 < 3', '', 0],
    ['-"a"', '', 0],
    ['!1', '', 1],
    ['1 && true', '', 0],
    ['true && 1', '', 8],
    ['false || "x"', '', 9],
    ['if (1) 1 else 2', '', 4],
    ['o.zz', 'var o = {a: 1}', 0],
    ['s.x', 'var s = "str"', 0],
    ['n.x', 'var n = null', 0],
    ['o["zz"]', 'var o = {a: 1}', 2],
    ['a[1]', 'var a = [1]', 2],
    ['a[-1]', 'var a = [1]', 2],
    ['a[0.5]', 'var a = [1]', 2],
    ['s[0]', 'var s = "abc"', 0],
    ['x()', 'var x = 1', 0],
    ['match 3 { 1 -> "a" 2 -> "b" }', '', 0],
  ];
  for (const [src, setup, offset] of table) {
    it(`raises for ${src}`, async () => {
      assert.deepEqual(await raises(src, setup), { kind: 'step_failed', step: 'S', offset });
    });
  }
});

describe('operators: slices', () => {
  const table: [string, unknown][] = [
    ['a[1..3]', [1, 2]],
    ['a[..2]', [0, 1]],
    ['a[3..]', [3, 4]],
    ['a[^2..]', [3, 4]],
    ['a[^4..^1]', [1, 2, 3]],
    ['a[2..1]', []],
    ['a[0..99]', [0, 1, 2, 3, 4]],
    ['a[^99..1]', [0]],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => {
      assert.deepEqual(await value(src, 'var a = [0, 1, 2, 3, 4]'), expected);
    });
  }

  it('returns a new array', async () => {
    assert.deepEqual(await value('[a, b]', 'var a = [1, 2] var b = a[0..] b[0] = 9'), [
      [1, 2],
      [9, 2],
    ]);
  });
});

describe('operators: containers', () => {
  it('mutates the container on index and field assignment, through every alias', async () => {
    const src = '[a, b, o, p]';
    const setup = 'var a = [1] var b = a b[0] = 9 var o = {k: 1} var p = o p.k += 1 p["n"] = 3';
    assert.deepEqual(await value(src, setup), [[9], [9], { k: 2, n: 3 }, { k: 2, n: 3 }]);
  });

  it('builds new arrays with append and +', async () => {
    assert.deepEqual(await value('[a, b, c]', 'var a = [1] var b = a.append(2) var c = a + [3]'), [
      [1],
      [1, 2],
      [1, 3],
    ]);
  });
});

describe('expressions: match and if', () => {
  const setup = 'enum Status { Draft, Published }';
  const table: [string, unknown][] = [
    ['match 2 { 1 -> "one" 2 -> "two" _ -> "many" }', 'two'],
    ['match 9 { 1 -> "one" _ -> "many" }', 'many'],
    ['match [1, {a: 2}] { [1, {a: 2}] -> "deep" _ -> "no" }', 'deep'],
    ['match "Draft" { Status.Draft -> "enum" _ -> "string" }', 'string'],
    ['match Status.Published { Status.Draft -> 1 Status.Published -> 2 }', 2],
    ['if (true) 1 else 2', 1],
    ['if (1 > 2) 1 else { x: 1 }', { x: 1 }],
    ['if (false) fail("not evaluated") else "else"', 'else'],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => {
      assert.deepEqual(await value(src, '', { decls: setup }), expected);
    });
  }
});

describe('expressions: literals and formatting', () => {
  const table: [string, unknown][] = [
    ['[1, 2,]', [1, 2]],
    ['{a: 1 "b c": 2, d: 3,}', { a: 1, 'b c': 2, d: 3 }],
    ['"a\\tb\\u0041\\"\\\\"', 'a\tbA"\\'],
    ['"""\n   hi ${x}\\n  \n"""', 'hi 1\\n'],
    ['"${f("a-b")}-${ {k: 1}.k }"', 'A-B-1'],
    ['"${3} ${0.25} ${2.50} ${-0.5} ${1 == 1} ${[null][0]}"', '3 0.25 2.5 -0.5 true null'],
    ['"${[1, "a", null]} ${ {b: 1, a: {d: 2, c: 3}} }"', '[1,"a",null] {"a":{"c":3,"d":2},"b":1}'],
    ['"${f}"', '<function>'],
    ['"${1000000 * 1000000 * 1000000 * 1000}"', '1000000000000000000000'],
    ['"${1 / 10000000}"', '0.0000001'],
    ['"${-3 / 20000000}"', '-0.00000015'],
    ['[1 / 10000000, 2].join(" ")', '0.0000001 2'],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => {
      assert.deepEqual(await value(src, 'var x = 1 var f = (s) -> s.to_upper()'), expected);
    });
  }
});

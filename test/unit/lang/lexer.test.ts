import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tokenize } from '../../../src/lang/lexer.js';

const kinds = (src: string) => tokenize(src, 't.mh').tokens.map((t) => `${t.type}:${t.text}`);

describe('lexer', () => {
  const table: [string, string[]][] = [
    [
      '30s 5m 1h 7d 250ms',
      ['duration:30s', 'duration:5m', 'duration:1h', 'duration:7d', 'duration:250ms', 'eof:'],
    ],
    [
      '3 0.25 items[1..3]',
      [
        'number:3',
        'number:0.25',
        'ident:items',
        'punct:[',
        'number:1',
        'punct:..',
        'number:3',
        'punct:]',
        'eof:',
      ],
    ],
    [
      'a?.b ?? c += -> == != >= <= && ||',
      [
        'ident:a',
        'punct:?.',
        'ident:b',
        'punct:??',
        'ident:c',
        'punct:+=',
        'punct:->',
        'punct:==',
        'punct:!=',
        'punct:>=',
        'punct:<=',
        'punct:&&',
        'punct:||',
        'eof:',
      ],
    ],
    ['x // comment\n/// also\ny', ['ident:x', 'ident:y', 'eof:']],
    ['/** header\n doc **/\nagent', ['ident:agent', 'eof:']],
  ];
  for (const [src, expected] of table) {
    it(`tokenizes ${JSON.stringify(src)}`, () => assert.deepEqual(kinds(src), expected));
  }

  it('gives durations their value in milliseconds', () => {
    const [a, b, c] = tokenize('250ms 30s 2h', 't.mh').tokens;
    assert.deepEqual([a?.num, b?.num, c?.num], [250, 30_000, 7_200_000]);
  });

  it('keeps line and column of every token', () => {
    const t = tokenize('agent A {\n  command: "x"\n}', 't.mh').tokens;
    assert.deepEqual(t.map((x) => [x.text, x.line, x.col]).slice(3, 6), [
      ['command', 2, 3],
      [':', 2, 10],
      ['"x"', 2, 12],
    ]);
  });

  it('decodes escapes in double-quoted strings', () => {
    const [t] = tokenize('"a\\n\\t\\"b\\\\ \\u00e9 \\$"', 't.mh').tokens;
    assert.deepEqual(t?.parts, ['a\n\t"b\\ é $']);
  });

  it('keeps interpolations as source ranges, nested quotes included', () => {
    const src = '"x ${f(a, "b}c")} y"';
    const [t] = tokenize(src, 't.mh').tokens;
    const parts = t?.parts ?? [];
    assert.equal(parts.length, 3);
    const interp = parts[1];
    assert.ok(interp && typeof interp !== 'string');
    assert.equal(src.slice(interp.start, interp.end), 'f(a, "b}c")');
  });

  it('trims triple-quoted strings and applies no escapes', () => {
    const [t] = tokenize('"""\n   keep \\n ${x}\n  """', 't.mh').tokens;
    const parts = t?.parts ?? [];
    assert.equal(parts[0], 'keep \\n ');
    assert.equal(typeof parts[1], 'object');
    assert.equal(t?.triple, true);
  });

  it('counts lines inside triple-quoted strings', () => {
    const t = tokenize('"""a\nb\nc"""\nnext', 't.mh').tokens;
    assert.equal(t[1]?.line, 4);
  });

  const errors: [string, number, string][] = [
    ['"abc', 1, 'unterminated string'],
    ['10.0d', 1, "malformed number '10.0d'"],
    ['1e5', 1, "malformed number '1e5'"],
    ['x;', 2, "unexpected ';'"],
    ['"\\q"', 2, "invalid escape '\\q'"],
    ['a /* b */ c', 3, 'block comments are only allowed'],
    ['"${a"', 2, "unterminated '${'"],
    ['"""abc', 1, 'unterminated """ string'],
  ];
  for (const [src, col, message] of errors) {
    it(`reports ${JSON.stringify(src)} at column ${col}`, () => {
      const { diagnostics } = tokenize(src, 't.mh');
      assert.equal(diagnostics.length, 1);
      assert.equal(diagnostics[0]?.code, 'LEXICAL');
      assert.equal(diagnostics[0]?.span.col, col);
      assert.ok(diagnostics[0]?.message.startsWith(message), diagnostics[0]?.message);
    });
  }

  // Found by test/fuzz/mh-mutations.test.ts (FUZZ_SEED=-2100977343): a lone high surrogate
  // swallowed the newline after it, so every later diagnostic had the wrong line.
  it('reads a lone surrogate as one character, and a surrogate pair as one', () => {
    const spans = (src: string) =>
      tokenize(src, 't.mh').diagnostics.map((d) => [
        d.span.line,
        d.span.col,
        d.span.start,
        d.span.end,
      ]);
    assert.deepEqual(spans('\ud800\n\ud800'), [
      [1, 1, 0, 1],
      [2, 1, 2, 3],
    ]);
    assert.deepEqual(spans('\udc00\n\ud800x'), [
      [1, 1, 0, 1],
      [2, 1, 2, 3],
    ]);
    assert.deepEqual(spans('\u{1F600}\n'), [[1, 1, 0, 2]]);
  });
});

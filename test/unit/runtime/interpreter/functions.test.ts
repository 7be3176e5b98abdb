/**
 * Callables (spec: mhl-language.md §5.2, §5.5, §7.4, §7.5): lambdas and closures, tool methods
 * (positional binding, defaults, `self.`, a fresh environment, runtime type checks) and prompt
 * calls (named arguments, defaults, file prompts with frontmatter).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { memoryHost } from '../../../../src/lang/source-host.js';
import { loadProgram } from '../../../../src/runtime/pipeline/program.js';
import { failure, ok, value } from './harness.js';

describe('lambdas and closures', () => {
  const table: [string, string, unknown][] = [
    ['add(2)', 'var base = 10 var add = (x, y = 5) -> x + y + base', 17],
    ['add(2, 1)', 'var base = 10 var add = (x, y = 5) -> x + y + base', 13],
    ['mk()()', 'var mk = () -> { var z = 7 return () -> z }', 7],
    ['counter', 'var counter = 0 var inc = () -> { counter += 1 } inc() inc()', 2],
    ['[f(1), f(2)]', 'var f = (n) -> { if (n == 1) { return "one" } }', ['one', null]],
    ['mkAdder(3)(4)', 'var mkAdder = (a) -> (b) -> a + b', 7],
    ['f()', 'var f = () -> { a: 1 }', { a: 1 }],
    ['f()', 'var f = () -> {}', null],
    ['type_of(f)', 'var f = (x) -> x', 'function'],
  ];
  for (const [src, setup, expected] of table) {
    it(`evaluates ${src} after ${setup}`, async () => {
      assert.deepEqual(await value(src, setup), expected);
    });
  }

  it('sees later changes to captured variables', async () => {
    assert.equal(await value('get()', 'var x = 1 var get = () -> x x = 2'), 2);
  });

  it('binds arguments positionally, ignoring labels', async () => {
    assert.deepEqual(await value('f(b: 1, a: 2)', 'var f = (a, b) -> [a, b]'), [1, 2]);
  });

  const errors: [string, string, string][] = [
    ['f(1, 2)', 'var f = (a) -> a', 'too many arguments'],
    ['f()', 'var f = (a) -> a', 'a missing argument'],
    ['x()', 'var x = 1', 'a call on a non-callable'],
  ];
  for (const [src, setup, what] of errors) {
    it(`raises for ${what}`, async () => {
      const f = await failure(`step S {\n${setup}\nvar r = ${src}\n}`);
      assert.equal(f.kind, 'step_failed');
      assert.equal(f.step, 'S');
    });
  }
});

const TOOLS = `
tool T {
  pos(a, b) -> [a, b]
  def(x, y = x * 2) -> [x, y]
  viaSelf(n) -> self.def(n)
  block() -> { var q = 1 return q + 1 }
  noReturn() -> { var q = 1 }
  object() -> { a: 1 }
  other() -> "\${Marker.Declared}"
  lambda(n) -> [1, 2].map((x) -> self.pos(x, n))
  typed(n: number, s: string = "d"): string -> "\${n}\${s}"
  lies(n: number): string -> n
}
enum Marker { Declared }`;

describe('tool methods', () => {
  const table: [string, unknown][] = [
    ['T.pos(b: 1, a: 2)', [1, 2]],
    ['T.pos(1, b: 2)', [1, 2]],
    ['T.def(3)', [3, 6]],
    ['T.def(3, 4)', [3, 4]],
    ['T.viaSelf(5)', [5, 10]],
    ['T.block()', 2],
    ['T.noReturn()', null],
    ['T.object()', { a: 1 }],
    [
      'T.lambda(9)',
      [
        [1, 9],
        [2, 9],
      ],
    ],
    ['T.typed(1)', '1d'],
    ['T.typed(1, null)', '1null'],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => {
      assert.deepEqual(await value(src, '', { decls: TOOLS }), expected);
    });
  }

  it('runs in a fresh environment that sees declarations, not the caller’s variables', async () => {
    const vars = await ok(
      'var Marker = {Declared: "pipeline"} var r = [] step A { r = r + [Marker.Declared, T.other()] } step B { var Marker = {Declared: "step"} r = r + [Marker.Declared, T.other()] }',
      { decls: TOOLS },
    );
    assert.deepEqual(vars['r'], ['pipeline', 'Declared', 'step', 'Declared']);
  });

  const errors: [string, string][] = [
    ['T.pos(1, 2, 3)', 'too many arguments'],
    ['T.pos(1)', 'a missing argument'],
    ['T.typed("1")', 'a parameter of the wrong type'],
    ['T.typed(1, 2)', 'a defaulted parameter of the wrong type'],
    ['T.lies(1)', 'a return value of the wrong type'],
    ['T.nope()', 'an unknown method'],
  ];
  for (const [src, what] of errors) {
    it(`raises for ${what}: ${src}`, async () => {
      const f = await failure(`step S {\nvar r = ${src}\n}`, { decls: TOOLS });
      assert.equal(f.kind, 'step_failed');
      assert.equal(f.step, 'S');
    });
  }
});

const PROMPTS = `
prompt Greet(greeting: string = "hi", name: string) {
  "\${greeting} \${name}"
}
prompt Role() { "You are a reviewer." }
prompt Review(role: prompt, file: string, lines: number) {
  """
  \${role}
  Review \${file} (\${lines} lines).
  """
}
prompt Implement(id: number, title: string) from "implement.prompt.md"
prompt Plain(x: string) from "plain.md"`;

const FILES = {
  'implement.prompt.md':
    '---\nversion: 2\nname: "impl"\nstrict: true\nnote: free text\n---\n\nImplement #${id}: ${title}.\nKeep \\${literal} as is.\n',
  'plain.md': '\n  Just ${x}.  \n',
};

describe('prompt calls', () => {
  const table: [string, unknown][] = [
    ['Greet(name: "bob")', 'hi bob'],
    ['Greet(name: "al", greeting: "yo")', 'yo al'],
    [
      'Review(role: Role(), file: "a.go", lines: 3)',
      'You are a reviewer.\n  Review a.go (3 lines).',
    ],
    ['Implement(title: "Login", id: 7)', 'Implement #7: Login.\nKeep ${literal} as is.'],
    ['Plain(x: "text")', 'Just text.'],
    ['Implement.frontmatter', { name: 'impl', note: 'free text', strict: true, version: 2 }],
    ['[Implement.frontmatter.version, Implement.frontmatter["name"]]', [2, 'impl']],
    ['Plain.frontmatter', {}],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () => {
      assert.deepEqual(await value(src, '', { decls: PROMPTS, files: FILES }), expected);
    });
  }

  // [call, what is wrong, column of the raise: the argument or the call]
  const errors: [string, string, number][] = [
    ['Greet("bob")', 'a positional argument', 15],
    ['Greet()', 'a missing argument', 9],
    ['Greet(name: "a", extra: 1)', 'an unknown argument', 9],
    ['Implement(id: 1)', 'a missing argument of a file prompt', 9],
  ];
  const line = PROMPTS.split('\n').length + 3; // the declarations, the header, `step S {`
  for (const [src, what, col] of errors) {
    it(`raises for ${what}: ${src}`, async () => {
      const f = await failure(`step S {\nvar r = ${src}\n}`, { decls: PROMPTS, files: FILES });
      assert.deepEqual(f, { kind: 'step_failed', step: 'S', at: `${line}:${col}` });
    });
  }

  it('refuses to load a file prompt whose placeholder is not a parameter', () => {
    const dir = '/virtual';
    const files = new Map([
      [join(dir, 'main.mh'), 'prompt F(id: number) from "f.md"\npipeline P { step S { } }'],
      [join(dir, 'f.md'), 'Do ${nope}'],
    ]);
    const loaded = loadProgram(join(dir, 'main.mh'), memoryHost(files));
    assert.equal(loaded.ok, false);
  });
});

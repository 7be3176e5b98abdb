/**
 * The resolved-name index (src/lang/references.ts) on small programs: which declaration each
 * use of a name refers to, where locals are visible, and that scopes do not leak.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkFiles,
  indexModule,
  localsAt,
  type ModuleIndex,
  memoryHost,
  occurrenceAt,
  type SymbolTarget,
} from '../../../src/lang/index.js';

function indexOf(
  files: Record<string, string>,
  main = '/w/main.mh',
): { index: ModuleIndex; text: string } {
  const result = checkFiles([main], memoryHost(new Map(Object.entries(files))));
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  assert.deepEqual(errors, [], 'fixture must lint clean');
  const module = result.graph.get(main);
  assert.ok(module);
  return { index: indexModule(module, result.scopes.get(module) ?? new Map()), text: module.text };
}

/** What the `nth` occurrence of `needle` (at `shift` into it) refers to, as a short string. */
function targetAt(index: ModuleIndex, text: string, needle: string, nth = 1, shift = 0): string {
  let at = -1;
  for (let i = 0; i < nth; i++) at = text.indexOf(needle, at + 1);
  assert.ok(at >= 0, needle);
  const o = occurrenceAt(index, at + shift);
  return o ? describeTarget(o.target) : 'nothing';
}

function describeTarget(t: SymbolTarget): string {
  switch (t.kind) {
    case 'decl':
      return `decl ${t.decl.name} in ${t.module.path}`;
    case 'local':
      return `${t.local.what} ${t.local.name}@${t.local.span.line}:${t.local.span.col}`;
    case 'member':
      return `member ${t.owner.name}.${t.name}`;
    case 'native':
    case 'builtin':
      return `${t.kind} ${t.name}`;
    case 'native-method':
      return `native ${t.namespace}.${t.name}`;
    case 'step':
      return `step ${t.step.name}`;
    case 'namespace':
      return `namespace ${t.module.path}`;
    case 'file':
      return `file ${t.path}`;
  }
}

const MAIN = `import { Helper as H } from "lib.mh"
enum Mode { Fast, Slow }
tool Local {
    twice(x: number): number -> x * 2
    four() -> self.twice(2)
}
workflow W {
    input n: number = 1
    var total = 0
    step A {
        var {a, b: c} = {a: 1, b: 2}
        for (var i in [a, c]) { total += i }
        try { fail("x") } catch (e) { log(e) }
        var m = Mode.Fast
        if (n > 1) { goto B }
        log(H.run(prompt: "\${total}"), json.stringify(m))
    }
    step B {
        var i = Local.four()
        log(i)
    }
}
`;
const LIB = 'export agent Helper { command: "true" }\n';

describe('reference index', () => {
  const { index, text } = indexOf({ '/w/main.mh': MAIN, '/w/lib.mh': LIB });

  it('resolves imports under their alias to the declaring module', () => {
    assert.equal(targetAt(index, text, 'H.run'), 'decl Helper in /w/lib.mh');
    assert.equal(targetAt(index, text, 'Helper as'), 'decl Helper in /w/lib.mh');
    assert.equal(targetAt(index, text, '"lib.mh"', 1, 1), 'file /w/lib.mh');
  });

  it('resolves locals to their own declaration, per scope', () => {
    assert.equal(targetAt(index, text, 'total += i', 1, 9), 'loop i@12:18');
    assert.equal(targetAt(index, text, 'log(i)', 1, 4), 'var i@19:13');
    assert.equal(targetAt(index, text, 'total +='), 'var total@9:9');
    assert.equal(targetAt(index, text, '${total}', 1, 2), 'var total@9:9');
    assert.equal(targetAt(index, text, 'log(e)', 1, 4), 'catch e@13:34');
    assert.equal(targetAt(index, text, '[a, c]', 1, 4), 'var c@11:20');
    assert.equal(targetAt(index, text, 'n > 1'), 'input n@8:11');
    assert.equal(targetAt(index, text, 'x * 2'), 'param x@4:11');
  });

  it('resolves members, steps, natives and built-ins', () => {
    assert.equal(targetAt(index, text, 'self.twice', 1, 6), 'member Local.twice');
    assert.equal(targetAt(index, text, 'Local.four', 1, 7), 'member Local.four');
    assert.equal(targetAt(index, text, 'Mode.Fast', 1, 6), 'member Mode.Fast');
    assert.equal(targetAt(index, text, 'goto B', 1, 5), 'step B');
    assert.equal(targetAt(index, text, 'json.stringify', 1, 6), 'native json.stringify');
    assert.equal(targetAt(index, text, 'json.stringify'), 'native json');
    assert.equal(targetAt(index, text, 'fail('), 'builtin fail');
  });

  it('shows only the locals declared before the cursor in the scopes around it', () => {
    const inB = text.indexOf('log(i)');
    const names = localsAt(index, inB).locals.map((l) => l.name);
    assert.deepEqual(names.sort(), ['i', 'n', 'total']);
    const early = localsAt(index, text.indexOf('var {a')).locals.map((l) => l.name);
    assert.ok(!early.includes('m') && !early.includes('a'), early.join());
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeclOf, Stmt } from '../../../src/lang/ast.js';
import { parse } from '../../../src/lang/parser.js';
import { render } from '../../helpers/render.js';

/** Parses `src` as the body of one step and returns its statements. */
function statements(src: string): readonly Stmt[] {
  const { program, diagnostics } = parse(`pipeline P {\n step S {\n${src}\n }\n}`, 't.mh');
  assert.deepEqual(
    diagnostics.map((d) => d.message),
    [],
  );
  const p = program.decls[0] as DeclOf<'Pipeline'>;
  const step = p.steps[0];
  assert.ok(step?.kind === 'Step');
  return step.body.body;
}

/** Parses `src` in expression position (as a variable's value) and renders it. */
function expr(src: string): string {
  const [s] = statements(`var value = ${src}`);
  assert.ok(s?.kind === 'VarDecl', `not a declaration: ${s?.kind}`);
  return render(s.value);
}

describe('parser: expressions', () => {
  const table: [string, string][] = [
    ['a + b * c', '(+ a (* b c))'],
    ['a - b - c', '(- (- a b) c)'],
    ['a ?? b || c', '(?? a (|| b c))'],
    ['!a && b == c', '(&& (! a) (== b c))'],
    ['-x < 3', '(< (- x) 3)'],
    ['a.b?.c?.[d]', '(?[] (?. (. a b) c) d)'],
    ['f(1, name: x, shorthand:)', '(call f 1 name:x shorthand:shorthand)'],
    ['git.rev_parse(ref: "HEAD")', '(call (. git rev_parse) ref:"HEAD")'],
    ['x.max', '(. x max)'],
    ['items[1..3]', '(slice items 1 3)'],
    ['items[^4..^1]', '(slice items ^4 ^1)'],
    ['items[..3]', '(slice items _ 3)'],
    ['items[2..]', '(slice items 2 _)'],
    ['items[i + 1]', '([] items (+ i 1))'],
    ['[1, 2, 3,]', '[1 2 3]'],
    ['{a: 1, "b c": 2 d: 3}', '{a:1 b c:2 d:3}'],
    ['{name}', '{name:name}'],
    ['(a, b) -> a + b', '(fn (a b) (+ a b))'],
    ['(x) -> { return x }', '(fn (x) block/1)'],
    ['() -> { a: 1 }', '(fn () {a:1})'],
    ['() -> {}', '(fn () block/0)'],
    ['(a + b) * c', '(* (+ a b) c)'],
    ['if (a) 1 else 2', '(if a 1 2)'],
    ['match s { "x" -> 1  _ -> 2 }', '(match s "x"->1 _->2)'],
    ['"hi ${name.first}!"', '"hi ${(. name first)}!"'],
    ['"${f(x, "a-b")}"', '"${(call f x "a-b")}"'],
    ['"${true}/${null}/${a.b}"', '"${true}/${null}/${(. a b)}"'],
    ['"${f(\\"a-b\\")}"', '"${(call f "a-b")}"'],
    ['5m', '300000ms'],
    ['o with {a: 1}', '(with o {a:1})'],
    ['ref {n: 0}', '(ref {n:0})'],
    ['agent { command: "echo" }', '(agent command)'],
    ['a\n  + b', '(+ a b)'],
  ];
  for (const [src, expected] of table) {
    it(`parses ${JSON.stringify(src)}`, () => assert.equal(expr(src), expected));
  }

  it('keeps exact spans inside interpolations', () => {
    const [s] = statements('"ab ${xyz}"');
    assert.ok(s?.kind === 'ExprStmt' && s.expr.kind === 'String');
    const inner = s.expr.segments[1];
    assert.ok(inner && typeof inner !== 'string');
    assert.deepEqual(
      [inner.span.line, inner.span.col, inner.span.end - inner.span.start],
      [3, 7, 3],
    );
  });
});

describe('parser: statements', () => {
  const kinds = (src: string) => statements(src).map((s) => s.kind);
  const table: [string, string[]][] = [
    ['var x = 1\nconst y = 2', ['VarDecl', 'VarDecl']],
    ['x = 1\nx += 2\no.a[0] = 3', ['Assign', 'Assign', 'Assign']],
    ['if (a) goto A else goto B', ['If']],
    ['if (a) { b() } else if (c) { d() }', ['If']],
    ['while (i < 3) { i += 1 }', ['While']],
    ['for (var x in xs) { log(x) }', ['ForIn']],
    ['try { a() } catch (e) { b() } finally { c() }', ['Try']],
    ['try{ a() }\ncatch\n{ b() }', ['Try']],
    ['return\n', ['Return']],
    ['break "done"', ['Break']],
    ['goto Next\ngoto nameof(Next)', ['Goto', 'Goto']],
    ['spawn h = A.run(prompt: "x")', ['Spawn']],
    ['spawn hs = A.run(prompt: p) for p in ps // trailing', ['Spawn']],
    ['wait a, b timeout: 10s, on_error: "collect"', ['Wait']],
    ['wait any a, b', ['Wait']],
    ['wait 2 of a, b, c', ['Wait']],
    ['var {a, b: c} = o\n{a} = o\nself.{a} = o', ['Destructure', 'Destructure', 'Destructure']],
    ['memory.save(x)', ['ExprStmt']],
  ];
  for (const [src, expected] of table) {
    it(`parses ${JSON.stringify(src)}`, () => assert.deepEqual(kinds(src), expected));
  }

  it('reads wait modes and options', () => {
    const [a, b] = statements('wait 2 of a, b, c timeout: 5s\nwait any x');
    assert.ok(a?.kind === 'Wait' && b?.kind === 'Wait');
    assert.deepEqual(
      [a.mode, a.handles.map((h) => h.name), a.options.map((o) => o.name)],
      [2, ['a', 'b', 'c'], ['timeout']],
    );
    assert.equal(b.mode, 'any');
  });

  it('binds `break` to a value only on the same line', () => {
    const [a, b] = statements('break\nlog("x")');
    assert.ok(a?.kind === 'Break' && a.value === undefined);
    assert.equal(b?.kind, 'ExprStmt');
  });
});

describe('parser: declarations', () => {
  it('sorts pipeline members and reads headers', () => {
    const src = `export loop workflow Cycle max 5 {
      description: "d", repeat: { stop_when: done  max_iterations: 3 }
      input target: string = "."
      input ids: {id: number, tags?: string[]}[]
      var a = 1
      const b = 2
      mem c = 0
      parallel Checks timeout 2m { step L { } step T { } }
      entry step First timeout 30s { }
    }`;
    const { program, diagnostics } = parse(src, 't.mh');
    assert.deepEqual(diagnostics, []);
    const p = program.decls[0] as DeclOf<'Pipeline'>;
    assert.deepEqual(
      [
        p.exported,
        p.loop,
        p.flavor,
        p.maxIterations,
        p.props.map((x) => x.name),
        p.inputs.map((x) => x.name),
      ],
      [true, true, 'workflow', 5, ['description', 'repeat'], ['target', 'ids']],
    );
    assert.deepEqual(
      p.vars.map((v) => `${v.storage} ${v.name}`),
      ['var a', 'const b', 'mem c'],
    );
    const [group, first] = p.steps;
    assert.ok(group?.kind === 'Parallel' && first?.kind === 'Step');
    assert.deepEqual(
      [group.timeoutMs, group.steps.length, first.entry, first.timeoutMs],
      [120_000, 2, true, 30_000],
    );
  });

  it('reads every declaration form, legacy ones included', () => {
    const src = `
      use { A as a, B } from "x.mh"
      import { C } from "y.mh"
      import "whole.mh"
      import "old.mh" as ns
      agent Ag { command: "sh", args: ["-c", "\${prompt}"], after: (mcp, tools, result) -> { return result } }
      prompt P(file: string, lang: string = "en") { """Review \${file}""" }
      prompt Q(id: number) from "q.md"
      skill S from "s.md"
      skill Old { description: "x" tools: [] input { a: string } }
      schema J from "j.json"
      memory M { type: "json" path: ".mhl/m.json" }
      tool T { const k = 1  f(a: number, b = 2): number -> a + b  g() -> { a: 1 } }
      extension mcp E { transport: "stdio", command: "x" }
      mcp_server Legacy { command: "y" }
      extensible thing { manifest: "m" properties: { a: string } run(x: string) -> string }
      router R { agents: [Ag] }
      type Ids = string[]
      enum Status { Draft, Published
        Archived, }
      test Suite { describe one { is_true(true) } }
      pipeline Sig(x: string): string { step S { } }
    `;
    const { program, diagnostics } = parse(src, 't.mh');
    assert.deepEqual(
      diagnostics.map((d) => d.message),
      [],
    );
    assert.deepEqual(
      program.decls.map((d) => d.kind),
      [
        'Import',
        'Import',
        'Import',
        'Import',
        'Agent',
        'Prompt',
        'Prompt',
        'Skill',
        'Skill',
        'Schema',
        'Memory',
        'Tool',
        'Extension',
        'Extension',
        'Extensible',
        'Router',
        'TypeAlias',
        'Enum',
        'Test',
        'Pipeline',
      ],
    );
    const imports = program.decls.filter((d): d is DeclOf<'Import'> => d.kind === 'Import');
    assert.deepEqual(
      imports.map((i) => i.form),
      ['use', 'named', 'file', 'namespace'],
    );
    const legacy = program.decls[13] as DeclOf<'Extension'>;
    assert.deepEqual([legacy.extKind, legacy.legacy], ['mcp', true]);
    const tool = program.decls[11] as DeclOf<'Tool'>;
    assert.deepEqual([tool.vars.length, tool.methods.map((m) => m.name)], [1, ['f', 'g']]);
    const status = program.decls[17] as DeclOf<'Enum'>;
    assert.deepEqual(
      status.variants.map((v) => v.name),
      ['Draft', 'Published', 'Archived'],
    );
  });
});

describe('parser: recovery', () => {
  it('reports every broken statement in a file, not just the first', () => {
    const src = 'pipeline P {\n step A {\n  var = 1\n  log(\n }\n step B {\n  x = )\n }\n}';
    const { diagnostics } = parse(src, 't.mh');
    assert.deepEqual(
      diagnostics.map((d) => [d.span.line, d.span.col]),
      [
        [3, 7],
        [5, 2],
        [7, 7],
      ],
    );
  });

  it('stops at the next step when a block lacks its closing brace', () => {
    const src = 'pipeline P {\n step A {\n  log("a")\n step B { log("b") }\n}';
    const { program, diagnostics } = parse(src, 't.mh');
    assert.deepEqual(
      diagnostics.map((d) => d.message),
      ["expected '}' to close the block opened at line 2, found 'step'"],
    );
    assert.deepEqual(
      (program.decls[0] as DeclOf<'Pipeline'>).steps.map((s) => s.name),
      ['A', 'B'],
    );
  });

  it('never throws on deeply nested input', () => {
    const { diagnostics } = parse(
      `pipeline P { step S { var x = ${'('.repeat(5000)}1${')'.repeat(5000)} } }`,
      't.mh',
    );
    assert.equal(diagnostics[0]?.code, 'LIMIT_EXCEEDED');
  });

  it('refuses a file over the size limit before lexing it', () => {
    const { diagnostics } = parse('x', 't.mh', {
      maxSourceBytes: 0,
      maxDepth: 10,
      maxDiagnosticsPerFile: 5,
      maxAssetBytes: 1,
    });
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['LIMIT_EXCEEDED'],
    );
  });

  it('gives up after the diagnostics limit and says so', () => {
    const src = `pipeline P { step S {\n${'  var = 1\n'.repeat(200)} } }`;
    const { diagnostics } = parse(src, 't.mh');
    assert.equal(diagnostics.length, 101);
    assert.equal(diagnostics.at(-1)?.message, 'too many errors; stopped reading this file');
  });
});

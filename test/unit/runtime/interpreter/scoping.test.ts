/**
 * Names (spec: mhl-language.md §6.4, §6.7, §6.8, §7.1): step locals, pipeline variables, `const`,
 * assignment to the innermost binding, `mem` variables and the read-only `context`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { memoryHost } from '../../../../src/lang/source-host.js';
import { loadProgram } from '../../../../src/runtime/pipeline/program.js';
import { ok, run, tempDir } from './harness.js';

describe('scoping: var and const', () => {
  it('shares pipeline variables across steps; a step local shadows one and vanishes', async () => {
    const vars = await ok(
      'var x = "pipe" var r = [] step A { var x = "local" x = "local2" r = r + [x] } step B { r = r + [x] }',
    );
    assert.deepEqual(vars, { r: ['local2', 'pipe'], x: 'pipe' });
  });

  it('assigns to the innermost existing binding', async () => {
    const vars = await ok(
      'var x = 0 var r = [] step A { x = 1 var y = 1 if (true) { y = 2 x = 2 } r = r + [y] } step B { r = r + [x] }',
    );
    assert.deepEqual(vars, { r: [2, 2], x: 2 });
  });

  it('scopes a var declared in a block to that block', async () => {
    const vars = await ok('var r = null step A { var x = 1 if (true) { var x = 2 } r = x }');
    assert.equal(vars['r'], 1);
  });

  it('rebinds a const when its declaration runs again', async () => {
    const vars = await ok(
      'var r = [] step A { for (var i in [1, 2]) { const k = i * 10 r = r + [k] } }',
    );
    assert.deepEqual(vars['r'], [10, 20]);
  });

  it('refuses a program that assigns to a const', () => {
    const dir = tempDir();
    const cases = [
      'const c = 1 step A { c = 2 }',
      'step A { const c = 1 c += 2 }',
      'const c = [1] step A { c[0] = 2 }',
      'const c = 1 step A { var f = () -> { c = 2 } f() }',
    ];
    for (const body of cases) {
      const file = join(dir, 'main.mh');
      const loaded = loadProgram(file, memoryHost(new Map([[file, `workflow P { ${body} }`]])));
      assert.equal(loaded.ok, false, body);
      if (!loaded.ok)
        assert.deepEqual(
          loaded.diagnostics.map((d) => d.code),
          ['CONST_ASSIGN'],
          body,
        );
    }
  });

  it('keeps tool var members between calls', async () => {
    const vars = await ok('var r = null step S { T.bump() r = T.bump() }', {
      decls: 'tool T {\n  var k = 1\n  bump() -> { k += 1 return k }\n}',
    });
    assert.equal(vars['r'], 3);
  });

  it('lets a local variable shadow a native or built-in name', async () => {
    const vars = await ok('var r = null step A { var log = 5 var fs = "x" r = [log, fs] }');
    assert.deepEqual(vars['r'], [5, 'x']);
  });
});

describe('scoping: mem variables', () => {
  it('persists mem across loop iterations while pipeline vars start over', async () => {
    const r = await run(
      'mem count = 0 var per = 0 var seen = [] step A { count += 1 per += 1 seen = seen + [count] }',
      {
        header: 'loop workflow P max 3',
      },
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual(r.vars, { per: 1, seen: [3] });
  });

  it('writes back a whole container after indexed assignment and +=', async () => {
    const r = await run(
      'mem m = {a: [0]} var seen = null step A { seen = [m.a[0], m.get("b", 0)] m.a[0] += 1 m["b"] = m.a[0] * 10 }',
      { header: 'loop workflow P max 3' },
    );
    assert.deepEqual(r.vars['seen'], [2, 20]);
  });

  it('assigns to mem like any variable', async () => {
    const vars = await ok(
      'mem m = 1 var r = null step A { var before = m m = m + 1 r = [before, m] }',
    );
    assert.deepEqual(vars['r'], [1, 2]);
  });

  it('initialises mem lazily, on first use', async () => {
    const r = await run('var x = 1 mem m = x step A { x = 2 } step B { log("${m}") }');
    assert.deepEqual(r.output, ['2']);
    const unused = await run('mem m = T.f() step A { }', {
      decls: 'tool T {\n  f() -> { log("initializer ran") return 1 }\n}',
    });
    assert.deepEqual(unused.output, []);
  });

  it('initialises mem when a step first mentions it, keeps it across a resume, never an unused one', async () => {
    const body =
      'input go: bool = false var r = [] mem first = T.f("first") mem later = T.f("later") ' +
      'mem never = T.f("never") step A { r = r + [first] } step B { if (!go) pause("wait") ' +
      'r = r + [later] }';
    const decls = 'tool T {\n  f(tag: string) -> { log("init ${tag}") return tag }\n}';
    const paused = await run(body, { decls });
    assert.equal(paused.outcome.status, 'paused');
    assert.deepEqual(paused.output, ['init first', 'init later']);
    const checkpoint = await paused.state.load(paused.outcome.session, 'P');
    assert.deepEqual(Object.keys(checkpoint?.variables['__mem'] as object), ['first', 'later']);
    const resumed = await run(body, {
      decls,
      cwd: paused.cwd,
      state: paused.state,
      resume: true,
      inputs: { go: true },
    });
    assert.equal(resumed.outcome.status, 'completed');
    assert.deepEqual(resumed.output, [], 'nothing is initialised again');
    assert.deepEqual(resumed.vars['r'], ['first', 'later']);
  });

  it('resets a mem variable with .reset(), running its initializer again', async () => {
    const r = await run(
      'mem m = 5 var r = [] step A { m = 7 r = r + [m] m.reset() r = r + [m] m = m + 1 }',
      {
        header: 'loop workflow P max 2',
      },
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual(r.vars['r'], [7, 5]);
  });
});

describe('scoping: context', () => {
  it('offers session_id, started_at, resumed, principal and vars in every step', async () => {
    const r = await run(
      'var r = null step S { r = [context.session_id, is_string(context.started_at), context.resumed, context.principal, context.vars] }',
    );
    assert.deepEqual(r.vars['r'], [r.outcome.session, true, false, '', {}]);
  });

  it('reads the previous completed run’s variables with context: { source: "latest" }', async () => {
    const first = await run('var a = 1 step S { a = 5 }', { header: 'pipeline P' });
    const second = await run(
      'context: { source: "latest" } var r = null step S { r = [context.vars, context.vars.keys().contains("a")] }',
      { cwd: first.cwd, state: first.state, header: 'pipeline P' },
    );
    assert.deepEqual(second.vars['r'], [{ a: 5 }, true]);
  });

  it('fails a run that requires a previous run when there is none', async () => {
    const r = await run('context: { source: "latest", require: true } step S { }');
    assert.equal(r.outcome.status, 'failed');
    assert.deepEqual(r.outcome.executed, []);
  });

  it('marks a resumed run', async () => {
    const body =
      'var r = [] step A { r = r + [context.resumed] } step B { if (!context.resumed) pause() r = r + [context.resumed] }';
    const first = await run(body);
    const again = await run(body, { cwd: first.cwd, state: first.state, resume: true });
    assert.deepEqual(again.vars['r'], [false, true]);
  });
});

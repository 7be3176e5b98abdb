/**
 * Statements and the step machine (spec: mhl-language.md §6.3, §7.1, §7.9, §9): if/while/for,
 * try/catch/finally, goto and its revisit cap, break, return, pause() and fail().
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_LOOP_ITERATIONS } from '../../../../src/runtime/interpreter/interpreter.js';
import { toPlain } from '../../../../src/runtime/interpreter/values.js';
import { MAX_STEP_VISITS } from '../../../../src/runtime/pipeline/runner.js';
import { failure, ok, run, value } from './harness.js';

describe('statements: conditions are bools', () => {
  const table: [string, string][] = [
    ['if (1) { log("x") }', '3:14'],
    ['if ("yes") log("x") else log("y")', '3:14'],
    ['while ("x") { log("x") }', '3:17'],
    ['if (!0) { log("x") }', '3:15'],
    ['var b = null if (b) { log("x") }', '3:27'],
  ];
  for (const [src, at] of table) {
    it(`raises for ${src}`, async () => {
      assert.deepEqual(await failure(`step S { ${src} }`), { kind: 'step_failed', step: 'S', at });
    });
  }
});

describe('statements: if, while, for', () => {
  it('takes single-statement branches and else-if chains', async () => {
    const src = '[f(1), f(2), f(3)]';
    const setup =
      'var f = (n) -> { var r = "" if (n == 1) r = "one" else if (n == 2) { r = "two" } else r = "many" return r }';
    assert.deepEqual(await value(src, setup), ['one', 'two', 'many']);
  });

  it('runs while up to the cap and fails beyond it', async () => {
    const vars = await ok(`var n = 0 step S { while (n < ${MAX_LOOP_ITERATIONS}) { n += 1 } }`);
    assert.equal(vars['n'], MAX_LOOP_ITERATIONS);
    const r = await run('var n = 0 step S { while (true) { n += 1 } }');
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.equal(r.vars['n'], MAX_LOOP_ITERATIONS);
  });

  it('iterates over a snapshot of the array, with a fresh loop variable each time', async () => {
    const setup = 'var a = [1, 2] var seen = [] for (var x in a) { a = a + [x] seen = seen + [x] }';
    assert.deepEqual(await value('[a, seen]', setup), [
      [1, 2, 1, 2],
      [1, 2],
    ]);
  });

  const notArrays = ['{a: 1}', '"ab"', 'null', '3'];
  for (const src of notArrays) {
    it(`refuses to iterate over ${src}`, async () => {
      const f = await failure(`step S { for (var k in ${src}) { log(k) } }`);
      assert.deepEqual(f, { kind: 'step_failed', step: 'S', at: '3:24' });
    });
  }

  it('ends the step at return, ignoring its value', async () => {
    const vars = await ok(
      'var r = [] step A { r = r + ["a"] return 5 r = r + ["x"] } step B { r = r + ["b"] }',
    );
    assert.deepEqual(vars['r'], ['a', 'b']);
  });
});

describe('statements: try/catch/finally', () => {
  it('catches a fail() with its space-joined formatted values, then runs finally', async () => {
    const vars = await ok(
      'var r = [] step S { try { r = r + ["t"] fail("boom", 1, 2.5, [1, "x"], {b: 1, a: 2}) r = r + ["not"] } catch (e) { r = r + [e] } finally { r = r + ["f"] } }',
    );
    assert.deepEqual(vars['r'], ['t', 'boom 1 2.5 [1,"x"] {"a":2,"b":1}', 'f']);
  });

  it('gives catch the message of a runtime error without its file:line prefix', async () => {
    const vars = await ok(
      'var r = [] step S { try { var x = 1 / 0 } catch (e) { r = r + [e] } try { [1].get_index(5) } catch (e) { r = r + [e] } try { T.f() } catch (e) { r = r + [e] } }',
      { decls: 'tool T {\n f() -> { fail("from a tool") }\n}' },
    );
    const caught = vars['r'] as string[];
    assert.equal(caught.length, 3);
    for (const e of caught) {
      assert.equal(typeof e, 'string');
      assert.doesNotMatch(e, /main\.mh|:\d+:\d+/);
    }
    assert.equal(caught[2], 'from a tool');
  });

  it('catches without a binding', async () => {
    assert.equal(
      (await ok('var r = null step S { try { fail("x") } catch { r = "caught" } }'))['r'],
      'caught',
    );
  });

  it('runs finally when catch raises, and the new error fails the step', async () => {
    const r = await run(
      'var r = [] step S { try { fail("x") } catch (e) { fail("y") } finally { r = r + ["f"] } }',
    );
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.deepEqual(r.vars['r'], ['f']);
  });

  it('lets goto pass through try, still running finally', async () => {
    const r = await run(
      'var r = [] step A { try { r = r + ["a"] goto C } catch (e) { r = r + ["c"] } finally { r = r + ["f"] } r = r + ["not"] } step B { r = r + ["B"] } step C { r = r + ["C"] }',
    );
    assert.deepEqual(r.outcome.executed, ['A', 'C']);
    assert.deepEqual(r.vars['r'], ['a', 'f', 'C']);
  });

  it('lets break pass through try, still running finally', async () => {
    const r = await run(
      'var r = [] step A { try { break "done" } catch (e) { r = r + ["c"] } finally { r = r + ["f"] } } step B { r = r + ["B"] }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.equal(r.outcome.broke, true);
    assert.deepEqual(r.vars['r'], ['f']);
  });

  it('lets pause() pass through try, still running finally', async () => {
    const r = await run(
      'var r = [] step B { try { pause("need a human") } catch (e) { r = r + ["c"] } finally { r = r + ["f"] } }',
    );
    assert.equal(r.outcome.status, 'paused');
    assert.deepEqual(r.vars['r'], ['f']);
  });
});

describe('steps: goto, break, pause, fail', () => {
  it('runs steps in declared order', async () => {
    const r = await run(
      'var r = [] step A { r = r + ["A"] } step B { r = r + ["B"] } step C { r = r + ["C"] }',
    );
    assert.deepEqual(r.outcome.executed, ['A', 'B', 'C']);
    assert.deepEqual(r.vars['r'], ['A', 'B', 'C']);
  });

  it('jumps backward and forward with goto, abandoning the rest of the step', async () => {
    const r = await run(
      'var n = 0 var r = [] step A { n += 1 } step B { if (n < 3) goto A r = r + ["B"] goto D } step C { r = r + ["C"] } step D { r = r + ["D"] }',
    );
    assert.deepEqual(r.outcome.executed, ['A', 'B', 'A', 'B', 'A', 'B', 'D']);
    assert.deepEqual(r.vars, { n: 3, r: ['B', 'D'] });
  });

  it(`fails a step entered more than ${MAX_STEP_VISITS} times`, async () => {
    const r = await run('checkpoint: { enabled: false } var n = 0 step A { n += 1 goto A }');
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.equal(r.outcome.error?.step, 'A');
    assert.equal(r.vars['n'], MAX_STEP_VISITS);
  });

  it('ends the whole run successfully at break, even inside a while loop', async () => {
    const r = await run(
      'var r = 0 step A { while (true) { r += 1 if (r == 3) break "enough" } r = 100 } step B { r = 2 }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.equal(r.outcome.broke, true);
    assert.deepEqual(r.outcome.executed, ['A']);
    assert.equal(r.vars['r'], 3);
  });

  it('suspends the run at pause(), keeping the reason value and the state so far', async () => {
    const r = await run('var r = 0 step A { r = 1 } step B { pause({why: "x"}) } step C { r = 3 }');
    assert.equal(r.outcome.status, 'paused');
    assert.deepEqual(r.outcome.executed, ['A']);
    assert.deepEqual(toPlain(r.outcome.pauseReason ?? null), { why: 'x' });
    assert.deepEqual(r.vars, { r: 1 });
    const saved = await r.state.load(r.outcome.session, 'P');
    assert.equal(saved?.next_step, 'B');
    assert.equal(saved?.paused?.reason, '{"why":"x"}');
  });

  it('writes the pause checkpoint even with checkpoints off', async () => {
    const r = await run('checkpoint: { enabled: false } step A { } step B { pause() }');
    assert.equal(r.outcome.status, 'paused');
    assert.equal((await r.state.load(r.outcome.session, 'P'))?.next_step, 'B');
  });

  it('resumes a paused run at the start of the pausing step, with new inputs merged', async () => {
    const body =
      'input approved: bool = false var r = [] step A { r = r + ["A"] } step B { if (!approved) pause("approve?") r = r + ["B"] } step C { r = r + ["C"] }';
    const first = await run(body);
    assert.equal(first.outcome.status, 'paused');
    const again = await run(body, {
      cwd: first.cwd,
      state: first.state,
      resume: true,
      inputs: { approved: true },
    });
    assert.equal(again.outcome.status, 'completed');
    assert.deepEqual(again.outcome.skipped, ['A']);
    assert.deepEqual(again.outcome.executed, ['B', 'C']);
    assert.deepEqual(again.vars, { approved: true, r: ['A', 'B', 'C'] });
  });

  it('fails the run at fail(), naming the step and where it raised', async () => {
    const r = await run(
      'var r = 0 step A { r = 1 } step B { fail("a", 1, null) } step C { r = 3 }',
    );
    assert.equal(r.outcome.status, 'failed');
    assert.deepEqual(r.outcome.executed, ['A']);
    assert.deepEqual(r.vars, { r: 1 });
    assert.deepEqual(await failure('step A { fail("x") }'), {
      kind: 'step_failed',
      step: 'A',
      at: '3:10',
    });
  });
});

/**
 * Pipeline-level behaviour (spec: mhl-language.md §6.2, §6.3, §6.5 parallel, §6.6, §6.9):
 * inputs, the result (`output:` or every non-internal variable), loop pipelines, parallel
 * groups and step timeouts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../interpreter/harness.js';

describe('pipelines: inputs', () => {
  it('uses defaults, lets supplied values win, and may read earlier inputs', async () => {
    const r = await run(
      'input n: number input s: string = "d" input m: number = n + 1 input o: object = {k: 1} step S { }',
      {
        inputs: { n: 2, o: { k: 2 } },
      },
    );
    assert.deepEqual(r.vars, { m: 3, n: 2, o: { k: 2 }, s: 'd' });
  });

  it('reports missing and undeclared inputs together', async () => {
    const r = await run('input n: number input m: string input s: string = "d" step S { }', {
      inputs: { zz: 1, yy: 2, s: 'x' },
    });
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.kind, 'invalid_inputs');
    assert.deepEqual(r.outcome.error?.missing, ['n', 'm']);
    assert.deepEqual(r.outcome.error?.unknown, ['zz', 'yy']);
    assert.deepEqual(r.outcome.executed, []);
  });

  const mismatches: [string, unknown][] = [
    ['number', '3'],
    ['string', 3],
    ['bool', 'true'],
    ['string[]', ['x', 1]],
    ['object', [1]],
    ['{id: number, tags: string[]}', { tags: [] }],
  ];
  for (const [type, supplied] of mismatches) {
    it(`refuses ${JSON.stringify(supplied)} for an input of type ${type}`, async () => {
      const r = await run(`input v: ${type} step S { }`, { inputs: { v: supplied as never } });
      assert.equal(r.outcome.error?.kind, 'invalid_inputs');
      assert.deepEqual(r.outcome.error?.missing, []);
      assert.deepEqual(r.outcome.error?.unknown, []);
    });
  }

  it('accepts null for any type, and extra fields in an object shape', async () => {
    const r = await run('input n: number input p: {id: number} step S { }', {
      inputs: { n: null, p: { id: 1, extra: true } },
    });
    assert.deepEqual(r.vars, { n: null, p: { extra: true, id: 1 } });
  });
});

describe('pipelines: the result', () => {
  it('is every non-internal pipeline variable without output:', async () => {
    const r = await run(
      'input n: number = 4 var a = 1 const c = 2 var __hidden = 3 step S { var local = 1 a = 5 }',
    );
    assert.deepEqual(r.vars, { a: 5, c: 2, n: 4 });
  });

  it('is the output: projection, evaluated once at the end', async () => {
    const r = await run('output: { total: a + b, tag: "t" } var a = 1 var b = 2 step S { a = 10 }');
    assert.deepEqual(r.vars, { tag: 't', total: 12 });
  });

  it('projects the final state of a run that breaks', async () => {
    const r = await run(
      'output: { a: a } var a = 1 var b = 0 step S { a = 2 break } step T { a = 3 }',
    );
    assert.equal(r.outcome.broke, true);
    assert.deepEqual(r.vars, { a: 2 });
  });

  it('is the partial state, not the projection, when paused', async () => {
    const r = await run('output: { doubled: a * 2 } var a = 1 step S { a = 2 pause("p") }');
    assert.equal(r.outcome.status, 'paused');
    assert.deepEqual(r.vars, { a: 2 });
  });

  it('fails the run when output: is not an object', async () => {
    const r = await run('output: 5 var a = 1 step S { }');
    assert.equal(r.outcome.status, 'failed');
    assert.deepEqual(r.outcome.executed, ['S']);
  });

  it('fails the run, not the caller, when a pipeline variable holds a function at a checkpoint', async () => {
    const r = await run('var f = null step S { f = () -> 1 }');
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.kind, 'step_failed');
  });
});

describe('pipelines: ephemeral runs', () => {
  it('write no step checkpoint, result or pointer, and still complete, pause and project', async () => {
    const done = await run('output: { doubled: a * 2 } var a = 1 step S { a = 2 } step T { }', {
      ephemeral: true,
    });
    assert.equal(done.outcome.status, 'completed');
    assert.deepEqual(done.vars, { doubled: 4 });
    assert.equal(await done.state.latest('P'), undefined);
    assert.equal(await done.state.load(done.outcome.session, 'P'), undefined);
    assert.equal(await done.state.readResult(done.outcome.session), undefined);
  });

  it('write the checkpoint of a pause alone: what a caller needs to resume the paused step', async () => {
    const paused = await run('var a = 1 step S { a = 2 } step T { pause("p") }', {
      ephemeral: true,
    });
    assert.equal(paused.outcome.status, 'paused');
    const record = await paused.state.load(paused.outcome.session, 'P');
    assert.deepEqual(
      [record?.next_step, record?.completed_steps, record?.paused],
      ['T', ['S'], { reason: 'p' }],
    );
    const kept = await run('var a = 1 step S { a = 2 pause("p") }');
    assert.ok(await kept.state.load(kept.outcome.session, 'P'), 'a normal run does checkpoint');
  });
});

describe('pipelines: loops', () => {
  it('re-initialises pipeline vars every iteration and stops at max', async () => {
    const r = await run('mem count = 0 var per = 0 step A { count += 1 per += 1 }', {
      header: 'loop workflow P max 3',
    });
    assert.equal(r.outcome.status, 'completed');
    assert.equal(r.outcome.iterations, 3);
    assert.equal(r.outcome.terminalReason, 'max_iterations');
    assert.deepEqual(r.vars, { per: 1 });
  });

  it('honours repeat.max_iterations, checked before each iteration', async () => {
    const two = await run('repeat: { max_iterations: 2 } step A { }', {
      header: 'loop workflow P',
    });
    assert.deepEqual(
      [two.outcome.executed, two.outcome.terminalReason],
      [['A', 'A'], 'max_iterations'],
    );
    const none = await run('repeat: { max_iterations: 0 } step A { }', {
      header: 'loop workflow P',
    });
    assert.deepEqual(none.outcome.executed, []);
  });

  it('evaluates stop_when after a full iteration, seeing its pipeline vars and mem', async () => {
    const r = await run(
      'repeat: { stop_when: last >= 2 && count >= 2 } mem count = 0 var last = 0 var steps = [] step A { steps = steps + ["A"] } step B { count += 1 last = count steps = steps + ["B"] }',
      { header: 'loop workflow P max 10' },
    );
    assert.equal(r.outcome.terminalReason, 'stop_when');
    assert.deepEqual(r.outcome.executed, ['A', 'B', 'A', 'B']);
    assert.deepEqual(r.vars, { last: 2, steps: ['A', 'B'] });
  });

  it('stops at break, which wins over stop_when and max', async () => {
    const r = await run(
      'repeat: { stop_when: false } mem count = 0 step A { count += 1 if (count == 2) break } step B { }',
      { header: 'loop workflow P max 5' },
    );
    assert.equal(r.outcome.status, 'completed');
    assert.equal(r.outcome.broke, true);
    assert.equal(r.outcome.terminalReason, 'break');
    assert.deepEqual(r.outcome.executed, ['A', 'B', 'A']);
  });

  it('aborts the loop on an error, and on a non-bool stop_when', async () => {
    const failing = await run('mem count = 0 step A { count += 1 if (count == 2) fail("x") }', {
      header: 'loop workflow P max 5',
    });
    assert.equal(failing.outcome.status, 'failed');
    assert.equal(failing.outcome.iterations, 1);
    const nonBool = await run('repeat: { stop_when: 1 } step A { }', {
      header: 'loop workflow P max 5',
    });
    assert.equal(nonBool.outcome.status, 'failed');
    assert.deepEqual(nonBool.outcome.executed, ['A']);
  });
});

describe('pipelines: parallel groups', () => {
  it('merges the branches’ writes back after the barrier', async () => {
    const r = await run(
      'var a = 0 var b = 0 var same = 0 var after = null parallel G { step X { var t = 1 a = t same = 5 } step Y { b = 2 same = 5 } } step After { after = [a, b, same] }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual(r.outcome.executed, ['G', 'After']);
    assert.deepEqual(r.vars['after'], [1, 2, 5]);
  });

  it('runs branches on copies of the pipeline variables', async () => {
    const r = await run(
      'var a = [1] var seen = null parallel G { step X { a = a + [2] } step Y { seen = a } }',
    );
    assert.deepEqual(r.vars, { a: [1, 2], seen: [1] });
  });

  it('fails when two branches write different values to one variable', async () => {
    const r = await run('var a = 0 parallel G { step X { a = 1 } step Y { a = 2 } }');
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.step, 'G');
    assert.deepEqual(r.vars, { a: 0 });
  });

  it('fails the group when a branch fails, after every branch has finished', async () => {
    const r = await run(
      'parallel G { step X { fail("x") } step Y { time.sleep(100ms) fs.write("y.txt", "finished") } }',
    );
    assert.equal(readFileSync(join(r.cwd, 'y.txt'), 'utf8'), 'finished');
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.equal(r.outcome.error?.step, 'G');
  });
});

describe('pipelines: step timeouts', () => {
  const table: [string, string][] = [
    ['a command', 'cmd.exec(["sleep", "5"])'],
    ['an agent call', 'Echo.run(prompt: "sleep 5; echo late")'],
    ['time.sleep', 'time.sleep(5s)'],
  ];
  const decls = 'agent Echo {\n  command: "sh"\n  args: ["-c", "${prompt}"]\n}';
  for (const [what, call] of table) {
    it(`aborts ${what} and fails the step as step_timeout`, async () => {
      const started = Date.now();
      const r = await run(
        `var r = 0 step S timeout 200ms { r = 1 ${call} r = 2 } step T { r = 3 }`,
        { decls },
      );
      assert.equal(r.outcome.status, 'failed');
      assert.equal(r.outcome.error?.kind, 'step_timeout');
      assert.equal(r.outcome.error?.step, 'S');
      assert.deepEqual(r.outcome.executed, []);
      assert.ok(Date.now() - started < 4000);
    });
  }
});

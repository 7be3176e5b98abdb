/**
 * Lifecycle hooks and `complete()` (digest §6.2, §7.9; semantics in docs/language.md,
 * "Lifecycle hooks"), through the real front end and runner. Each program records what its
 * hooks saw in a pipeline variable `ev`, which the result shows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure, run } from '../interpreter/harness.js';

/** Hooks that append one line per call to `ev`. */
const RECORD = `var ev = []
session_start: (i) -> { ev += ["start \${i.pipeline} it=\${i.iteration} resumed=\${i.resumed}"] }
step_start: (i) -> { ev += ["> \${i.step}\${if (i.group == null) "" else " in " + i.group}"] }
step_end: (i) -> { ev += ["< \${i.step} \${i.status}\${if (i.error == null) "" else " error"}"] }
stop_failure: (i) -> { ev += ["stop \${i.kind} \${i.step}"] }
session_end: (i) -> { ev += ["end \${i.status} broke=\${i.broke} ran=\${i.executed.join(",")}"] }`;

describe('lifecycle hooks', () => {
  it('run around every step, parallel branches included, in order', async () => {
    const r = await run(`${RECORD}\nstep A { }\nparallel G { step B { } step C { } }\nstep D { }`);
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual(r.vars['ev'], [
      'start P it=1 resumed=false',
      '> A',
      '< A completed',
      '> B in G',
      '> C in G',
      '< B completed',
      '< C completed',
      '> D',
      '< D completed',
      'end completed broke=false ran=A,G,D',
    ]);
  });

  it('give step_end the status, error and duration, and stop_failure the failure', async () => {
    const r = await run(
      `${RECORD}\nvar seen = null\nstep A { }\nstep B { fail("boom") }\nstep C { }`.replace(
        'step_end: (i) -> {',
        'step_end: (i) -> { seen = [i.status, i.error, type_of(i.duration_ms), i.session.size()]\n',
      ),
    );
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.deepEqual(r.vars['ev'], [
      'start P it=1 resumed=false',
      '> A',
      '< A completed',
      '> B',
      '< B failed error',
      'stop step_failed B',
      'end failed broke=false ran=A',
    ]);
    const [status, error, duration, session] = r.vars['seen'] as [string, string, string, number];
    assert.deepEqual([status, duration, session], ['failed', 'number', 32]);
    assert.match(error, /main\.mh:\d+:\d+: /);
  });

  it('report a timed-out step as timed_out', async () => {
    const r = await run(`${RECORD}\nstep A timeout 50ms { time.sleep(5s) }`);
    assert.equal(r.outcome.error?.kind, 'step_timeout');
    assert.ok((r.vars['ev'] as string[]).includes('< A timed_out error'));
  });

  it('see the pipeline variables, and session_end runs before output:', async () => {
    const r = await run(
      'var n = 0\nstep_end: (i) -> { n += 1 }\nsession_end: (i) -> { n = n * 10 }\noutput: { n }\nstep A { }\nstep B { }',
    );
    assert.deepEqual(r.vars, { n: 20 });
  });

  it('see each loop iteration, and session_start runs once per session', async () => {
    const r = await run(
      'var ev = []\nmem log = []\nsession_start: (i) -> { log += ["start"] }\nstep_start: (i) -> { log += ["it ${i.iteration}"] }\noutput: { log }\nstep A { }',
      { header: 'loop workflow P max 3' },
    );
    assert.deepEqual(r.vars['log'], ['start', 'it 1', 'it 2', 'it 3']);
  });

  it('fail the run when one raises, naming the hook at its position', async () => {
    const f = await failure('var ev = []\nstep_end: (i) -> { fail("no") }\nstep A { }');
    assert.deepEqual([f.kind, f.step, f.at], ['hook_failed', 'A', '4:1']);
    const r = await run(
      'var ev = []\nsession_start: (i) -> { x.y() }\nstop_failure: (i) -> { ev += [i.kind] }\nstep A { ev += ["A"] }',
      { decls: 'tool x { y() -> fail("bad") }' },
    );
    assert.equal(r.outcome.error?.kind, 'hook_failed');
    assert.deepEqual([r.outcome.error?.code, r.outcome.error?.line], ['HOOK', 4]);
    assert.deepEqual(r.vars['ev'], ['hook_failed']);
  });

  it('replace the run error with the error of a failing stop_failure or session_end', async () => {
    const f = await failure('stop_failure: (i) -> { fail("again") }\nstep A { fail("first") }');
    assert.deepEqual([f.kind, f.at], ['hook_failed', '3:1']);
    const g = await failure('session_end: (i) -> { fail("x") }\nstep A { }');
    assert.deepEqual([g.kind, g.at], ['hook_failed', '3:1']);
  });

  it('refuse pause() inside a hook', async () => {
    const f = await failure('step_start: (i) -> { pause("no") }\nstep A { }');
    assert.deepEqual([f.kind, f.step], ['hook_failed', 'A']);
  });

  it('do not run again for steps restored from a checkpoint', async () => {
    const body = `${RECORD}\nstep A { }\nstep B { if (!context.resumed) { pause("wait") } }\nstep C { }`;
    const first = await run(body);
    assert.equal(first.outcome.status, 'paused');
    assert.deepEqual(first.vars['ev'], [
      'start P it=1 resumed=false',
      '> A',
      '< A completed',
      '> B',
      '< B paused',
    ]);
    const again = await run(body, { cwd: first.cwd, state: first.state, resume: true });
    assert.equal(again.outcome.status, 'completed');
    assert.deepEqual(again.outcome.skipped, ['A']);
    assert.deepEqual(again.vars['ev'], [
      'start P it=1 resumed=false',
      '> A',
      '< A completed',
      '> B',
      '< B paused',
      '> B',
      '< B completed',
      '> C',
      '< C completed',
      'end completed broke=false ran=B,C',
    ]);
  });
});

describe('complete()', () => {
  it('in session_start ends the run before any step', async () => {
    const r = await run(
      `${RECORD}\nstep A { }`.replace(
        'session_start: (i) -> {',
        'session_start: (i) -> { complete()\n',
      ),
    );
    assert.equal(r.outcome.status, 'completed');
    assert.equal(r.outcome.broke, true);
    assert.deepEqual(r.outcome.executed, []);
    assert.deepEqual(r.vars['ev'], ['end completed broke=true ran=']);
  });

  it('in step_start ends the run without running that step', async () => {
    const r = await run(
      'var ran = []\nstep_start: (i) -> { if (i.step == "B") { complete() } }\nstep A { ran += ["A"] }\nstep B { ran += ["B"] }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual([r.outcome.broke, r.outcome.executed, r.vars['ran']], [true, ['A'], ['A']]);
  });

  it('in step_end ends the run after that step, even a failed one', async () => {
    const r = await run(
      'step_end: (i) -> { if (i.status == "failed") { complete() } }\nstep A { fail("x") }\nstep B { }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual([r.outcome.broke, r.outcome.executed], [true, ['A']]);
  });

  it('in stop_failure turns the failure into a normal end', async () => {
    const r = await run(
      'var why = ""\nstop_failure: (i) -> { why = i.kind\n complete() }\nstep A { fail("x") }\nstep B { }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual([r.outcome.broke, r.vars['why']], [true, 'step_failed']);
  });

  it('in a step ends the run like break, and try/catch lets it pass', async () => {
    const r = await run(
      'var n = 0\nstep A { try { n = 1\n complete()\n n = 2 } catch { n = 3 } }\nstep B { n = 4 }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual([r.outcome.broke, r.outcome.executed, r.vars['n']], [true, ['A'], 1]);
  });

  it('in a parallel branch ends the run after the barrier, with the writes merged', async () => {
    const r = await run(
      'var a = 0\nvar b = 0\nparallel G { step A { a = 1\n complete() } step B { b = 2 } }\nstep C { a = 9 }',
    );
    assert.equal(r.outcome.status, 'completed');
    assert.deepEqual([r.vars['a'], r.vars['b'], r.outcome.broke], [1, 2, true]);
  });

  it('in a loop stops further iterations, as break does', async () => {
    const r = await run(
      'mem n = 0\noutput: { n }\nstep A { n += 1\n if (n == 2) { complete() } }',
      {
        header: 'loop workflow P max 5',
      },
    );
    assert.deepEqual([r.vars['n'], r.outcome.terminalReason], [2, 'break']);
  });
});

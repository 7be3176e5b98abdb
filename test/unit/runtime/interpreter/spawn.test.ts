/**
 * `spawn` / `wait` (spec: mhl-language.md §6.5) with a real subprocess agent: `sh -c <prompt>`,
 * so each prompt is a small shell script. Covers wait all / any / N of, on_error: "collect",
 * fan-out, timeouts, handles joined at step end, handle fields and the concurrency ceiling.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ok, run } from './harness.js';

const decls = 'agent Echo {\n  command: "sh"\n  args: ["-c", "${prompt}"]\n}';

/** Runs a pipeline body with the Echo agent declared; returns its variables. */
const spawned = (body: string, header?: string) =>
  ok(body, { decls, ...(header ? { header } : {}) });

describe('spawn and wait', () => {
  it('waits for all handles and exposes result, ok, error, status and duration_ms', async () => {
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "sleep 0.1; echo A") spawn b = Echo.run(prompt: "echo B") wait a, b r = [a.ok, a.result, a.error, a.status, b.result, a.duration_ms >= 50, "${a}"] }',
    );
    assert.deepEqual(vars['r'], [true, 'A', null, 'ok', 'B', true, '<task Echo>']);
  });

  it('fails fast on the first error, cancelling the rest', async () => {
    const vars = await spawned(
      'var r = null step S { spawn slow = Echo.run(prompt: "sleep 5; echo late") spawn bad = Echo.run(prompt: "echo oops >&2; exit 3") try { wait slow, bad } catch (e) { r = [slow.status, slow.ok, bad.status, bad.ok, is_string(bad.error)] } }',
    );
    assert.deepEqual(vars['r'], ['canceled', false, 'failed', false, true]);
  });

  it('fails the step when a plain wait sees an error', async () => {
    const r = await run(
      'var r = 0 step S { spawn a = Echo.run(prompt: "exit 1") wait a r = 1 } step T { r = 2 }',
      { decls },
    );
    assert.equal(r.outcome.status, 'failed');
    assert.equal(r.outcome.error?.step, 'S');
    assert.deepEqual(r.vars, { r: 0 });
  });

  it('collects errors without failing with on_error: "collect"', async () => {
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "echo A") spawn b = Echo.run(prompt: "exit 3") wait a, b on_error: "collect" r = [a.ok, a.status, b.ok, b.status, is_string(b.error), b.result] }',
    );
    assert.deepEqual(vars['r'], [true, 'ok', false, 'failed', true, null]);
  });

  it('returns at the first success with wait any, cancelling the rest', async () => {
    const started = Date.now();
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "sleep 5; echo A") spawn b = Echo.run(prompt: "echo B") wait any a, b r = [a.status, a.ok, b.status, b.result] }',
    );
    assert.deepEqual(vars['r'], ['canceled', false, 'ok', 'B']);
    assert.ok(Date.now() - started < 4000);
  });

  it('waits for a quorum with wait N of, failing when it cannot be met', async () => {
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "echo A") spawn b = Echo.run(prompt: "exit 1") spawn c = Echo.run(prompt: "echo C") wait 2 of a, b, c r = [a.ok, b.ok, c.ok] }',
    );
    assert.deepEqual(vars['r'], [true, false, true]);
    const r = await run(
      'step S { spawn a = Echo.run(prompt: "echo A") spawn b = Echo.run(prompt: "exit 1") spawn c = Echo.run(prompt: "exit 1") wait 2 of a, b, c }',
      { decls },
    );
    assert.equal(r.outcome.error?.kind, 'step_failed');
    const any = await run(
      'step S { spawn a = Echo.run(prompt: "exit 1") spawn b = Echo.run(prompt: "exit 2") wait any a, b }',
      {
        decls,
      },
    );
    assert.equal(any.outcome.error?.kind, 'step_failed');
  });

  it('fans out over an array, binding the loop variable for each call', async () => {
    const vars = await spawned(
      'var r = null step S { spawn hs = Echo.run(prompt: "echo item-${x}") for x in [1, 2, 3] wait hs r = [hs.size(), hs.map((h) -> h.result), hs[0].ok, type_of(hs)] }',
    );
    assert.deepEqual(vars['r'], [3, ['item-1', 'item-2', 'item-3'], true, 'array']);
  });

  it('fans out over an empty array to no handles, and refuses a non-array', async () => {
    const vars = await spawned(
      'var r = null step S { spawn hs = Echo.run(prompt: "echo ${x}") for x in [] wait hs r = hs.size() }',
    );
    assert.equal(vars['r'], 0);
    const r = await run('step S { spawn hs = Echo.run(prompt: "echo ${x}") for x in "ab" }', {
      decls,
    });
    assert.equal(r.outcome.error?.kind, 'step_failed');
  });

  it('fails a wait that times out, or collects it as cancelled', async () => {
    const r = await run(
      'step S { spawn a = Echo.run(prompt: "sleep 5; echo A") wait a timeout: 200ms }',
      { decls },
    );
    assert.equal(r.outcome.error?.kind, 'step_failed');
    assert.equal(r.outcome.error?.step, 'S');
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "sleep 5; echo A") wait a timeout: 200ms on_error: "collect" r = [a.ok, a.status] }',
    );
    assert.deepEqual(vars['r'], [false, 'canceled']);
  });

  it('joins handles nobody waited for at the end of their step', async () => {
    const vars = await spawned(
      'var r = null step S { spawn a = Echo.run(prompt: "sleep 0.2; echo x > done.txt; echo A") } step T { r = fs.exists("done.txt") }',
    );
    assert.equal(vars['r'], true);
  });

  it('evaluates a spawned call’s arguments against the variables as they were at spawn', async () => {
    const vars = await spawned(
      'spawn: { max_concurrency: 1 } var r = null step S { var x = "first" spawn a = Echo.run(prompt: "sleep 0.2; echo A") spawn b = Echo.run(prompt: "echo ${x}") x = "second" wait a, b r = b.result }',
    );
    assert.equal(vars['r'], 'first');
  });

  it('never runs more than spawn.max_concurrency calls at once', async () => {
    const script =
      'if [ -e busy ]; then echo overlap; else touch busy; sleep 0.1; rm busy; echo alone; fi';
    const vars = await spawned(
      `spawn: { max_concurrency: 1 } var r = null step S { spawn hs = Echo.run(prompt: "${script}") for x in [1, 2, 3] wait hs r = hs.map((h) -> h.result) }`,
    );
    assert.deepEqual(vars['r'], ['alone', 'alone', 'alone']);
  });

  it('refuses to wait on something that is not a handle', async () => {
    const r = await run('step S { var a = 1 wait a }', { decls });
    assert.equal(r.outcome.error?.kind, 'step_failed');
  });
});

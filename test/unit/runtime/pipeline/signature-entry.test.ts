/**
 * Typed pipeline signatures and entry steps (digest §6.1; semantics in docs/language.md),
 * through the real front end and runner, plus the lint rules that keep them runnable.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../../src/lang/checker.js';
import { memoryHost } from '../../../../src/lang/source-host.js';
import { loadProgram, selectPipeline } from '../../../../src/runtime/pipeline/program.js';
import { failure, ok, run } from '../interpreter/harness.js';

const SIGNATURE = 'workflow P(name: string, times: number = 2, tags: string[] = [])';

describe('typed signatures', () => {
  it('bind their parameters as inputs, defaults included', async () => {
    const vars = await ok('var out = ""\nstep S { out = "${name} x${times} ${tags.size()}" }', {
      header: SIGNATURE,
      inputs: { name: 'ana' },
    });
    assert.deepEqual(vars, { name: 'ana', out: 'ana x2 0', tags: [], times: 2 });
  });

  it('validate parameters exactly as inputs: missing, undeclared and mistyped', async () => {
    const r = await run('step S { }', { header: SIGNATURE, inputs: { times: 'x', zz: 1 } });
    assert.equal(r.outcome.error?.kind, 'invalid_inputs');
    assert.deepEqual(r.outcome.error?.missing, ['name']);
    assert.deepEqual(r.outcome.error?.unknown, ['zz']);
  });

  it('take parameters and input members together, parameters first', async () => {
    const vars = await ok('input extra: bool = true\nstep S { }', {
      header: 'pipeline P(a: number)',
      inputs: { a: 1 },
    });
    assert.deepEqual(vars, { a: 1, extra: true });
  });

  it('check the result against the return type', async () => {
    const vars = await ok('var summary = "s"\nstep S { }', {
      header: 'pipeline P(): {summary: string}',
    });
    assert.deepEqual(vars, { summary: 's' });
    const f = await failure('var summary = 3\nstep S { }', {
      header: 'pipeline P(): {summary: string}',
    });
    assert.deepEqual([f.kind, f.at], ['other', '2:15']);
    const g = await failure('var x = 1\noutput: { x }\nstep S { }', {
      header: 'pipeline P(): {summary: string, x: number}',
    });
    assert.deepEqual([g.kind, g.at], ['other', '2:15']);
  });
});

describe('typed signatures: return type aliases', () => {
  it('follow a type alias in the return type', async () => {
    const spec = { decls: 'type Result = {summary: string, tags?: string[]}' };
    const vars = await ok('var summary = "s"\nstep S { }', {
      ...spec,
      header: 'pipeline P(): Result',
    });
    assert.deepEqual(vars, { summary: 's' });
    const f = await failure('var summary = "s"\nvar tags = [1]\nstep S { }', {
      ...spec,
      header: 'pipeline P(): Result',
    });
    assert.deepEqual([f.kind, f.at], ['other', '2:15']);
  });
});

describe('entry steps', () => {
  it('start a run at the entry step; earlier steps run only by goto', async () => {
    const vars = await ok(
      'var trail = []\nstep Setup { trail += ["Setup"] }\nentry step Main { trail += ["Main"]\n if (trail.size() == 1) { goto Setup } }\nstep Last { trail += ["Last"] }',
    );
    assert.deepEqual(vars['trail'], ['Main', 'Setup', 'Main', 'Last']);
  });

  it('start every loop iteration at the entry step', async () => {
    const vars = await ok(
      'mem trail = []\noutput: { trail }\nstep A { trail += ["A"] }\nentry step B { trail += ["B"] }',
      {
        header: 'loop workflow P max 2',
      },
    );
    assert.deepEqual(vars['trail'], ['B', 'B']);
  });
});

function lint(source: string): string[] {
  const host = memoryHost(new Map([['/p/main.mh', source]]));
  return checkFiles(['/p/main.mh'], host).diagnostics.map(
    (d) => `${d.span.line}:${d.span.col} ${d.code}`,
  );
}

describe('lint of hooks, signatures and entry steps', () => {
  it('accepts the runnable forms', () => {
    assert.deepEqual(
      lint(
        'pipeline P(a: string, b: number = 1): {a: string} {\n step_end: (i) -> log(i.step)\n entry step S { log(a, b) }\n}',
      ),
      [],
    );
  });

  it('reports a hook that is not a one-parameter lambda', () => {
    assert.deepEqual(lint('pipeline P {\n step_end: () -> 1\n session_end: 3\n step S { }\n}'), [
      '2:12 INVALID',
      '3:15 INVALID',
    ]);
  });

  it('reports a non-object return type and a second entry step', () => {
    assert.deepEqual(lint('workflow P(): string {\n entry step A { }\n entry step B { }\n}'), [
      '1:15 INVALID',
      '3:13 INVALID',
    ]);
  });

  it('reports a parameter that clashes with an input', () => {
    assert.deepEqual(lint('pipeline P(a: string) {\n input a: string\n step S { }\n}'), [
      '2:2 DUPLICATE',
    ]);
  });
});

describe('partial pipelines', () => {
  it('are fragments: never picked to run, and naming one says so', () => {
    const file = '/p/main.mh';
    const host = memoryHost(new Map([[file, 'partial pipeline F {\n step S { }\n}\n']]));
    const loaded = loadProgram(file, host);
    assert.ok(loaded.ok);
    assert.deepEqual([loaded.pipelines.length, loaded.partials], [0, ['F']]);
    const chosen = selectPipeline(loaded.pipelines, undefined, loaded.partials);
    assert.equal(typeof chosen, 'string');
    assert.match(String(chosen), /^'F' is a partial pipeline/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../src/catalog/types.js';
import { createValidatorCompiler } from '../../../src/catalog/validate.js';

const NAME_SCHEMA: JsonObject = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
  additionalProperties: false,
};
const COUNT_SCHEMA: JsonObject = {
  type: 'object',
  properties: { count: { type: 'number' } },
  additionalProperties: false,
};

/** A compiler whose background tasks run only when the test says so. */
function manual() {
  const tasks: (() => void)[] = [];
  const compile = createValidatorCompiler({ schedule: (task) => tasks.push(task) });
  /** Runs scheduled tasks until none is left; resolves how many ran. */
  const runAll = (): number => {
    let ran = 0;
    for (let task = tasks.shift(); task !== undefined; task = tasks.shift()) {
      task();
      ran++;
    }
    return ran;
  };
  return { compile, tasks, runAll };
}

describe('createValidatorCompiler: compiling at start-up', () => {
  it('schedules one background pass that compiles one validator per turn', () => {
    const { compile, tasks, runAll } = manual();
    const a = compile('A', NAME_SCHEMA);
    compile('B', COUNT_SCHEMA);
    compile('C', { ...COUNT_SCHEMA });
    assert.equal(tasks.length, 1, 'one pass, scheduled by the first validator');
    assert.equal(runAll(), 3, 'one turn per validator');
    assert.deepEqual(a({ name: 'x' }), { ok: true, inputs: { name: 'x' } });
  });

  it('answers a call that arrives before the pass reached its validator', () => {
    const { compile, runAll } = manual();
    const a = compile('A', NAME_SCHEMA);
    const b = compile('B', COUNT_SCHEMA);
    const early = b({ count: 'many' });
    assert.equal(early.ok, false);
    assert.deepEqual(early.ok ? [] : early.error.invalid.map((i) => i.field), ['count']);
    assert.equal(b({ count: 2 }).ok, true);
    runAll();
    assert.equal(a({}).ok, false);
    assert.equal(b({ count: 3 }).ok, true);
  });

  it('leaves a schema Ajv refuses to the call that needs it', () => {
    const { compile, runAll } = manual();
    const bad = compile('Bad', { type: 'object', properties: { x: { type: 'no-such-type' } } });
    const good = compile('Good', NAME_SCHEMA);
    assert.equal(runAll(), 2, 'the pass goes on past the refused schema');
    assert.throws(() => bad({ x: 1 }), /type/);
    assert.equal(good({ name: 'y' }).ok, true);
  });

  it('schedules nothing when no validator is made', () => {
    const { tasks } = manual();
    assert.equal(tasks.length, 0);
  });
});

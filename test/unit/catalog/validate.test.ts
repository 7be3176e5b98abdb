import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type InputCheck,
  type InvalidInputs,
  loadCatalog,
  validateArguments,
  type Workflow,
} from '../../../src/catalog/index.js';

const result = loadCatalog('test/fixtures/catalog/basic');
assert.ok(result.ok);
const { catalog } = result;
const get = (name: string): Workflow => {
  const w = catalog.workflows.get(name);
  assert.ok(w, name);
  return w;
};

function refused(check: InputCheck): InvalidInputs {
  assert.equal(check.ok, false);
  if (check.ok) throw new Error('unreachable');
  return check.error;
}

const TYPES_REQUIRED = {
  text: 't',
  count: 1,
  whole: 2,
  flag: true,
  anything: null,
  list: [],
  record: {},
  names: ['a'],
  grid: [[1]],
  point: { x: 1, y: 2, z: 3 },
  item: { id: 1, tags: [] },
  color: 'Red',
};

describe('validateArguments', () => {
  it('accepts valid arguments and returns them unchanged', () => {
    const args = { target: 'x' };
    assert.deepEqual(validateArguments(get('Build'), args), { ok: true, inputs: args });
    assert.equal(validateArguments(get('Types'), TYPES_REQUIRED).ok, true);
  });

  it('treats absent arguments as none', () => {
    assert.deepEqual(validateArguments(get('Quiet'), undefined), { ok: true, inputs: {} });
    assert.deepEqual(refused(validateArguments(get('Build'), undefined)).missing, ['target']);
  });

  it('names missing and undeclared inputs in one message', () => {
    const error = refused(validateArguments(get('Build'), { verbose: true, y: 1 }));
    assert.deepEqual(error, {
      code: 'INVALID_ARGUMENT',
      workflow: 'Build',
      message:
        'invalid inputs for "Build": missing required input "target"; undeclared input "y" (declared: target, verbose)',
      missing: ['target'],
      undeclared: ['y'],
      invalid: [],
    });
  });

  it('groups several names, sorted', () => {
    const error = refused(validateArguments(get('Build'), { zz: 1, aa: 2 }));
    assert.equal(
      error.message,
      'invalid inputs for "Build": missing required input "target"; undeclared inputs "aa", "zz" (declared: target, verbose)',
    );
  });

  it('reports type errors by field, nested fields included', () => {
    const error = refused(
      validateArguments(get('Types'), {
        ...TYPES_REQUIRED,
        count: '3',
        names: ['a', 2],
        point: { x: 1 },
        item: { id: 'one', tags: [1] },
        color: 'Pink',
      }),
    );
    assert.deepEqual(error.missing, []);
    assert.deepEqual(error.invalid, [
      { field: 'count', problem: 'must be number' },
      { field: 'names[1]', problem: 'must be string' },
      { field: 'point.y', problem: 'is missing' },
      { field: 'item.id', problem: 'must be number' },
      { field: 'item.tags[0]', problem: 'must be string' },
      { field: 'color', problem: 'must be one of "Red", "Green", "Blue"' },
    ]);
    assert.match(error.message, /^invalid inputs for "Types": input "count" must be number; /);
  });

  it('repeats only a few undeclared names, cut short: they come from the caller', () => {
    const hostile = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, '0')}${'k'.repeat(5000)}`, 1]),
    );
    const error = refused(validateArguments(get('Build'), { target: 'x', ...hostile }));
    assert.equal(error.undeclared.length, 10);
    assert.ok(error.undeclared.every((name) => name.length <= 41));
    assert.ok(error.message.length < 400, error.message);
    assert.match(error.message, /undeclared inputs "00k+…", "01k+…", "02k+…" and 47 more/);
  });

  it('lists only the first few invalid values of a long array', () => {
    const names = Array.from({ length: 100_000 }, () => 1);
    const error = refused(validateArguments(get('Types'), { ...TYPES_REQUIRED, names }));
    assert.equal(error.invalid.length, 10);
    assert.deepEqual(error.invalid[0], { field: 'names[0]', problem: 'must be string' });
    assert.ok(error.message.length < 400, error.message);
    assert.match(error.message, /and 99995 more invalid values$/);
  });

  it('refuses arguments that are not an object', () => {
    for (const [args, got] of [
      [[1], 'array'],
      ['x', 'string'],
      [null, 'null'],
    ] as const) {
      const error = refused(validateArguments(get('Build'), args));
      assert.equal(
        error.message,
        `invalid inputs for "Build": arguments must be an object, got ${got}`,
      );
    }
  });

  it('reuses the validator compiled at load', () => {
    const build = get('Build');
    const compiled = build.validate;
    validateArguments(build, { target: 'a' });
    validateArguments(build, {});
    assert.equal(get('Build').validate, compiled);
    assert.notEqual(get('Types').validate, compiled);
    const calls: unknown[] = [];
    const spy: Workflow = {
      ...build,
      validate: (args) => {
        calls.push(args);
        return compiled(args);
      },
    };
    assert.equal(validateArguments(spy, { target: 'b' }).ok, true);
    assert.deepEqual(calls, [{ target: 'b' }]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalog, type Workflow } from '../../../src/catalog/index.js';
import { ArgumentError } from '../../../src/runs/argument-error.js';
import {
  ABSOLUTE_PATH_PATTERN,
  type CallDefaults,
  checkWorkflowCall,
  parseCallContext,
} from '../../../src/runs/call-context.js';

const DEFAULTS: CallDefaults = {
  defaultCwd: '/srv/work',
  defaultTimeoutMs: 60_000,
  requireCwd: false,
};
const REQUIRED: CallDefaults = { ...DEFAULTS, requireCwd: true };

/** The field an `ArgumentError` names, failing when `body` does not throw one. */
function refusedField(body: () => unknown): string {
  try {
    body();
  } catch (error) {
    assert.ok(error instanceof ArgumentError, String(error));
    assert.equal(error.code, 'INVALID_ARGUMENT');
    assert.ok(error.message.length < 200, error.message);
    return error.field;
  }
  return assert.fail('the arguments were accepted');
}

const loaded = loadCatalog('test/fixtures/catalog/basic');
assert.ok(loaded.ok);
const build = loaded.catalog.workflows.get('Build') as Workflow;

describe('parseCallContext', () => {
  it("runs a call without context in the server's directory, within its time limit", () => {
    assert.deepEqual(parseCallContext(undefined, DEFAULTS), {
      cwd: '/srv/work',
      timeoutMs: 60_000,
    });
    assert.deepEqual(parseCallContext({ cwd: '/tmp', timeout_ms: 5 }, DEFAULTS), {
      cwd: '/tmp',
      timeoutMs: 5,
    });
    assert.equal(parseCallContext({ timeout_ms: 10 ** 9 }, DEFAULTS).timeoutMs, 60_000);
  });

  it('names the offending field of a bad context', () => {
    const cases: [unknown, string][] = [
      ['dir', 'context'],
      [[], 'context'],
      [{ cwd: 'relative' }, 'context.cwd'],
      [{ cwd: 7 }, 'context.cwd'],
      [{ timeout_ms: 0 }, 'context.timeout_ms'],
      [{ timeout_ms: 1.5 }, 'context.timeout_ms'],
      [{ timeout_ms: '5' }, 'context.timeout_ms'],
      [{ limit: 100 }, 'context.limit'],
      [{ ['x'.repeat(10_000)]: 1 }, `context.${'x'.repeat(40)}…`],
    ];
    for (const [context, field] of cases) {
      assert.equal(
        refusedField(() => parseCallContext(context, DEFAULTS)),
        field,
        JSON.stringify(context).slice(0, 60),
      );
    }
  });

  it('with --require-cwd, refuses a call without context, or with one but no cwd', () => {
    assert.equal(
      refusedField(() => parseCallContext(undefined, REQUIRED)),
      'context',
    );
    assert.equal(
      refusedField(() => parseCallContext({ timeout_ms: 5 }, REQUIRED)),
      'context.cwd',
    );
    assert.equal(parseCallContext({ cwd: '/tmp' }, REQUIRED).cwd, '/tmp');
  });

  it('advertises a cwd pattern that agrees with the absolute-path check', () => {
    const pattern = new RegExp(ABSOLUTE_PATH_PATTERN, 'u');
    for (const cwd of ['/', '/tmp', 'rel', '', './x', '~/x', 'C:\\x', '\\\\share']) {
      let accepted = true;
      try {
        parseCallContext({ cwd }, DEFAULTS);
      } catch {
        accepted = false;
      }
      assert.equal(pattern.test(cwd), accepted, cwd);
    }
  });
});

describe('checkWorkflowCall', () => {
  it('splits the context from the inputs', () => {
    const checked = checkWorkflowCall(build, { target: 'x', context: { cwd: '/tmp' } }, DEFAULTS);
    assert.deepEqual(checked, {
      inputs: { target: 'x' },
      call: { cwd: '/tmp', timeoutMs: 60_000 },
    });
  });

  it('names the first bad input and keeps the lists', () => {
    try {
      checkWorkflowCall(build, { verbose: 'yes', zz: 1 }, DEFAULTS);
      assert.fail('accepted');
    } catch (error) {
      assert.ok(error instanceof ArgumentError);
      assert.equal(error.field, 'target');
      assert.deepEqual(error.details, {
        missing: ['target'],
        undeclared: ['zz'],
        invalid: [{ field: 'verbose', problem: 'must be boolean' }],
      });
    }
    assert.equal(
      refusedField(() => checkWorkflowCall(build, { target: 1 }, DEFAULTS)),
      'target',
    );
    assert.equal(
      refusedField(() => checkWorkflowCall(build, { target: 'x', y: 1 }, DEFAULTS)),
      'y',
    );
  });
});

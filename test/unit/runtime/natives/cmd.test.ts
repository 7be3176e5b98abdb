/**
 * `cmd.exec` / `cmd.exec_all` against real processes: argv handling, exit codes, the exact child
 * environment, and that timeouts and cancellation leave no process of the group alive.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LangError } from '../../../../src/lang/diagnostics.js';
import { DurationValue, isObject, type Value } from '../../../../src/runtime/interpreter/values.js';
import { CMD_NAMESPACE } from '../../../../src/runtime/natives/cmd.js';
import { runProcess } from '../../../../src/runtime/natives/process-group.js';
import { until } from '../../../helpers/poll.js';
import { isAlive, readPid } from '../../../helpers/processes.js';
import { call, isNativeError, tempDir, testContext } from './native-context.js';

const PATH_ONLY = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };

function field(v: Value, name: string): Value {
  assert.ok(isObject(v), 'expected an object');
  return v[name] as Value;
}

describe('cmd.exec', () => {
  let dir: string;
  let cleanup: () => void;
  before(() => {
    ({ dir, cleanup } = tempDir());
  });
  after(() => cleanup());

  it('passes argv elements verbatim and splits strings on whitespace only', async () => {
    const ctx = testContext(dir, PATH_ONLY);
    const verbatim = await call(CMD_NAMESPACE, 'exec', ctx, [
      ['printf', '%s|', 'a b', '$HOME', '*'],
    ]);
    assert.equal(field(verbatim, 'stdout'), 'a b|$HOME|*|');
    const split = await call(CMD_NAMESPACE, 'exec', ctx, ['printf  %s|  a\tb $HOME']);
    assert.equal(field(split, 'stdout'), 'a|b|$HOME|');
  });

  it('returns a non-zero exit as a value, with both streams', async () => {
    const ctx = testContext(dir, PATH_ONLY);
    const r = await call(CMD_NAMESPACE, 'exec', ctx, [
      ['sh', '-c', 'echo out; echo err >&2; exit 3'],
    ]);
    assert.deepEqual({ ...(r as object) }, { stdout: 'out\n', stderr: 'err\n', exit_code: 3 });
  });

  it('runs in ctx.cwd', async () => {
    const r = await call(CMD_NAMESPACE, 'exec', testContext(dir, PATH_ONLY), ['pwd']);
    assert.equal(field(r, 'stdout'), `${dir}\n`);
  });

  it('gives the child exactly ctx.childEnv, never the parent environment', async () => {
    process.env['MHL_TEST_CMD_SECRET'] = 'do-not-leak-4242';
    try {
      const childEnv = { ...PATH_ONLY, MHL_VISIBLE: 'yes' };
      const r = await call(CMD_NAMESPACE, 'exec', testContext(dir, childEnv), [['env']]);
      const seen = Object.fromEntries(
        String(field(r, 'stdout'))
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      assert.deepEqual(seen, childEnv);
    } finally {
      delete process.env['MHL_TEST_CMD_SECRET'];
    }
  });

  it('raises NATIVE when the program cannot start', async () => {
    const ctx = testContext(dir, PATH_ONLY);
    await assert.rejects(call(CMD_NAMESPACE, 'exec', ctx, ['no-such-program-mhl']), isNativeError);
    const gone = testContext(join(dir, 'missing'), PATH_ONLY);
    await assert.rejects(call(CMD_NAMESPACE, 'exec', gone, ['pwd']), isNativeError);
  });

  it('kills the whole process group on timeout and raises NATIVE', async () => {
    const pidFile = join(dir, 'timeout.pid');
    const ctx = testContext(dir, PATH_ONLY);
    const started = Date.now();
    // The grandchild does not hold the output pipes, so only a group kill can reach it.
    const script = `sleep 30 >/dev/null 2>&1 & echo $! > ${pidFile}; wait`;
    const run = call(CMD_NAMESPACE, 'exec', ctx, [['sh', '-c', script]], {
      timeout: new DurationValue(300),
    });
    const grandchild = await until(() => readPid(pidFile), { what: 'the grandchild pid' });
    assert.ok(isAlive(grandchild));
    await assert.rejects(run, isNativeError);
    assert.ok(Date.now() - started < 5000);
    await until(() => !isAlive(grandchild), { what: 'the grandchild to die', timeoutMs: 2000 });
  });

  it('escalates to SIGKILL for a group that ignores SIGTERM', async () => {
    const pidFile = join(dir, 'stubborn.pid');
    const ctx = testContext(dir, PATH_ONLY);
    const script = `trap "" TERM; sleep 30 & echo $! > ${pidFile}; wait; wait`;
    const started = Date.now();
    const run = call(CMD_NAMESPACE, 'exec', ctx, [['sh', '-c', script]], {
      timeout: new DurationValue(200),
    });
    const grandchild = await until(() => readPid(pidFile), { what: 'the grandchild pid' });
    await assert.rejects(run, isNativeError);
    assert.ok(Date.now() - started < 5000, 'SIGKILL never came');
    await until(() => !isAlive(grandchild), { what: 'the grandchild to die', timeoutMs: 2000 });
  });

  it('kills the whole process group when the signal aborts, rejecting with its reason', async () => {
    const pidFile = join(dir, 'abort.pid');
    const ctx = testContext(dir, PATH_ONLY);
    const run = call(CMD_NAMESPACE, 'exec', ctx, [
      ['sh', '-c', `sleep 30 & echo $! > ${pidFile}; wait`],
    ]);
    const grandchild = await until(() => readPid(pidFile), { what: 'the grandchild pid' });
    const reason = new Error('run cancelled');
    const aborted = Date.now();
    ctx.controller.abort(reason);
    await assert.rejects(run, (e) => e === reason);
    assert.ok(Date.now() - aborted < 2000, 'the run outlived its cancellation');
    await until(() => !isAlive(grandchild), { what: 'the grandchild to die', timeoutMs: 2000 });
  });

  it('refuses to start when the signal is already aborted', async () => {
    const ctx = testContext(dir, PATH_ONLY);
    ctx.controller.abort(new Error('early'));
    await assert.rejects(call(CMD_NAMESPACE, 'exec', ctx, ['true']), { message: 'early' });
  });

  it('raises NATIVE when a stream exceeds the output cap', async () => {
    const run = runProcess(['sh', '-c', 'yes x | head -c 100000; sleep 30'], {
      op: 'cmd.exec',
      cwd: dir,
      env: PATH_ONLY,
      signal: new AbortController().signal,
      maxOutputBytes: 1000,
    });
    await assert.rejects(run, isNativeError);
  });

  const malformed: [string, Value[], Record<string, Value>][] = [
    ['an empty command', [''], {}],
    ['an empty argv', [[]], {}],
    ['a non-string argv element', [['echo', 1]], {}],
    ['a number as command', [42], {}],
    ['a number as timeout', ['true'], { timeout: 5 }],
    ['an unknown option', ['true'], { shell: true }],
  ];
  for (const [what, positional, named] of malformed) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(
        call(CMD_NAMESPACE, 'exec', testContext(dir, PATH_ONLY), positional, named),
        isNativeError,
      );
    });
  }
});

describe('cmd.exec_all', () => {
  it('runs commands concurrently and returns results in input order', async () => {
    const ctx = testContext(process.cwd(), PATH_ONLY);
    const started = Date.now();
    const r = await call(CMD_NAMESPACE, 'exec_all', ctx, [
      [['sh', '-c', 'sleep 0.3; echo slow'], 'echo fast', ['sh', '-c', 'exit 2']],
    ]);
    assert.ok(Date.now() - started < 850, 'commands ran one after another');
    assert.ok(Array.isArray(r));
    assert.deepEqual(
      r.map((x) => [field(x, 'stdout'), field(x, 'exit_code')]),
      [
        ['slow\n', 0],
        ['fast\n', 0],
        ['', 2],
      ],
    );
  });

  it('accepts commands by name and raises the first failure after stopping the rest', async () => {
    const ctx = testContext(process.cwd(), PATH_ONLY);
    const started = Date.now();
    await assert.rejects(
      call(CMD_NAMESPACE, 'exec_all', ctx, [], {
        commands: [['sleep', '30'], ['no-such-program-mhl']],
      }),
      (e) => e instanceof LangError && isNativeError(e),
    );
    assert.ok(Date.now() - started < 5000);
  });

  it('raises NATIVE when commands is not an array', async () => {
    await assert.rejects(
      call(CMD_NAMESPACE, 'exec_all', testContext(process.cwd()), ['ls']),
      isNativeError,
    );
  });
});

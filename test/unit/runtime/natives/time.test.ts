/** `time`: RFC 3339 in and out, token and Go layouts, arithmetic, and a cancellable sleep. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DurationValue, type Value } from '../../../../src/runtime/interpreter/values.js';
import { createTimeNamespace, TIME_NAMESPACE } from '../../../../src/runtime/natives/time.js';
import { call, isNativeError, testContext } from './native-context.js';

const ctx = testContext(process.cwd());
const time = (op: string, ...positional: Value[]): Promise<Value> =>
  call(TIME_NAMESPACE, op, ctx, positional);

describe('time', () => {
  it('prints now() as RFC 3339 UTC to the second, from the injected clock', async () => {
    const fixed = createTimeNamespace(() => Date.UTC(2024, 4, 1, 12, 30, 45, 678));
    assert.equal(await call(fixed, 'now', ctx), '2024-05-01T12:30:45Z');
    assert.match(String(await time('now')), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  const parses: [string, string | undefined, string][] = [
    ['2024-05-01T12:00:00+02:00', undefined, '2024-05-01T10:00:00Z'],
    ['2024-05-01', undefined, '2024-05-01T00:00:00Z'],
    ['2024-05-01 08:15:30.250Z', undefined, '2024-05-01T08:15:30.250Z'],
    ['01/05/2024 14:07', 'dd/MM/yyyy HH:mm', '2024-05-01T14:07:00Z'],
    ['2024-05-01 02:07 PM', 'yyyy-MM-dd hh:mm tt', '2024-05-01T14:07:00Z'],
    ['2024-05-01 15:04:05', '2006-01-02 15:04:05', '2024-05-01T15:04:05Z'],
    ['2024-05-01T12:00:00-01:30', '2006-01-02T15:04:05Z07:00', '2024-05-01T13:30:00Z'],
  ];
  for (const [text, layout, expected] of parses) {
    it(`parses ${text}${layout ? ` with ${layout}` : ''}`, async () => {
      assert.equal(
        await time('parse', ...(layout === undefined ? [text] : [text, layout])),
        expected,
      );
    });
  }

  const badParses: [string, string | undefined][] = [
    ['yesterday', undefined],
    ['2024-02-30', undefined],
    ['2024-05-01T25:00:00Z', undefined],
    ['2024-05-01', 'dd/MM/yyyy'],
  ];
  for (const [text, layout] of badParses) {
    it(`raises NATIVE parsing ${text}${layout ? ` with ${layout}` : ''}`, async () => {
      await assert.rejects(
        time('parse', ...(layout === undefined ? [text] : [text, layout])),
        isNativeError,
      );
    });
  }

  it('formats with tokens, Go layouts, or RFC 3339 by default', async () => {
    const t = '2024-05-01T14:07:09+00:00';
    assert.equal(await time('format', t, 'yyyy-MM-dd HH:mm'), '2024-05-01 14:07');
    assert.equal(await time('format', t, 'hh:mm:ss tt'), '02:07:09 PM');
    assert.equal(await time('format', t, '02 Jan 2006 15h04'), '01 Jan 2024 14h07');
    assert.equal(await time('format', t), '2024-05-01T14:07:09Z');
    assert.equal(await time('format', 0), '1970-01-01T00:00:00Z');
  });

  it('adds durations, diffs in seconds and compares instants', async () => {
    assert.equal(
      await time('add', '2024-05-01T23:59:30Z', new DurationValue(90_000)),
      '2024-05-02T00:01:00Z',
    );
    assert.equal(await time('add', '2024-05-01T00:00:00Z', -1), '2024-04-30T23:59:59Z');
    assert.equal(await time('diff', '2024-05-01T00:01:30Z', '2024-05-01T00:00:00Z'), 90);
    assert.equal(await time('compare', '2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00Z'), 0);
    assert.equal(await time('compare', '2024-05-01', '2024-05-02'), -1);
    assert.equal(await time('compare', '2024-05-02', '2024-05-01'), 1);
  });

  it('sleeps for a duration and returns null', async () => {
    const started = Date.now();
    assert.equal(await time('sleep', new DurationValue(20)), null);
    assert.ok(Date.now() - started >= 15);
  });

  it('rejects a sleep promptly with the abort reason', async () => {
    const c = testContext(process.cwd());
    const started = Date.now();
    const sleeping = call(TIME_NAMESPACE, 'sleep', c, [new DurationValue(30_000)]);
    const reason = new Error('cancelled');
    setImmediate(() => c.controller.abort(reason));
    await assert.rejects(sleeping, (e) => e === reason);
    assert.ok(Date.now() - started < 1000);
  });

  const malformed: [string, string, Value[]][] = [
    ['sleep with a number', 'sleep', [5]],
    ['sleep without a duration', 'sleep', []],
    ['add with a string duration', 'add', ['2024-05-01', '1h']],
    ['compare with a non-time string', 'compare', ['b', 'a']],
    ['format with an object', 'format', [[1]]],
    ['now with an argument', 'now', ['UTC']],
  ];
  for (const [what, op, positional] of malformed) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(call(TIME_NAMESPACE, op, ctx, positional), isNativeError);
    });
  }
});

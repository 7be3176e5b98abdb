/** The argument reader every native uses: binding, type checks and the errors they raise. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DurationValue, newObject } from '../../../../src/runtime/interpreter/values.js';
import { formatDuration, noArgs, readArgs } from '../../../../src/runtime/natives/args.js';
import { args, isNativeError } from './native-context.js';

describe('readArgs', () => {
  it('binds a parameter by position or by name', () => {
    const shape = { positional: ['path', 'content'] };
    const byPosition = readArgs('fs.write', args(['a.txt', 'x']), shape);
    const byName = readArgs('fs.write', args([], { path: 'a.txt', content: 'x' }), shape);
    const mixed = readArgs('fs.write', args(['a.txt'], { content: 'x' }), shape);
    for (const a of [byPosition, byName, mixed]) {
      assert.equal(a.string('path'), 'a.txt');
      assert.equal(a.string('content'), 'x');
    }
  });

  it('treats null as absent for optional parameters', () => {
    const a = readArgs('git.status', args([null, 'repo']), { positional: ['paths', 'dir'] });
    assert.equal(a.optStrings('paths'), undefined);
    assert.equal(a.optString('dir'), 'repo');
    assert.equal(a.has('paths'), false);
  });

  it('reads durations as milliseconds and collects rest arguments', () => {
    const a = readArgs('x.y', args(['a', 'b', 'c'], { timeout: new DurationValue(1500) }), {
      positional: ['first'],
      named: ['timeout'],
      rest: true,
    });
    assert.equal(a.duration('timeout'), 1500);
    assert.deepEqual(a.rest(), ['b', 'c']);
  });

  it('reads a list of strings from an array or a single string', () => {
    const shape = { positional: ['paths'] };
    assert.deepEqual(readArgs('git.add', args([['a', 'b']]), shape).optStrings('paths'), [
      'a',
      'b',
    ]);
    assert.deepEqual(readArgs('git.add', args(['a']), shape).optStrings('paths'), ['a']);
  });

  const bad: [string, () => unknown][] = [
    ['too many positional', () => readArgs('fs.read', args(['a', 'b']), { positional: ['path'] })],
    [
      'an unknown name',
      () => readArgs('fs.read', args([], { pth: 'a' }), { positional: ['path'] }),
    ],
    [
      'a parameter given twice',
      () => readArgs('fs.read', args(['a'], { path: 'b' }), { positional: ['path'] }),
    ],
    [
      'a missing argument',
      () => readArgs('fs.read', args(), { positional: ['path'] }).string('path'),
    ],
    [
      'an explicit null',
      () => readArgs('fs.read', args([null]), { positional: ['path'] }).string('path'),
    ],
    ['a wrong type', () => readArgs('fs.read', args([3]), { positional: ['path'] }).string('path')],
    [
      'a number where a duration belongs',
      () =>
        readArgs('cmd.exec', args([], { timeout: 30 }), { positional: ['timeout'] }).optDuration(
          'timeout',
        ),
    ],
    [
      'a fractional integer',
      () => readArgs('git.log', args([1.5]), { positional: ['n'] }).integer('n', 1),
    ],
    [
      'a non-string list element',
      () => readArgs('git.add', args([['a', 1]]), { positional: ['paths'] }).optStrings('paths'),
    ],
    ['an object where none is allowed', () => noArgs('uuid.v4', args([newObject()]))],
  ];
  for (const [what, fn] of bad) {
    it(`raises NATIVE for ${what}`, () => assert.throws(fn, isNativeError));
  }
});

describe('formatDuration', () => {
  it('prints durations the way programs write them', () => {
    assert.deepEqual([250, 1000, 1500, 30_000, 90_000, 3_600_000, 3_723_000].map(formatDuration), [
      '250ms',
      '1s',
      '1.5s',
      '30s',
      '1m30s',
      '1h',
      '1h2m3s',
    ]);
  });
});

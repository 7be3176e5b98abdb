/** The pure namespaces: `json`, `log` and `uuid`, plus the `NATIVES` table itself. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DurationValue,
  EnumValue,
  isObject,
  newObject,
  type Value,
} from '../../../../src/runtime/interpreter/values.js';
import { NATIVES } from '../../../../src/runtime/natives/index.js';
import { JSON_NAMESPACE } from '../../../../src/runtime/natives/json.js';
import { LOG_NAMESPACE } from '../../../../src/runtime/natives/log.js';
import { UUID_NAMESPACE, uuidV7 } from '../../../../src/runtime/natives/uuid.js';
import { call, isNativeError, testContext } from './native-context.js';

const ctx = testContext(process.cwd());

describe('json', () => {
  const json = (op: string, ...positional: Value[]): Promise<Value> =>
    call(JSON_NAMESPACE, op, ctx, positional);

  it('parses into null-prototype objects', async () => {
    const v = await json('parse', '{"__proto__": 1, "a": [1, "x", null, {"b": false}]}');
    assert.ok(isObject(v));
    assert.equal(Object.getPrototypeOf(v), null);
    assert.equal(Object.getOwnPropertyDescriptor(v, '__proto__')?.value, 1);
    assert.deepEqual(v['a'], [1, 'x', null, newObject([['b', false]])]);
  });

  it('parses JSON Lines, skipping blank lines', async () => {
    assert.deepEqual(await json('parse_lines', '{"n":1}\n\n  \n[2]\n"three"\n'), [
      newObject([['n', 1]]),
      [2],
      'three',
    ]);
  });

  it('stringifies with sorted keys, compactly', async () => {
    const v = newObject([
      ['b', 1],
      [
        'a',
        newObject([
          ['d', [true]],
          ['c', null],
        ]),
      ],
    ]);
    assert.equal(await json('stringify', v), '{"a":{"c":null,"d":[true]},"b":1}');
    assert.equal(await json('stringify', new EnumValue('Status', 'Done')), '"Done"');
  });

  const bad: [string, string, Value[]][] = [
    ['invalid JSON', 'parse', ['{"a": }']],
    ['an invalid line', 'parse_lines', ['{}\nnope\n']],
    ['a non-string text', 'parse', [newObject()]],
    ['stringify without a value', 'stringify', []],
  ];
  for (const [what, op, positional] of bad) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(json(op, ...positional), isNativeError);
    });
  }
});

describe('log', () => {
  it('writes one prefixed, space-joined line per call and returns null', async () => {
    const c = testContext(process.cwd());
    const values: Value[] = [
      'done:',
      3,
      newObject([
        ['b', 1],
        ['a', [true]],
      ]),
      null,
      new DurationValue(5),
    ];
    assert.equal(await call(LOG_NAMESPACE, 'info', c, values), null);
    assert.equal(await call(LOG_NAMESPACE, 'warn', c, ['careful']), null);
    assert.equal(await call(LOG_NAMESPACE, 'error', c, []), null);
    assert.deepEqual(c.lines, [
      '[INFO] done: 3 {"a":[true],"b":1} null 5ms',
      '[WARN] careful',
      '[ERROR] ',
    ]);
  });

  it('raises NATIVE for a named argument', async () => {
    await assert.rejects(call(LOG_NAMESPACE, 'info', ctx, [], { msg: 'x' }), isNativeError);
  });
});

describe('uuid', () => {
  it('makes distinct version-4 identifiers', async () => {
    const a = await call(UUID_NAMESPACE, 'v4', ctx);
    const b = await call(UUID_NAMESPACE, 'v4', ctx);
    assert.match(
      String(a),
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.notEqual(a, b);
  });

  it('makes version-7 identifiers that start with the time and sort by it', async () => {
    assert.match(
      String(await call(UUID_NAMESPACE, 'v7', ctx)),
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const early = uuidV7(Date.UTC(2024, 0, 1));
    const late = uuidV7(Date.UTC(2024, 0, 1) + 1);
    assert.equal(
      early.slice(0, 13).replace('-', ''),
      Date.UTC(2024, 0, 1).toString(16).padStart(12, '0'),
    );
    assert.ok(early < late);
  });
});

describe('NATIVES', () => {
  it('holds every namespace but mem, with no inherited members', () => {
    assert.deepEqual(Object.keys(NATIVES).sort(), [
      'cmd',
      'dir',
      'fs',
      'git',
      'html',
      'http',
      'json',
      'log',
      'time',
      'uuid',
    ]);
    assert.equal(NATIVES['toString'], undefined);
    for (const ns of Object.values(NATIVES)) {
      assert.equal(Object.getPrototypeOf(ns), null);
      assert.ok(Object.isFrozen(ns));
      assert.equal(ns['constructor'], undefined);
    }
  });

  it('exposes the operations of the digest', () => {
    const ops = Object.fromEntries(
      Object.entries(NATIVES).map(([k, ns]) => [k, Object.keys(ns).sort()]),
    );
    assert.deepEqual(ops, {
      cmd: ['exec', 'exec_all'],
      dir: ['create', 'delete', 'exists', 'list'],
      fs: ['append', 'delete', 'exists', 'join', 'list', 'read', 'write'],
      git: ['add', 'commit', 'diff', 'log', 'rev_parse', 'status'],
      html: ['get_attribute', 'get_element', 'get_elements', 'get_text', 'parse', 'to_html'],
      http: ['delete', 'download', 'get', 'head', 'options', 'patch', 'post', 'put'],
      json: ['parse', 'parse_lines', 'stringify'],
      log: ['error', 'info', 'warn'],
      time: ['add', 'compare', 'diff', 'format', 'now', 'parse', 'sleep'],
      uuid: ['v4', 'v7'],
    });
  });
});

/** `fs` and `dir` against a real temporary directory: round trips, listing, deletion, errors. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newObject, type Value } from '../../../../src/runtime/interpreter/values.js';
import { DIR_NAMESPACE } from '../../../../src/runtime/natives/dir.js';
import { FS_NAMESPACE } from '../../../../src/runtime/natives/fs.js';
import { call, isNativeError, type TestContext, tempDir, testContext } from './native-context.js';

describe('fs', () => {
  let dir: string;
  let cleanup: () => void;
  let ctx: TestContext;
  before(() => {
    ({ dir, cleanup } = tempDir());
    ctx = testContext(dir);
  });
  after(() => cleanup());

  const fs = (op: string, ...positional: Value[]): Promise<Value> =>
    call(FS_NAMESPACE, op, ctx, positional);

  it('writes, reads, appends and deletes relative to ctx.cwd', async () => {
    assert.equal(await fs('write', 'a/b/note.txt', 'héllo\n'), true);
    assert.equal(readFileSync(join(dir, 'a/b/note.txt'), 'utf8'), 'héllo\n');
    assert.equal(await fs('append', 'a/b/note.txt', 'more'), true);
    assert.equal(await fs('read', 'a/b/note.txt'), 'héllo\nmore');
    assert.equal(await fs('write', 'a/b/note.txt', 'short'), true);
    assert.equal(await fs('read', 'a/b/note.txt'), 'short');
    assert.equal(await fs('exists', 'a/b/note.txt'), true);
    assert.equal(await fs('delete', 'a/b/note.txt'), true);
    assert.equal(await fs('exists', 'a/b/note.txt'), false);
  });

  it('accepts path: and content: by name', async () => {
    await call(FS_NAMESPACE, 'write', ctx, [], { path: 'named.txt', content: 'n' });
    assert.equal(await call(FS_NAMESPACE, 'read', ctx, [], { path: 'named.txt' }), 'n');
  });

  it('appends to a file that does not exist yet', async () => {
    await fs('append', 'logs/new.log', 'line\n');
    assert.equal(await fs('read', 'logs/new.log'), 'line\n');
  });

  it('lists immediate entries as joined, sorted paths', async () => {
    mkdirSync(join(dir, 'listing/sub'), { recursive: true });
    writeFileSync(join(dir, 'listing/b.txt'), '');
    writeFileSync(join(dir, 'listing/a.txt'), '');
    assert.deepEqual(await fs('list', 'listing'), [
      'listing/a.txt',
      'listing/b.txt',
      'listing/sub',
    ]);
  });

  it('joins segments', async () => {
    assert.equal(await fs('join', 'out', 'logs', 'smoke.log'), 'out/logs/smoke.log');
    assert.equal(await fs('join', 'a/', '../b'), 'b');
  });

  it('deletes an empty directory but not a full one', async () => {
    mkdirSync(join(dir, 'empty'));
    assert.equal(await fs('delete', 'empty'), true);
    mkdirSync(join(dir, 'full'));
    writeFileSync(join(dir, 'full/x'), '');
    await assert.rejects(fs('delete', 'full'), isNativeError);
    assert.ok(existsSync(join(dir, 'full/x')));
  });

  const failures: [string, string, Value[]][] = [
    ['reading a missing file', 'read', ['missing.txt']],
    ['reading a directory', 'read', ['.']],
    ['deleting a missing path', 'delete', ['missing.txt']],
    ['listing a missing directory', 'list', ['missing']],
    ['writing a non-string', 'write', ['x.json', newObject([['a', 1]])]],
    ['a non-string path', 'read', [3]],
    ['joining nothing', 'join', []],
    ['joining a number', 'join', ['a', 1]],
    ['a missing content argument', 'write', ['x.txt']],
  ];
  for (const [what, op, positional] of failures) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(call(FS_NAMESPACE, op, ctx, positional), isNativeError);
    });
  }

  it('rejects with the abort reason once the run is cancelled', async () => {
    const cancelled = testContext(dir);
    const reason = new Error('stop');
    cancelled.controller.abort(reason);
    await assert.rejects(call(FS_NAMESPACE, 'read', cancelled, ['x']), (e) => e === reason);
  });
});

describe('dir', () => {
  let dir: string;
  let cleanup: () => void;
  let ctx: TestContext;
  before(() => {
    ({ dir, cleanup } = tempDir());
    ctx = testContext(dir);
  });
  after(() => cleanup());

  const d = (op: string, ...positional: Value[]): Promise<Value> =>
    call(DIR_NAMESPACE, op, ctx, positional);

  it('creates nested directories idempotently and lists them sorted', async () => {
    assert.equal(await d('create', 'tree/b'), true);
    assert.equal(await d('create', 'tree/a'), true);
    assert.equal(await d('create', 'tree/a'), true);
    writeFileSync(join(dir, 'tree/c.txt'), '');
    assert.deepEqual(await d('list', 'tree'), ['tree/a', 'tree/b', 'tree/c.txt']);
  });

  it('answers exists only for directories', async () => {
    writeFileSync(join(dir, 'file.txt'), '');
    assert.equal(await d('exists', 'tree'), true);
    assert.equal(await d('exists', 'file.txt'), false);
    assert.equal(await d('exists', 'nowhere'), false);
  });

  it('deletes only empty directories', async () => {
    assert.equal(await d('delete', 'tree/a'), true);
    assert.equal(existsSync(join(dir, 'tree/a')), false);
    await assert.rejects(d('delete', 'tree'), isNativeError);
    await assert.rejects(d('delete', 'file.txt'), isNativeError);
    await assert.rejects(d('delete', 'nowhere'), isNativeError);
  });
});

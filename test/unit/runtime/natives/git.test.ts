/** `git` against a real temporary repository, run through the process-group runner. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isObject, type Value } from '../../../../src/runtime/interpreter/values.js';
import { GIT_NAMESPACE } from '../../../../src/runtime/natives/git.js';
import { call, isNativeError, type TestContext, tempDir, testContext } from './native-context.js';

function result(v: Value): { stdout: string; stderr: string; exit_code: number } {
  assert.ok(isObject(v));
  return {
    stdout: v['stdout'] as string,
    stderr: v['stderr'] as string,
    exit_code: v['exit_code'] as number,
  };
}

describe('git', () => {
  let root: string;
  let cleanup: () => void;
  let ctx: TestContext;
  const git = (
    op: string,
    positional: Value[],
    named: Record<string, Value> = {},
  ): Promise<Value> => call(GIT_NAMESPACE, op, ctx, positional, named);

  before(() => {
    ({ dir: root, cleanup } = tempDir('mhl-git-'));
    const repo = join(root, 'repo');
    mkdirSync(repo);
    const setup = (...args: string[]): void => {
      execFileSync('git', ['-C', repo, ...args], { stdio: 'ignore' });
    };
    setup('init', '-q');
    setup('config', 'user.email', 'test@example.com');
    setup('config', 'user.name', 'Test');
    setup('config', 'commit.gpgsign', 'false');
    ctx = testContext(root, { PATH: process.env['PATH'] ?? '/usr/bin:/bin' });
  });
  after(() => cleanup());

  it('stages, diffs, commits and reads history with dir as the trailing argument', async () => {
    writeFileSync(join(root, 'repo/a.txt'), 'hello\n');
    assert.match(result(await git('status', [[], 'repo'])).stdout, /^\?\? a\.txt$/m);
    assert.equal(result(await git('add', [['.'], 'repo'])).exit_code, 0);
    assert.match(String(await git('diff', ['--cached', 'repo'])), /^\+hello$/m);
    const done = result(await git('commit', ['first commit', [], 'repo']));
    assert.equal(done.exit_code, 0, done.stderr);
    assert.equal(await git('diff', ['--cached', 'repo']), '');
    const hash = await git('rev_parse', ['HEAD', 'repo']);
    assert.match(String(hash), /^[0-9a-f]{7,}$/);
    assert.equal(await git('log', [5, 'repo']), `${hash} first commit\n`);
  });

  it('accepts dir: by name and limits status and commit to paths', async () => {
    writeFileSync(join(root, 'repo/a.txt'), 'changed\n');
    writeFileSync(join(root, 'repo/b.txt'), 'new\n');
    const status = result(await git('status', [['b.txt']], { dir: 'repo' }));
    assert.equal(status.stdout, '?? b.txt\n');
    await git('add', [['a.txt', 'b.txt']], { dir: 'repo' });
    const done = result(await git('commit', ['only a', ['a.txt']], { dir: 'repo' }));
    assert.equal(done.exit_code, 0, done.stderr);
    assert.equal(result(await git('status', [], { dir: 'repo' })).stdout, 'A  b.txt\n');
    assert.match(String(await git('log', [1], { dir: 'repo' })), / only a\n$/);
  });

  it('returns a failing status or commit as a value', async () => {
    mkdirSync(join(root, 'plain'), { recursive: true });
    const notRepo = result(await git('status', [[], 'plain']));
    assert.notEqual(notRepo.exit_code, 0);
    assert.match(notRepo.stderr, /not a git repository/);
    const nothing = result(await git('commit', ['empty', ['a.txt'], 'repo']));
    assert.notEqual(nothing.exit_code, 0);
  });

  it('raises NATIVE when diff, rev_parse or log fail', async () => {
    await assert.rejects(git('rev_parse', ['no-such-ref', 'repo']), isNativeError);
    await assert.rejects(git('diff', ['--no-such-flag', 'repo']), isNativeError);
    await assert.rejects(git('log', [3, 'plain']), isNativeError);
  });

  const malformed: [string, string, Value[]][] = [
    ['add without paths', 'add', [[], 'repo']],
    ['a commit message that is not a string', 'commit', [3]],
    ['a zero log count', 'log', [0, 'repo']],
    ['a non-string path', 'status', [[1], 'repo']],
  ];
  for (const [what, op, positional] of malformed) {
    it(`raises NATIVE for ${what}`, async () => {
      await assert.rejects(git(op, positional), isNativeError);
    });
  }
});

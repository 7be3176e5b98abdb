/**
 * The `git` native namespace: a few porcelain commands run as `git [-C dir] …` through the same
 * process-group runner as `cmd`, with the run's child environment and working directory.
 *
 * `status`, `add` and `commit` return `{stdout, stderr, exit_code}` (a failing exit is a value);
 * `diff`, `rev_parse` and `log` return text and raise on a failing exit. The repository is
 * `dir:` (named, or the trailing positional argument the samples use). See the digest, §8 "git".
 */
import type { CallArgs, Value } from '../interpreter/values.js';
import { type ArgReader, defineNamespace, nativeError, readArgs } from './args.js';
import { processResultValue } from './cmd.js';
import type { NativeContext } from './native.js';
import { type ProcessResult, runProcess } from './process-group.js';

async function git(
  a: ArgReader,
  ctx: NativeContext,
  args: readonly string[],
): Promise<ProcessResult> {
  const dir = a.optString('dir');
  const argv = ['git', ...(dir === undefined ? [] : ['-C', dir]), ...args];
  return runProcess(argv, { op: a.op, cwd: ctx.cwd, env: ctx.childEnv, signal: ctx.signal });
}

/** Runs git and returns stdout, raising `NATIVE` with git's stderr on a failing exit. */
async function gitText(a: ArgReader, ctx: NativeContext, args: readonly string[]): Promise<string> {
  const r = await git(a, ctx, args);
  if (r.exitCode !== 0) {
    const why = r.stderr.trim() || r.stdout.trim() || 'no output';
    throw nativeError(a.op, `git exited with ${r.exitCode}: ${why}`);
  }
  return r.stdout;
}

/** `-- path…` when paths were given, nothing otherwise. */
function pathspec(paths: readonly string[] | undefined): string[] {
  return paths && paths.length > 0 ? ['--', ...paths] : [];
}

/** `git.status(paths?, dir?)` → `git status --porcelain [-- paths]`. */
async function status(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.status', args, { positional: ['paths', 'dir'] });
  const paths = a.optStrings('paths');
  return processResultValue(await git(a, ctx, ['status', '--porcelain', ...pathspec(paths)]));
}

/** `git.add(paths, dir?)` → `git add -A -- paths` (at least one path). */
async function add(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.add', args, { positional: ['paths', 'dir'] });
  const paths = a.optStrings('paths') ?? [];
  if (paths.length === 0) {
    throw nativeError(a.op, 'paths must name at least one path (use ["."] for all)');
  }
  return processResultValue(await git(a, ctx, ['add', '-A', ...pathspec(paths)]));
}

/** `git.commit(message, paths?, dir?)` → `git commit -m message [-- paths]`. */
async function commit(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.commit', args, { positional: ['message', 'paths', 'dir'] });
  const message = a.string('message');
  const paths = a.optStrings('paths');
  return processResultValue(await git(a, ctx, ['commit', '-m', message, ...pathspec(paths)]));
}

/** `git.diff(target?, dir?)` → the diff text; `target` is split on whitespace (`"--cached"`). */
async function diff(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.diff', args, { positional: ['target', 'dir'] });
  const target = (a.optString('target') ?? '').split(/\s+/).filter((s) => s !== '');
  return gitText(a, ctx, ['diff', ...target]);
}

/** `git.rev_parse(ref, dir?)` → the short hash, trimmed. */
async function revParse(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.rev_parse', args, { positional: ['ref', 'dir'] });
  const ref = a.string('ref');
  return (await gitText(a, ctx, ['rev-parse', '--short', '--verify', ref])).trim();
}

/** `git.log(n, dir?)` → the last `n` commits, one `--oneline` line each. */
async function log(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('git.log', args, { positional: ['n', 'dir'] });
  const n = a.integer('n', 1);
  return gitText(a, ctx, ['log', '--oneline', '-n', String(n)]);
}

/**
 * The `git` namespace: `status`, `add`, `commit`, `diff`, `rev_parse`, `log`. Raises `NATIVE`
 * for bad arguments, launch failure and (text commands) a failing exit; honours `ctx.signal`.
 */
export const GIT_NAMESPACE = defineNamespace({
  status,
  add,
  commit,
  diff,
  rev_parse: revParse,
  log,
});

/**
 * The `fs` native namespace: read and write text files under the run's working directory.
 *
 * Relative paths resolve against `ctx.cwd`, never this process's directory. Results echo paths
 * as the program wrote them (`fs.list("out")` → `["out/a.md"]`). Every failure becomes a
 * catchable `NATIVE` error naming the path. See the language digest, §8 "fs".
 */
import { appendFile, mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type CallArgs, typeOf, type Value } from '../interpreter/values.js';
import { defineNamespace, nativeError, readArgs } from './args.js';
import type { NativeContext } from './native.js';

const FS_REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'a parent is not a directory',
  ENOTEMPTY: 'directory is not empty',
  EEXIST: 'already exists',
};

/**
 * Maps a file-system failure to a `NATIVE` error (`fs.read: no such file or directory: a.txt`);
 * an abort is passed through unchanged so cancellation stays uncatchable.
 */
export function fsError(op: string, path: string, e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const reason = (code && FS_REASONS[code]) ?? (e instanceof Error ? e.message : String(e));
  return nativeError(op, `${reason}: ${path}`, e);
}

/** Runs one file-system call for `op` on `path`, mapping its failure with `fsError`. */
export async function fsCall<T>(
  op: string,
  path: string,
  ctx: NativeContext,
  action: (abs: string) => Promise<T>,
): Promise<T> {
  ctx.signal.throwIfAborted();
  try {
    return await action(resolve(ctx.cwd, path));
  } catch (e) {
    throw fsError(op, path, e, ctx.signal);
  }
}

/** Whether `path` exists (as a directory when `dirOnly`); false only for not-found. */
export async function pathExists(
  op: string,
  path: string,
  ctx: NativeContext,
  dirOnly: boolean,
): Promise<boolean> {
  return fsCall(op, path, ctx, async (abs) => {
    try {
      const s = await stat(abs);
      return dirOnly ? s.isDirectory() : true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw e;
    }
  });
}

/** The immediate entries of a directory as `join(path, name)`, sorted. */
export async function listDir(op: string, path: string, ctx: NativeContext): Promise<Value> {
  const names = await fsCall(op, path, ctx, (abs) => readdir(abs));
  return names.sort().map((n) => join(path, n));
}

function pathAndContent(op: string, args: CallArgs): { path: string; content: string } {
  const a = readArgs(op, args, { positional: ['path', 'content'] });
  const path = a.string('path');
  const content = a.value('content');
  if (typeof content !== 'string') {
    throw nativeError(op, `content must be a string, got ${typeOf(content)} (use json.stringify)`);
  }
  return { path, content };
}

function onePath(op: string, args: CallArgs): string {
  return readArgs(op, args, { positional: ['path'] }).string('path');
}

/** `fs.read(path)` → the file's text (UTF-8). */
async function read(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const path = onePath('fs.read', args);
  return fsCall('fs.read', path, ctx, (abs) =>
    readFile(abs, { encoding: 'utf8', signal: ctx.signal }),
  );
}

/** `fs.exists(path)` → whether anything exists there. */
async function exists(args: CallArgs, ctx: NativeContext): Promise<Value> {
  return pathExists('fs.exists', onePath('fs.exists', args), ctx, false);
}

/** `fs.write(path, content)` → true; creates parent directories and truncates. */
async function write(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const { path, content } = pathAndContent('fs.write', args);
  return fsCall('fs.write', path, ctx, async (abs) => {
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, content, { encoding: 'utf8', signal: ctx.signal });
    return true;
  });
}

/** `fs.append(path, content)` → true; creates the file and its parent directories if needed. */
async function append(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const { path, content } = pathAndContent('fs.append', args);
  return fsCall('fs.append', path, ctx, async (abs) => {
    await mkdir(dirname(abs), { recursive: true });
    await appendFile(abs, content, 'utf8');
    return true;
  });
}

/** `fs.delete(path)` → true; a file or an empty directory. A missing path raises. */
async function remove(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const path = onePath('fs.delete', args);
  return fsCall('fs.delete', path, ctx, async (abs) => {
    if ((await stat(abs)).isDirectory()) await rmdir(abs);
    else await rm(abs);
    return true;
  });
}

/** `fs.join(segment, …)` → the segments joined with `/` and normalised. */
async function joinPath(args: CallArgs): Promise<Value> {
  const a = readArgs('fs.join', args, { positional: [], rest: true });
  const parts = a.rest().map((p, i) => {
    if (typeof p !== 'string') {
      throw nativeError(a.op, `segment ${i + 1} must be a string, got ${typeOf(p)}`);
    }
    return p;
  });
  if (parts.length === 0) throw nativeError(a.op, 'needs at least one path segment');
  return join(...parts);
}

/** `fs.list(dir)` → the directory's immediate entries as joined paths, sorted. */
async function list(args: CallArgs, ctx: NativeContext): Promise<Value> {
  return listDir('fs.list', onePath('fs.list', args), ctx);
}

/**
 * The `fs` namespace: `read`, `exists`, `write`, `append`, `delete`, `join`, `list`. Raises
 * `NATIVE` for bad arguments and failed I/O; checks `ctx.signal` before each call.
 */
export const FS_NAMESPACE = defineNamespace({
  read,
  exists,
  write,
  append,
  delete: remove,
  join: joinPath,
  list,
});

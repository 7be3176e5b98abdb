/**
 * The `dir` native namespace: directories under the run's working directory.
 *
 * Shares path resolution and error mapping with `fs`; it never removes anything but an empty
 * directory. See the language digest, §8 "dir".
 */
import { mkdir, rmdir, stat } from 'node:fs/promises';
import type { CallArgs, Value } from '../interpreter/values.js';
import { defineNamespace, nativeError, readArgs } from './args.js';
import { fsCall, listDir, pathExists } from './fs.js';
import type { NativeContext } from './native.js';

function onePath(op: string, args: CallArgs): string {
  return readArgs(op, args, { positional: ['path'] }).string('path');
}

/** `dir.create(path)` → true; creates missing parents, and is a no-op when it exists. */
async function create(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const path = onePath('dir.create', args);
  return fsCall('dir.create', path, ctx, async (abs) => {
    await mkdir(abs, { recursive: true });
    return true;
  });
}

/** `dir.exists(path)` → true only for a directory. */
async function exists(args: CallArgs, ctx: NativeContext): Promise<Value> {
  return pathExists('dir.exists', onePath('dir.exists', args), ctx, true);
}

/** `dir.list(path)` → immediate entries as joined paths, sorted. */
async function list(args: CallArgs, ctx: NativeContext): Promise<Value> {
  return listDir('dir.list', onePath('dir.list', args), ctx);
}

/** `dir.delete(path)` → true; only an empty directory. */
async function remove(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const path = onePath('dir.delete', args);
  const isDir = await fsCall('dir.delete', path, ctx, async (abs) =>
    (await stat(abs)).isDirectory(),
  );
  if (!isDir) throw nativeError('dir.delete', `not a directory: ${path} (use fs.delete for files)`);
  return fsCall('dir.delete', path, ctx, async (abs) => {
    await rmdir(abs);
    return true;
  });
}

/** The `dir` namespace: `create`, `exists`, `list`, `delete`. Raises `NATIVE`; checks `ctx.signal`. */
export const DIR_NAMESPACE = defineNamespace({ create, exists, list, delete: remove });

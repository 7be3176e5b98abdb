/**
 * Crash-safe file writes, the one module every file the project writes goes through (the dir
 * store's records and checkpoints, `mhl pack`'s output, agents' disk caches, `json` memories):
 * temp file in the target's own directory → fsync → rename → fsync of the directory, so after a
 * crash a reader finds the old bytes or the new ones, never a mix; files 0600, directories 0700.
 * File system calls go through an injected `AtomicFs`, so tests can simulate failures (a
 * cross-device rename) without patching `node:fs`; on the real one a write goes to the write
 * worker thread when it is free (`write-offload.ts`), which makes the same calls.
 *
 * This module writes bytes; it knows nothing of keys or stores.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DIR_MODE, FILE_MODE, TEMP_PREFIX } from './file-modes.js';
import { WriteOffloader } from './write-offload.js';

/** The file system functions the dir store uses; `NODE_FS` is the real one. */
export const NODE_FS = { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink };
/** The shape of `NODE_FS`: what a test substitutes to simulate file system failures. */
export type AtomicFs = typeof NODE_FS;

export { DIR_MODE, FILE_MODE, TEMP_PREFIX } from './file-modes.js';

/**
 * The write worker of every `writeAtomic` on the real file system that names none. One per
 * process, not one per store or writer: the worker is a thread, a resource of the process like
 * the thread pool it stands in for, so every store, cache and `mhl pack` in a process shares
 * one, and the `startAfter` count is the process's writes. Tests build their own offloader.
 */
const PROCESS_OFFLOADER = new WriteOffloader();

/** The random half of every temp name this process makes; drawn at its first write. */
let processTag: string | undefined;
/** Counts this process's temp names. */
let tempCount = 0;

/**
 * A temp name's suffix, unique among every writer of the directory: 8 random bytes drawn once
 * per process and a count, where drawing 8 bytes per write cost a `getpid` (the RNG's fork
 * check) and a few microseconds on every checkpoint. A process cannot collide with itself, and
 * two processes only when their 64 random bits match; the exclusive create refuses a collision
 * rather than sharing a file.
 */
function tempSuffix(): string {
  processTag ??= randomBytes(8).toString('hex');
  tempCount++;
  return `${processTag}-${tempCount.toString(36)}`;
}

/** Options of `writeAtomic`. */
export interface WriteAtomicOptions {
  /** Aborting before the rename removes the temp file and leaves the target untouched. */
  readonly signal?: AbortSignal | undefined;
  /** Names the temp file (a random suffix follows); `TEMP_PREFIX` by default. */
  readonly tempPrefix?: string;
  /** The write worker to use with `NODE_FS`; the process's own by default. */
  readonly offloader?: WriteOffloader | undefined;
}

/** The `code` of a Node system error, or undefined. */
export function errnoCode(err: unknown): string | undefined {
  if (err instanceof Error && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

/**
 * Flushes a directory's entries (a rename or unlink inside it) to disk. Best effort: some file
 * systems refuse to open or fsync a directory, and the data itself is already synced.
 */
export async function syncDir(fs: AtomicFs, dir: string): Promise<void> {
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is unsupported here (EISDIR, EINVAL, EPERM on some platforms); the file's
    // own fsync already made its bytes durable.
  }
}

/**
 * Creates `dir` and any missing parents with mode 0700, and syncs the parents whose entries
 * changed. Resolves once the chain is durable.
 */
export async function makeDirs(fs: AtomicFs, dir: string): Promise<void> {
  let first: string | undefined;
  try {
    first = await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
  } catch (err: unknown) {
    if (errnoCode(err) !== 'ENOENT') throw err;
    throw await mkdirCause(fs, dir, err);
  }
  if (first === undefined) return;
  for (let d = dirname(dir); ; d = dirname(d)) {
    await syncDir(fs, d);
    if (d === dirname(first) || d === dirname(d)) break;
  }
}

/**
 * The real reason a recursive mkdir of `dir` failed with `ENOENT`: Node answers `ENOENT` for any
 * failure under a missing parent (`EROFS` from a read-only mount, `EACCES`), which would read as
 * a concurrent delete and be retried. Asking for each missing level alone finds the refusal;
 * when none refuses (a delete really raced), the original error stands.
 */
async function mkdirCause(fs: AtomicFs, dir: string, original: unknown): Promise<unknown> {
  const chain: string[] = [];
  for (let d = dir; d !== dirname(d); d = dirname(d)) chain.unshift(d);
  for (const d of chain) {
    try {
      await fs.mkdir(d, { mode: DIR_MODE });
      // Made here, so made durable here: the retry's mkdir will find it and sync nothing.
      await syncDir(fs, dirname(d));
    } catch (err: unknown) {
      const code = errnoCode(err);
      if (code !== 'EEXIST' && code !== 'ENOENT') return err;
    }
  }
  return original;
}

/**
 * Replaces `path` with `data` (text is written as UTF-8) atomically, mode 0600. When the rename
 * fails with `EXDEV` (the directory spans devices, as some bind and overlay mounts do), it falls
 * back to rewriting `path` in place and syncing it: durable, but not atomic. Aborting `signal`
 * before the rename removes the temp file and leaves `path` untouched; after the rename the write
 * stands. `tempPrefix` names the temp file (a random suffix follows), so a caller can find what a
 * killed writer left behind. On the real file system the write goes to the write worker when it
 * is free (`write-offload.ts`: one round trip instead of seven); an injected `fs` is always
 * called here.
 * @throws the underlying system error (`ENOENT` when the directory vanished).
 */
export async function writeAtomic(
  fs: AtomicFs,
  path: string,
  data: Uint8Array | string,
  options: WriteAtomicOptions = {},
): Promise<void> {
  const { signal, tempPrefix = TEMP_PREFIX } = options;
  signal?.throwIfAborted();
  const tempName = () => join(dirname(path), `${tempPrefix}${tempSuffix()}`);
  const tmp = tempName();
  const offloader = fs === NODE_FS ? (options.offloader ?? PROCESS_OFFLOADER) : undefined;
  const offloaded = offloader?.write(tmp, path, data, FILE_MODE, signal);
  const outcome = offloaded === undefined ? undefined : await offloaded;
  if (outcome === undefined) {
    await writeHere(fs, tmp, path, bytesOf(data), signal);
  } else if (outcome.kind === 'lost') {
    // The worker died mid-write: its temp file may exist, so this write takes another name,
    // and the old one is removed once a write succeeds.
    if (stranded.size < MAX_STRANDED) stranded.add(tmp);
    await writeHere(fs, tempName(), path, bytesOf(data), signal);
  } else if (outcome.kind !== 'written') {
    if (outcome.stranded && stranded.size < MAX_STRANDED) stranded.add(tmp);
    if (outcome.kind === 'aborted') signal?.throwIfAborted();
    throw outcome.kind === 'failed' ? outcome.error : new Error('write aborted');
  }
  if (stranded.size > 0) await removeStranded(fs);
}

/** Text as UTF-8 bytes; bytes as they are. */
function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/** `writeAtomic`'s steps through `fs`, as few of them in sequence as their order allows. */
async function writeHere(
  fs: AtomicFs,
  tmp: string,
  path: string,
  data: Uint8Array,
  signal: AbortSignal | undefined,
): Promise<void> {
  // Whether the name exists decides the directory fsync below; asked beside the write, not
  // after it, so it costs no round trip of its own.
  const replacing = fs.stat(path).then(
    () => true,
    () => false,
  );
  try {
    const handle = await fs.open(tmp, 'wx', FILE_MODE);
    let closed: Promise<void> | undefined;
    try {
      await handle.writeFile(data, signal ? { signal } : {});
      await handle.sync();
      signal?.throwIfAborted();
      // POSIX renames a file that is still open, so the close need not come first; Windows
      // refuses to, so it waits there.
      closed = handle.close();
      if (process.platform === 'win32') await closed;
      await Promise.all([renameOrCopy(fs, tmp, path, data), closed]);
    } finally {
      if (closed === undefined) await handle.close();
      else await closed.catch(() => {});
    }
  } catch (err: unknown) {
    await fs.unlink(tmp).catch((unlinkErr: unknown) => {
      // Already renamed into place, or never created: nothing to clean up. Otherwise the file
      // system refused (it went read-only between the write and the rename): retried later.
      if (errnoCode(unlinkErr) !== 'ENOENT' && stranded.size < MAX_STRANDED) stranded.add(tmp);
    });
    throw err;
  }
  // A new name must reach the disk's directory to exist after a crash. Replacing an existing
  // name needs no directory sync: after a crash the name holds the old bytes or the new ones,
  // both complete, and losing the newest checkpoint only re-runs one step, which at-least-once
  // steps allow. This halves the cost of a per-step checkpoint.
  if (!(await replacing)) await syncDir(fs, dirname(path));
}

/**
 * Temp files a failed write could not remove (the disk had turned read-only under it). A later
 * write that succeeds means the disk takes writes again, so it removes them then.
 */
const stranded = new Set<string>();
/** Enough for any burst of failed writes; past it a leftover is only a dot file no listing shows. */
const MAX_STRANDED = 1024;

async function removeStranded(fs: AtomicFs): Promise<void> {
  for (const tmp of [...stranded]) {
    try {
      await fs.unlink(tmp);
      stranded.delete(tmp);
    } catch (err: unknown) {
      if (errnoCode(err) === 'ENOENT') stranded.delete(tmp);
    }
  }
}

/**
 * Renames `tmp` onto `path`; across devices (EXDEV), writes `data` to `path` durably instead and
 * removes `tmp`: durable, though not atomic.
 */
export async function renameOrCopy(
  fs: AtomicFs,
  tmp: string,
  path: string,
  data: Uint8Array,
): Promise<void> {
  try {
    await fs.rename(tmp, path);
    return;
  } catch (err: unknown) {
    if (errnoCode(err) !== 'EXDEV') throw err;
  }
  const handle = await fs.open(path, 'w', FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.unlink(tmp);
}

/**
 * `writeAtomic` on the real file system for callers outside the store: creates the parent
 * directories (0700) first, and takes text as UTF-8.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  await makeDirs(NODE_FS, dirname(path));
  signal?.throwIfAborted();
  await writeAtomic(NODE_FS, path, data, { signal });
}

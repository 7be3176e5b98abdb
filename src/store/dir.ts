/**
 * A store of files under a root directory (`--state-dir`, or `.mhl/` beside a workflow): key
 * `state/abc/Build.json` is the file `<root>/state/abc/Build.json`, holding the value as UTF-8.
 * Every write is temp file → fsync → rename → directory fsync (see `atomic-file.ts`); files are
 * 0600 and created directories 0700. Deleting a key removes directories it leaves empty (never
 * the root). It has no capabilities: without cross-process locking a file system offers no
 * compare-and-swap, so a server on a shared dir store runs a single replica.
 */
import { constants, type Dirent } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import {
  type AtomicFs,
  errnoCode,
  makeDirs,
  NODE_FS,
  syncDir,
  writeAtomic,
} from './atomic-file.js';
import {
  type DeleteOptions,
  STORE_ERROR_CODES,
  type Store,
  type StoreCapability,
  StoreError,
  type StoreOptions,
  validateKey,
  validatePrefix,
  validateValue,
} from './store.js';
import type { WriteOffloader } from './write-offload.js';

/** Options of `DirStore`. */
export interface DirStoreOptions {
  /** File system functions; the real ones by default. Tests inject failures here. */
  readonly fs?: AtomicFs;
  /** The write worker for writes on the real `fs`; the process's own by default. */
  readonly offloader?: WriteOffloader;
}

/** How often a write retries when a concurrent delete pruned its directory mid-write. */
const PRUNE_RETRIES = 5;
/** Errors meaning "there is no file at this key". */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
/** Read without following a symbolic link planted at the key. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/**
 * A `Store` on the file system. Safe for concurrent use within a process and across processes
 * sharing the root (every write is atomic; the last rename wins). Operations throw `StoreError`
 * `STORE_CLOSED` after `close()`.
 */
export class DirStore implements Store {
  readonly capabilities: ReadonlySet<StoreCapability> = new Set<StoreCapability>();
  /** The absolute root directory. */
  readonly root: string;
  readonly #fs: AtomicFs;
  readonly #offloader: WriteOffloader | undefined;
  #closed = false;
  /** The last key `#path` accepted, and its file. */
  #lastKey: string | undefined;
  #lastPath = '';

  /** `root` holds every key; it is created (0700) on the first write when missing. */
  constructor(root: string, options: DirStoreOptions = {}) {
    this.root = resolve(root);
    this.#fs = options.fs ?? NODE_FS;
    this.#offloader = options.offloader;
  }

  /** The value at `key`, or undefined when no file is there. Honours `signal`. */
  async get(key: string, options?: StoreOptions): Promise<string | undefined> {
    const path = this.#path(key, options);
    const signal = options?.signal;
    try {
      return await this.#fs.readFile(path, {
        encoding: 'utf8',
        flag: READ_FLAGS,
        ...(signal && { signal }),
      });
    } catch (err: unknown) {
      if (signal?.aborted) throw err;
      if (ABSENT.has(errnoCode(err) ?? '')) return undefined;
      throw ioError(key, 'read', err);
    }
  }

  /**
   * Writes `value` at `key` atomically and durably. Honours `signal` until the rename.
   * @throws StoreError `STORE_KEY_CONFLICT` when a parent of `key` is a key, or keys lie under it.
   */
  async put(key: string, value: string, options?: StoreOptions): Promise<void> {
    const path = this.#path(key, options);
    validateValue(key, value);
    // The directory usually exists already (a run's checkpoints replace one file), so the
    // first attempt writes straight away and only an ENOENT makes it create the directories:
    // a mkdir and a stat fewer per write. Each later attempt creates them first.
    for (let attempt = 0; ; attempt++) {
      try {
        if (attempt > 0) await makeDirs(this.#fs, dirname(path));
        // The text itself: the write worker encodes it straight into the memory it shares.
        await writeAtomic(this.#fs, path, value, {
          signal: options?.signal,
          offloader: this.#offloader,
        });
        return;
      } catch (err: unknown) {
        if (options?.signal?.aborted) throw err;
        const code = errnoCode(err);
        if (code === 'ENOENT' && attempt < PRUNE_RETRIES) continue;
        if (code === 'EEXIST' || code === 'ENOTDIR')
          throw conflict(key, 'a parent of it is a key', err);
        if (code === 'EISDIR' || code === 'ENOTEMPTY')
          throw conflict(key, 'other keys lie under it', err);
        if (code === undefined) throw err;
        throw ioError(key, 'write', err);
      }
    }
  }

  /**
   * Removes `key` and the directories that leaves empty; absent keys are a no-op. Honours
   * `signal`. The removal is fsynced into its directory unless `durable: false`.
   */
  async delete(key: string, options?: DeleteOptions): Promise<void> {
    const path = this.#path(key, options);
    try {
      await this.#fs.unlink(path);
    } catch (err: unknown) {
      const code = errnoCode(err);
      if (code !== undefined && (ABSENT.has(code) || code === 'EPERM')) {
        if (code !== 'EPERM' || (await this.#isDir(path))) return;
      }
      throw ioError(key, 'delete', err);
    }
    const durable = options?.durable !== false;
    if (durable) await syncDir(this.#fs, dirname(path));
    await this.#prune(dirname(path), durable);
  }

  /** Every key starting with `prefix`, ascending; temp and dot files are never listed. Honours `signal`. */
  async list(prefix: string, options?: StoreOptions): Promise<string[]> {
    this.#open(prefix, options);
    validatePrefix(prefix);
    const cut = prefix.lastIndexOf('/') + 1;
    const keys: string[] = [];
    try {
      await this.#walk(prefix.slice(0, cut), prefix.slice(cut), keys, options?.signal);
    } catch (err: unknown) {
      if (errnoCode(err) === undefined) throw err;
      throw ioError(prefix, 'list', err);
    }
    return keys.sort();
  }

  /** Marks the store closed; there is nothing to release. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  #open(key: string, options: StoreOptions | undefined): void {
    options?.signal?.throwIfAborted();
    if (this.#closed) throw new StoreError(STORE_ERROR_CODES.CLOSED, key, 'store is closed');
  }

  /** The file of a valid key, checked (belt and braces) to lie inside the root. */
  #path(key: string, options: StoreOptions | undefined): string {
    this.#open(key, options);
    // A run writes one key again and again (its checkpoint): its file is remembered.
    if (key === this.#lastKey) return this.#lastPath;
    const path = join(this.root, validateKey(key));
    if (!path.startsWith(this.root + sep)) {
      throw new StoreError(
        STORE_ERROR_CODES.INVALID_KEY,
        key,
        'invalid store key: escapes the root',
      );
    }
    this.#lastKey = key;
    this.#lastPath = path;
    return path;
  }

  /** Adds the keys under `base` (a key prefix ending in "/" or empty) whose names start with `partial`. */
  async #walk(
    base: string,
    partial: string,
    keys: string[],
    signal: AbortSignal | undefined,
  ): Promise<void> {
    signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await this.#fs.readdir(join(this.root, base), { withFileTypes: true });
    } catch (err: unknown) {
      if (ABSENT.has(errnoCode(err) ?? '')) return;
      throw err;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || !entry.name.startsWith(partial)) continue;
      if (entry.isDirectory()) await this.#walk(`${base}${entry.name}/`, '', keys, signal);
      else if (entry.isFile()) keys.push(`${base}${entry.name}`);
    }
  }

  /** Removes empty directories from `dir` up to (not including) the root; `durable` syncs the parent. */
  async #prune(dir: string, durable: boolean): Promise<void> {
    let changed: string | undefined;
    for (let d = dir; d !== this.root && d.startsWith(this.root + sep); d = dirname(d)) {
      try {
        await this.#fs.rmdir(d);
        changed = dirname(d);
      } catch {
        // Not empty (another key, a concurrent write's temp file) or already gone: stop here.
        break;
      }
    }
    if (changed !== undefined && durable) await syncDir(this.#fs, changed);
  }

  async #isDir(path: string): Promise<boolean> {
    try {
      await this.#fs.readdir(path);
      return true;
    } catch {
      // Not a readable directory, so the EPERM was a real permission failure.
      return false;
    }
  }
}

function conflict(key: string, why: string, cause: unknown): StoreError {
  return new StoreError(STORE_ERROR_CODES.KEY_CONFLICT, key, `store key conflict: ${why}`, {
    cause,
  });
}

/** Errors meaning the device (or the user's quota) has no room for the write. */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

function ioError(key: string, op: string, cause: unknown): StoreError {
  const code = errnoCode(cause) ?? 'unknown error';
  if (FULL.has(code)) {
    return new StoreError(
      STORE_ERROR_CODES.FULL,
      key,
      `could not ${op} the state file: no space left (${code})`,
      { cause },
    );
  }
  return new StoreError(STORE_ERROR_CODES.IO, key, `could not ${op} the state file (${code})`, {
    cause,
  });
}

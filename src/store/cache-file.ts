/**
 * Entries of mhl's own caches (V8's code cache of the CLI bundle, checked catalogs): where the
 * cache lives, and reading or writing one entry. An entry is only ever a copy of something mhl
 * can rebuild, so everything here fails soft: a missing, torn, corrupt, foreign or unreadable
 * entry reads as `undefined`, and a write that fails returns false. Synchronous on purpose: the
 * launcher reads before anything else has loaded, and a short command writes on its way out.
 *
 * Trust: an entry is accepted only from a directory and a file owned by this user that no one
 * else can write (what a cache under a 0700 directory of the user's home is), and only when the
 * SHA-256 in its header matches its payload. Written like `atomic-file.ts` writes (temp file in
 * the same directory, 0600, then rename; directories 0700) but without fsync: after a crash a
 * torn entry fails its hash and is rebuilt, which is all a cache needs.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DIR_MODE, FILE_MODE, TEMP_PREFIX } from './file-modes.js';

/** The environment variables that place or disable the cache. */
export const CACHE_ENV = {
  /** The cache's root folder (default `$XDG_CACHE_HOME/mhl`, else `~/.cache/mhl`). */
  DIR: 'MHL_CACHE_DIR',
  /** Any value but `0` or empty turns every mhl cache off. */
  OFF: 'MHL_NO_CACHE',
} as const;

const MAGIC = Buffer.from('MHLCACH1');
const HASH_BYTES = 32;
const HEADER_BYTES = MAGIC.length + HASH_BYTES;

/**
 * The cache's root folder for `env`, or undefined when caching is off (`MHL_NO_CACHE`) or no
 * home folder is known. A relative `XDG_CACHE_HOME` is ignored, as the XDG spec asks.
 */
export function cacheRoot(env: NodeJS.ProcessEnv): string | undefined {
  const off = env[CACHE_ENV.OFF];
  if (off !== undefined && off !== '' && off !== '0') return undefined;
  const dir = env[CACHE_ENV.DIR];
  if (dir !== undefined && dir !== '') return resolve(dir);
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'mhl');
  let home: string;
  try {
    home = homedir();
  } catch {
    return undefined;
  }
  return home === '' ? undefined : join(home, '.cache', 'mhl');
}

/** SHA-256 of `parts` in order, each length-prefixed so no two sequences hash alike. */
export function cacheKey(parts: readonly (string | Uint8Array)[]): string {
  const hash = createHash('sha256');
  const length = Buffer.alloc(8);
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  }
  return hash.digest('hex');
}

/** True when only this user may write `stats` (always true where there are no uids). */
function ownOnly(stats: Stats): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  return stats.uid === uid && (stats.mode & 0o022) === 0;
}

/** The payload of entry `name` under `dir`, or undefined for any entry not to be trusted. */
export function readCacheEntry(dir: string, name: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    const dirStats = lstatSync(dir);
    if (!dirStats.isDirectory() || !ownOnly(dirStats)) return undefined;
    fd = openSync(join(dir, name), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const stats = fstatSync(fd);
    if (!stats.isFile() || !ownOnly(stats) || stats.size < HEADER_BYTES) return undefined;
    const bytes = readFileSync(fd);
    if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const payload = bytes.subarray(HEADER_BYTES);
    const hash = createHash('sha256').update(payload).digest();
    return hash.equals(bytes.subarray(MAGIC.length, HEADER_BYTES)) ? payload : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** How many entries a cache folder keeps by default; older ones go when a new one is written. */
export const DEFAULT_KEEP = 32;

/**
 * Writes entry `name` under `dir` (created 0700 when missing) atomically, mode 0600, then
 * removes all but the `keep` newest entries, so edits and upgrades cannot grow the cache without
 * bound. Returns false, leaving no temp file behind, when the cache cannot be written
 * (read-only, not ours).
 */
export function writeCacheEntry(
  dir: string,
  name: string,
  payload: Uint8Array,
  keep = DEFAULT_KEEP,
): boolean {
  let tmp: string | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    if (!ownOnly(lstatSync(dir))) return false;
    tmp = join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
    const hash = createHash('sha256').update(payload).digest();
    writeFileSync(tmp, Buffer.concat([MAGIC, hash, payload]), { mode: FILE_MODE, flag: 'wx' });
    renameSync(tmp, join(dir, name));
    tmp = undefined;
    prune(dir, keep);
    return true;
  } catch {
    if (tmp !== undefined) {
      try {
        unlinkSync(tmp);
      } catch {
        // Never created, or the folder went away: nothing left to remove.
      }
    }
    return false;
  }
}

/**
 * Removes entry `name` under `dir`, best effort: an entry found wrong after it was read goes, so
 * the next start rebuilds it. Returns false when there was nothing to remove or it could not be.
 */
export function removeCacheEntry(dir: string, name: string): boolean {
  try {
    unlinkSync(join(dir, name));
    return true;
  } catch {
    return false;
  }
}

/** A temp file this old was left by a writer that was killed; younger ones may be in use. */
const STALE_TEMP_MS = 10 * 60 * 1000;

/**
 * Removes all but the `keep` most recently written entries of `dir`, and temp files killed
 * writers left; best effort (another process may be pruning too).
 */
function prune(dir: string, keep: number): void {
  const entries: { path: string; mtime: number }[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    try {
      const mtime = lstatSync(join(dir, name)).mtimeMs;
      if (!name.startsWith('.')) entries.push({ path: join(dir, name), mtime });
      else if (name.startsWith(TEMP_PREFIX) && now - mtime > STALE_TEMP_MS)
        unlinkSync(join(dir, name));
    } catch {
      // Removed by another process meanwhile.
    }
  }
  if (entries.length <= keep) return;
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const { path } of entries.slice(keep)) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone: another process pruned it.
    }
  }
}

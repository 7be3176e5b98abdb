/**
 * What `mhl pack` puts in a pack: every non-hidden regular file under a folder (a symlink to a
 * file inside the folder counts as the file), read into memory and sorted by the UTF-8 bytes of
 * its relative path. Hidden entries (a segment starting with ".") are left out at every depth;
 * symlinks out of the folder, symlinked folders and other file types are skipped, each
 * reported, never silently: a pack holds the folder's files and nothing else.
 */
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { PackEntry } from './dmpk.js';
import { PACK_ERROR_CODES, PackError } from './errors.js';
import { comparePackPaths, packPathProblem } from './paths.js';

/** A file under the folder that was not packed, and why. */
export interface SkippedFile {
  readonly path: string;
  readonly reason: string;
}

/** The files to pack and what was left out. */
export interface CollectedFiles {
  readonly entries: PackEntry[];
  readonly skipped: SkippedFile[];
}

/**
 * Reads the files to pack from `dir`. `exclude` (absolute) is never packed, so a pack written
 * inside the folder does not end up in the next one. Throws `PackError` `PACK_UNREADABLE` for
 * a folder or file that cannot be read and `PACK_BAD_PATH` for a name a pack cannot carry.
 */
export function collectPackFiles(dir: string, exclude?: string): CollectedFiles {
  const root = resolve(dir);
  const out: CollectedFiles = { entries: [], skipped: [] };
  const realRoot = attempt(root, () => realpathSync(root));
  walk(root, root, realRoot, exclude === undefined ? undefined : resolve(exclude), out);
  out.entries.sort((a, b) => comparePackPaths(a.path, b.path));
  return out;
}

function walk(
  root: string,
  dir: string,
  realRoot: string,
  exclude: string | undefined,
  out: CollectedFiles,
): void {
  for (const entry of attempt(dir, () => readdirSync(dir, { withFileTypes: true }))) {
    if (entry.name.startsWith('.')) continue;
    const abs = join(dir, entry.name);
    const rel = relative(root, abs).split(sep).join('/');
    if (abs === exclude) continue;
    if (entry.isDirectory()) {
      walk(root, abs, realRoot, exclude, out);
      continue;
    }
    const unpacked = entry.isFile()
      ? undefined
      : whyNotPacked(entry.isSymbolicLink(), abs, realRoot);
    if (unpacked !== undefined) {
      out.skipped.push({ path: rel, reason: unpacked });
      continue;
    }
    const problem = packPathProblem(rel);
    if (problem !== undefined) {
      throw new PackError(PACK_ERROR_CODES.BAD_PATH, `cannot pack ${abs}: its path ${problem}`);
    }
    out.entries.push({ path: rel, content: attempt(abs, () => readFileSync(abs)) });
  }
}

/** Why a non-regular entry is left out, or undefined for a symlink to a file in the folder. */
function whyNotPacked(isSymlink: boolean, abs: string, realRoot: string): string | undefined {
  if (!isSymlink) return 'not a regular file';
  let target: ReturnType<typeof statSync>;
  let real: string;
  try {
    target = statSync(abs);
    real = realpathSync(abs);
  } catch {
    return 'a symlink whose target cannot be read';
  }
  if (real !== realRoot && !real.startsWith(`${realRoot}${sep}`)) {
    return 'a symlink out of the folder (not packed)';
  }
  if (target.isFile()) return undefined;
  return target.isDirectory()
    ? 'a symlink to a folder (not followed)'
    : 'a symlink to a special file';
}

function attempt<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (cause) {
    throw new PackError(
      PACK_ERROR_CODES.UNREADABLE,
      `cannot read ${path}: ${(cause as Error).message}`,
      { cause },
    );
  }
}

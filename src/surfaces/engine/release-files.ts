/**
 * Reads a release folder into memory: every regular, non-hidden file under it, as UTF-8 text
 * (a symlink, a special file or other bytes are refused, so what was digested is what is
 * served), and the release digest, SHA-256 over the canonical JSON listing `[{path, sha256}]`
 * sorted by path: the whole path, in UTF-8 byte order, not the walk's order (which sorts each
 * folder's names, so `a/y.md` would come before `a-b/x.md`, though `-` sorts before `/`).
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalDigest, sha256Hex } from './canonical-json.js';
import type { ReleaseFile } from './release.js';

/** The most files and bytes a release may hold: it is held in memory whole. */
export const MAX_RELEASE_FILES = 2000;
export const MAX_RELEASE_BYTES = 32 * 1024 * 1024;

export type FilesResult =
  | { readonly ok: true; readonly files: Map<string, ReleaseFile>; readonly digest: string }
  | { readonly ok: false; readonly problems: string[] };

/** Every file of the release under `root`, by release-relative path. */
export function readReleaseFiles(root: string): FilesResult {
  const files = new Map<string, ReleaseFile>();
  const problems: string[] = [];
  let total = 0;
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      if (entry.name.startsWith('.')) continue;
      const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const abs = join(dir, entry.name);
      const stat = lstatSync(abs);
      if (stat.isSymbolicLink()) problems.push(`${rel}: symlinks are not allowed in a release`);
      else if (stat.isDirectory()) walk(abs, rel);
      else if (!stat.isFile()) problems.push(`${rel}: not a regular file`);
      else {
        total += stat.size;
        if (files.size >= MAX_RELEASE_FILES || total > MAX_RELEASE_BYTES) {
          throw new RangeError('the release holds too many files or bytes');
        }
        const bytes = readFileSync(abs);
        const text = bytes.toString('utf8');
        // Served and stored as text: bytes that do not survive UTF-8 would not match the digest.
        if (!Buffer.from(text, 'utf8').equals(bytes)) problems.push(`${rel}: not UTF-8 text`);
        else files.set(rel, { path: rel, text, sha256: sha256Hex(bytes) });
      }
    }
  };
  try {
    walk(root, '');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      problems: [
        code === 'ENOENT' || code === 'ENOTDIR'
          ? 'the release folder does not exist'
          : `the release folder cannot be read (${code ?? (error as Error).message})`,
      ],
    };
  }
  if (problems.length > 0) return { ok: false, problems };
  const listing = [...files.values()]
    .map((f) => ({ path: f.path, sha256: f.sha256 }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.path, 'utf8'), Buffer.from(b.path, 'utf8')));
  return { ok: true, files, digest: canonicalDigest(listing) };
}

/**
 * Which files a served folder consists of: every `.mh` file under it, recursively, skipping
 * hidden entries and `node_modules`, sorted so the catalog never depends on directory order.
 * Reads directory listings only; file contents go through a `SourceHost`.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Absolute paths of the `.mh` files under `dir`, sorted. Throws the file-system error when
 * `dir` (or a folder inside it) cannot be listed: `ENOENT`, `ENOTDIR`, `EACCES`.
 */
export function listMhFiles(dir: string): string[] {
  const found: string[] = [];
  walk(resolve(dir), found);
  return found.sort();
}

/** True for a path segment the walk skips: hidden entries and `node_modules`. */
export function isSkippedEntry(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

function walk(dir: string, found: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (isSkippedEntry(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, found);
    else if (entry.isFile() && entry.name.endsWith('.mh')) found.push(path);
  }
}

/**
 * The artifact warnings of `next_activity` (spec session-profile §3.0): a declared artifact
 * whose path lies outside the planning folder, and files in the planning folder that no
 * declared artifact covers. Advice only. A file is covered when a declared path resolves to it
 * or its name contains a declared id; the folder's own files (session.json, the seal) and
 * dotfiles (the lock, temp files) are never reported. Only top-level files are looked at.
 * Warnings name paths relative to the planning folder, never absolute server paths.
 */
import { readdirSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { SEAL_FILE, SESSION_FILE } from './store/session-store.js';

export interface DeclaredArtifact {
  readonly id: string;
  readonly name: string;
  readonly path?: string | undefined;
}

function inside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** The warnings for `declared` against the files now in `folder`. */
export function checkArtifacts(folder: string, declared: readonly DeclaredArtifact[]): string[] {
  const warnings: string[] = [];
  const covered = new Set<string>();
  for (const a of declared) {
    if (a.path === undefined || a.path === '') continue;
    const target = resolve(folder, a.path);
    if (!inside(folder, target))
      warnings.push(`Artifact '${a.id}' path '${a.path}' lies outside the planning folder.`);
    else covered.add(relative(folder, target));
  }
  let names: string[];
  try {
    names = readdirSync(folder, { withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => d.name);
  } catch {
    // No folder to look at (it was removed meanwhile): nothing to report.
    return warnings;
  }
  for (const name of names.sort()) {
    if (name.startsWith('.') || name === SESSION_FILE || name === SEAL_FILE) continue;
    if (covered.has(name) || declared.some((a) => a.id !== '' && name.includes(a.id))) continue;
    warnings.push(`File '${name}' in the planning folder is not covered by any declared artifact.`);
  }
  return warnings;
}

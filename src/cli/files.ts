/**
 * Finds the `.mh` files a command was pointed at: files as given, folders walked recursively,
 * skipping hidden entries and node_modules, sorted so output never depends on directory order.
 */
import { statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { CatalogResult } from '../catalog/index.js';
// The walk only: the catalog's index would also load its validators.
import { listMhFiles } from '../catalog/sources.js';
import { formatDiagnostic, sourceExcerpt } from '../lang/index.js';
import type { Output } from './lint.js';

export class PathNotFoundError extends Error {
  readonly path: string;
  constructor(path: string) {
    super(`no such file or directory: ${path}`);
    this.path = path;
  }
}

/** Absolute paths of every `.mh` file under `paths`. Throws `PathNotFoundError` for a missing path. */
export function findMhFiles(paths: readonly string[]): string[] {
  const found = new Set<string>();
  for (const p of paths) {
    const abs = resolve(p);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(abs);
    } catch {
      throw new PathNotFoundError(p);
    }
    if (stat.isDirectory()) for (const f of listMhFiles(abs)) found.add(f);
    else found.add(abs);
  }
  return [...found].sort();
}

/** A path as shown to the user: relative to the current directory when inside it. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

/**
 * Prints every problem of a catalog that did not load: a diagnostic with its source excerpt, or
 * one line prefixed with the command (`mhl serve mcp: …`).
 */
export function reportCatalogProblems(
  loaded: Extract<CatalogResult, { ok: false }>,
  io: Output,
  command: string,
): void {
  for (const p of loaded.problems) {
    if (p.diagnostic === undefined) {
      io.err(`${command}: ${p.message}`);
      continue;
    }
    io.err(formatDiagnostic(p.diagnostic, displayPath(p.diagnostic.span.file)));
    const text = loaded.texts.get(p.diagnostic.span.file);
    if (text !== undefined) io.err(sourceExcerpt(text, p.diagnostic.span));
  }
}

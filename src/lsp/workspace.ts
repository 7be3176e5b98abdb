/**
 * Checking open documents, incrementally per document: a change re-checks only the changed
 * documents and the open documents that import them (directly or not), in one `checkFiles` run
 * over the open documents' unsaved text. Each open document keeps the result it was last checked
 * in, which hover, definition, completion and rename read.
 */
import { dirname, resolve } from 'node:path';
import {
  type CheckResult,
  checkFiles,
  DEFAULT_LIMITS,
  indexModule,
  type Module,
  type ModuleIndex,
} from '../lang/index.js';
import type { DocumentStore } from './documents.js';
import { ParseCache } from './parse-cache.js';

export interface Analysis {
  readonly path: string;
  /** The document version checked. */
  readonly version: number;
  readonly result: CheckResult;
  /** Undefined when the checker could not read the document at all. */
  readonly module: Module | undefined;
  /** The index of any module of the result (built on first use). */
  indexOf(module: Module): ModuleIndex;
}

export class Workspace {
  readonly #store: DocumentStore;
  readonly #analyses = new Map<string, Analysis>();
  /** Every file (sources and assets) each open document's check read, to find dependents. */
  readonly #reads = new Map<string, Set<string>>();
  readonly #parses = new ParseCache();

  constructor(store: DocumentStore) {
    this.#store = store;
  }

  /** The latest analysis of an open document, if it matches the document's version. */
  current(path: string): Analysis | undefined {
    const analysis = this.#analyses.get(path);
    const doc = this.#store.open(path);
    return analysis && doc && analysis.version === doc.version ? analysis : undefined;
  }

  /** Open documents whose last check read any of `paths`, the changed ones included. */
  affectedBy(paths: Iterable<string>): Set<string> {
    const changed = new Set(paths);
    const affected = new Set<string>();
    for (const path of this.#store.openPaths()) {
      if (changed.has(path)) affected.add(path);
      const reads = this.#reads.get(path);
      if (reads && [...changed].some((p) => reads.has(p))) affected.add(path);
    }
    return affected;
  }

  /** Checks the given open documents together and records each one's analysis. */
  check(paths: ReadonlySet<string>): Analysis[] {
    const files = [...paths].filter((p) => this.#store.open(p));
    if (files.length === 0) return [];
    const result = checkFiles(files, this.#store.host, DEFAULT_LIMITS, this.#parses.parse);
    const indexes = new Map<Module, ModuleIndex>();
    const indexOf = (module: Module): ModuleIndex => {
      let index = indexes.get(module);
      if (!index) {
        index = indexModule(module, result.scopes.get(module) ?? new Map());
        indexes.set(module, index);
      }
      return index;
    };
    const done: Analysis[] = [];
    for (const path of files) {
      const doc = this.#store.open(path);
      if (!doc) continue;
      const module = result.graph.get(path);
      const analysis: Analysis = { path, version: doc.version, result, module, indexOf };
      this.#analyses.set(path, analysis);
      this.#reads.set(path, module ? readsOf(module) : new Set([path]));
      done.push(analysis);
    }
    return done;
  }

  forget(path: string): void {
    this.#analyses.delete(path);
    this.#reads.delete(path);
  }
}

/** The files a module's check read: itself, what it imports (transitively) and their assets. */
function readsOf(root: Module): Set<string> {
  const reads = new Set<string>();
  const queue = [root];
  const seen = new Set<Module>();
  for (let m = queue.pop(); m; m = queue.pop()) {
    if (seen.has(m)) continue;
    seen.add(m);
    reads.add(m.path);
    for (const asset of m.assets.values()) reads.add(asset.path);
    for (const decl of m.program.decls) {
      // Missing assets and imports count too, so creating the file re-checks the document.
      if (decl.kind === 'Import') reads.add(resolve(dirname(m.path), decl.path));
      else if ('from' in decl && typeof decl.from === 'string')
        reads.add(resolve(dirname(m.path), decl.from));
    }
    for (const edge of m.imports) if (edge.target) queue.push(edge.target);
  }
  return reads;
}

/**
 * Module loading and the program namespace.
 *
 * `ModuleGraph` parses each file once (by absolute path), follows its imports relative to the
 * importing file, reads its assets, and reports missing files and cycles. `buildNamespace` then
 * merges a root file and everything it reaches into MHL's one flat namespace: imports are a gate
 * on which names a file may request (only exported ones), not a scope, so a module may use a
 * name that another file of the same program imported.
 */
import { basename, dirname, relative, resolve } from 'node:path';
import { type Asset, loadAssets } from './assets.js';
import type { DeclOf, NamedDecl, Program } from './ast.js';
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic, type Span } from './diagnostics.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { type ParseResult, parse } from './parser.js';
import type { SourceHost } from './source-host.js';

export interface ImportEdge {
  readonly decl: DeclOf<'Import'>;
  /** Undefined when the file is missing or the import closes a cycle. */
  readonly target: Module | undefined;
}

export interface Module {
  readonly path: string;
  readonly text: string;
  readonly program: Program;
  /** Syntax, import and asset diagnostics of this file. */
  readonly diagnostics: Diagnostic[];
  readonly imports: ImportEdge[];
  readonly assets: ReadonlyMap<NamedDecl, Asset>;
}

/** A name in a program's namespace: a declaration (maybe under an alias) or a legacy namespace. */
export type Binding =
  | { readonly kind: 'decl'; readonly decl: NamedDecl; readonly module: Module }
  | { readonly kind: 'namespace'; readonly module: Module }
  /** Imported from a file that is missing or closes a cycle (already reported): no cascades. */
  | { readonly kind: 'unresolved' };

/**
 * How a graph parses a file. Editors pass one that reuses the result for unchanged text, since
 * they re-check a file's imports on every keystroke; the result must not be mutated.
 */
export type Parser = (text: string, path: string, limits: Limits) => ParseResult;

/** Import chains deeper than this are reported instead of followed. */
const MAX_IMPORT_DEPTH = 64;

export class ModuleGraph {
  readonly #host: SourceHost;
  readonly #limits: Limits;
  readonly #parse: Parser;
  readonly #modules = new Map<string, Module>();
  readonly #loading: string[] = [];
  /** Every text read (sources and assets) by absolute path, for excerpts in messages. */
  readonly texts = new Map<string, string>();

  constructor(host: SourceHost, limits: Limits = DEFAULT_LIMITS, parser: Parser = parse) {
    this.#host = host;
    this.#limits = limits;
    this.#parse = parser;
  }

  get modules(): readonly Module[] {
    return [...this.#modules.values()];
  }

  get(path: string): Module | undefined {
    return this.#modules.get(resolve(path));
  }

  /**
   * Loads a file and, transitively, what it imports. Returns undefined when the file itself
   * cannot be read (the caller reports it); every other problem is a diagnostic on a module.
   * Throws only what the host throws for the root file.
   */
  load(path: string): Module | undefined {
    const abs = resolve(path);
    const cached = this.#modules.get(abs);
    if (cached) return cached;
    const text = this.#host.readText(abs);
    if (text === undefined) return undefined;
    this.texts.set(abs, text);
    const parsed = this.#parse(text, abs, this.#limits);
    const assets = loadAssets(parsed.program, this.#host, this.#limits);
    for (const [p, t] of assets.texts) this.texts.set(p, t);
    const module: Module = {
      path: abs,
      text,
      program: parsed.program,
      diagnostics: [...parsed.diagnostics, ...assets.diagnostics],
      imports: [],
      assets: assets.assets,
    };
    this.#modules.set(abs, module);
    this.#loading.push(abs);
    try {
      for (const decl of parsed.program.decls) {
        if (decl.kind === 'Import') module.imports.push(this.#follow(module, decl));
      }
    } finally {
      this.#loading.pop();
    }
    return module;
  }

  #follow(from: Module, decl: DeclOf<'Import'>): ImportEdge {
    const target = resolve(dirname(from.path), decl.path);
    const report = (message: string, code: 'IMPORT' | 'IMPORT_CYCLE' = DIAGNOSTIC_CODES.IMPORT) => {
      from.diagnostics.push(diagnostic(code, message, decl.pathSpan));
      return { decl, target: undefined };
    };
    const cycleAt = this.#loading.indexOf(target);
    if (cycleAt >= 0) {
      const chain = [...this.#loading.slice(cycleAt), target].map((p) => displayName(p, from.path));
      return report(
        `import cycle: ${chain.join(' → ')}; move the shared declarations into a third file`,
        DIAGNOSTIC_CODES.IMPORT_CYCLE,
      );
    }
    if (this.#loading.length >= MAX_IMPORT_DEPTH) {
      return report(`imports nest deeper than ${MAX_IMPORT_DEPTH} files`);
    }
    let module: Module | undefined;
    try {
      module = this.load(target);
    } catch (e) {
      return report(`cannot read "${decl.path}": ${(e as Error).message}`);
    }
    if (!module)
      return report(
        `cannot find "${decl.path}" (import paths are relative to ${basename(from.path)})`,
      );
    return { decl, target: module };
  }
}

function displayName(path: string, relativeTo: string): string {
  const base = dirname(relativeTo);
  return path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path;
}

export interface Namespace {
  /** Every name of the program, first declaration wins; a module's own scope comes first for it. */
  readonly bindings: ReadonlyMap<string, Binding>;
  /** Every module the root reaches, root first. */
  readonly modules: readonly Module[];
  /** Duplicate names, unknown or unexported imports, alias collisions. */
  readonly diagnostics: readonly Diagnostic[];
}

export interface ModuleScope {
  /** The module's own declarations and the names it imports (under their aliases). */
  readonly bindings: ReadonlyMap<string, Binding>;
  readonly diagnostics: readonly Diagnostic[];
}

const scopes = new WeakMap<Module, ModuleScope>();

/**
 * A module's own names: its declarations plus what it imports. Two of them with one name is an
 * error (a duplicate or an alias collision); the same name in two different modules is not,
 * since each module sees its own first.
 */
export function moduleScope(module: Module): ModuleScope {
  const cached = scopes.get(module);
  if (cached) return cached;
  const bindings = new Map<string, Binding>();
  const diagnostics: Diagnostic[] = [];
  const scope: ModuleScope = { bindings, diagnostics };
  scopes.set(module, scope);
  const bind = (name: string, binding: Binding, span: Span, what: string) => {
    const existing = bindings.get(name);
    if (!existing) return void bindings.set(name, binding);
    if (sameTarget(existing, binding)) return;
    const where = existing.kind === 'decl' ? ` at ${position(existing.decl, span.file)}` : '';
    const message = `${what} '${name}' is already declared${where}`;
    diagnostics.push(diagnostic(DIAGNOSTIC_CODES.DUPLICATE, message, span));
  };
  for (const decl of module.program.decls) {
    if (decl.kind === 'Import' || decl.kind === 'Pipeline' || decl.kind === 'Test') continue;
    bind(decl.name, { kind: 'decl', decl, module }, decl.nameSpan, declWord(decl));
  }
  for (const edge of module.imports) {
    const { decl, target } = edge;
    if (!target) {
      for (const item of decl.items) bindings.set(item.alias ?? item.name, { kind: 'unresolved' });
      if (decl.namespace) bindings.set(decl.namespace, { kind: 'unresolved' });
      continue;
    }
    if (decl.form === 'namespace' && decl.namespace) {
      bind(decl.namespace, { kind: 'namespace', module: target }, decl.span, 'namespace');
      continue;
    }
    for (const item of decl.items) {
      const found = requestable(target, item.name, diagnostics, item.span, decl.path);
      if (found) bind(item.alias ?? item.name, found, item.span, 'import');
    }
  }
  return scope;
}

/** Merges `root` and every module it reaches into one flat namespace. */
export function buildNamespace(root: Module): Namespace {
  const modules = reachable(root);
  const bindings = new Map<string, Binding>();
  const diagnostics: Diagnostic[] = [];
  for (const module of modules) {
    const scope = moduleScope(module);
    diagnostics.push(...scope.diagnostics);
    for (const [name, binding] of scope.bindings)
      if (!bindings.has(name)) bindings.set(name, binding);
  }
  return { bindings, modules, diagnostics };
}

/** Finds an imported name: an exported declaration of the target, or one it imports itself. */
function requestable(
  target: Module,
  name: string,
  diagnostics: Diagnostic[],
  span: Span,
  path: string,
): Binding | undefined {
  const own = target.program.decls.find(
    (d): d is NamedDecl => d.kind !== 'Import' && d.name === name,
  );
  if (own) {
    if (!own.exported) {
      const message = `'${name}' is not exported by "${path}": add 'export' before its declaration`;
      diagnostics.push(diagnostic(DIAGNOSTIC_CODES.IMPORT, message, span));
    }
    return { kind: 'decl', decl: own, module: target };
  }
  const reexported = buildNamespace(target).bindings.get(name);
  if (reexported) return reexported;
  diagnostics.push(diagnostic(DIAGNOSTIC_CODES.IMPORT, `"${path}" declares no '${name}'`, span));
  return undefined;
}

function reachable(root: Module): Module[] {
  const seen = new Set<Module>([root]);
  const order = [root];
  for (let i = 0; i < order.length; i++) {
    for (const edge of (order[i] as Module).imports) {
      if (edge.target && !seen.has(edge.target)) {
        seen.add(edge.target);
        order.push(edge.target);
      }
    }
  }
  return order;
}

function sameTarget(a: Binding, b: Binding): boolean {
  if (a.kind === 'decl' && b.kind === 'decl') return a.decl === b.decl;
  if (a.kind === 'namespace' && b.kind === 'namespace') return a.module === b.module;
  return a.kind === 'unresolved' || b.kind === 'unresolved';
}

/** Where a declaration is, as seen from `fromFile`: `line 3:1` in the same file, else `path:3:1`. */
export function position(decl: NamedDecl, fromFile: string): string {
  const { file, line, col } = decl.nameSpan;
  if (file === fromFile) return `line ${line}:${col}`;
  return `${relative(dirname(fromFile), file)}:${line}:${col}`;
}

function declWord(decl: NamedDecl): string {
  return decl.kind === 'TypeAlias' ? 'type' : decl.kind.toLowerCase();
}

/**
 * `lint` over a set of files: load them and what they import, build each program's flat
 * namespace, run the name and declaration checks once per module, and check that pipeline
 * names are unique across everything loaded (they become tool names when served).
 *
 * Returns diagnostics; throws nothing for bad source. File-system walking is the caller's job.
 */
import type { DeclOf } from './ast.js';
import { checkDeclaration } from './check-declarations.js';
import { NameChecker } from './check-names.js';
import {
  compareDiagnostics,
  DIAGNOSTIC_CODES,
  type Diagnostic,
  diagnostic,
} from './diagnostics.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import {
  type Binding,
  buildNamespace,
  type Module,
  ModuleGraph,
  moduleScope,
  type Parser,
  position,
} from './modules.js';
import type { SourceHost } from './source-host.js';

export interface CheckResult {
  /** Sorted by file, then position. */
  readonly diagnostics: readonly Diagnostic[];
  readonly graph: ModuleGraph;
  /** Files given that could not be read at all. */
  readonly unreadable: readonly { path: string; reason: string }[];
  /** The names each module was checked against (its own scope first), for editor tooling. */
  readonly scopes: ReadonlyMap<Module, ReadonlyMap<string, Binding>>;
}

/** Checks the given `.mh` files (absolute or relative paths) and everything they import. */
export function checkFiles(
  files: readonly string[],
  host: SourceHost,
  limits: Limits = DEFAULT_LIMITS,
  parser?: Parser,
): CheckResult {
  const graph = new ModuleGraph(host, limits, parser);
  const unreadable: { path: string; reason: string }[] = [];
  for (const file of files) {
    try {
      if (!graph.load(file)) unreadable.push({ path: file, reason: 'no such file' });
    } catch (e) {
      unreadable.push({ path: file, reason: (e as Error).message });
    }
  }
  const modules = graph.modules;
  const all: Diagnostic[] = modules.flatMap((m) => m.diagnostics);
  const visible = visibleNames(modules, all);
  const scopes = new Map<Module, ReadonlyMap<string, Binding>>();
  for (const module of modules) {
    // A module's own declarations and imports come first; the rest of its programs after.
    const names = new Map(visible.get(module));
    for (const [name, binding] of moduleScope(module).bindings) names.set(name, binding);
    const pipelines = module.program.decls.flatMap((d) => (d.kind === 'Pipeline' ? [d.name] : []));
    scopes.set(module, names);
    const checker = new NameChecker(names, all, pipelines);
    for (const decl of module.program.decls) {
      if (decl.kind === 'Import') continue;
      checker.checkDecl(decl);
      checkDeclaration(decl, names, all);
    }
  }
  checkPipelineNames(modules, all);
  return { diagnostics: dedupe(all).sort(compareDiagnostics), graph, unreadable, scopes };
}

/**
 * The names each module may use: the namespaces of every root program that contains it.
 * A root is a module nothing else imports (or, inside an import cycle, every module).
 */
function visibleNames(
  modules: readonly Module[],
  out: Diagnostic[],
): Map<Module, Map<string, Binding>> {
  const imported = new Set(modules.flatMap((m) => m.imports.map((e) => e.target)));
  const roots = modules.filter((m) => !imported.has(m));
  const visible = new Map<Module, Map<string, Binding>>();
  const covered = new Set<Module>();
  const addRoot = (root: Module) => {
    const ns = buildNamespace(root);
    out.push(...ns.diagnostics);
    for (const m of ns.modules) {
      covered.add(m);
      const names = visible.get(m) ?? new Map<string, Binding>();
      for (const [name, binding] of ns.bindings) if (!names.has(name)) names.set(name, binding);
      visible.set(m, names);
    }
  };
  roots.forEach(addRoot);
  for (const m of modules) if (!covered.has(m)) addRoot(m);
  return visible;
}

function checkPipelineNames(modules: readonly Module[], out: Diagnostic[]): void {
  const first = new Map<string, DeclOf<'Pipeline'>>();
  for (const module of modules) {
    for (const decl of module.program.decls) {
      if (decl.kind !== 'Pipeline') continue;
      const earlier = first.get(decl.name);
      if (!earlier) {
        first.set(decl.name, decl);
        continue;
      }
      const message = `${decl.flavor} '${decl.name}' is already declared at ${position(earlier, decl.nameSpan.file)}; pipeline names become tool names and must be unique`;
      out.push(diagnostic(DIAGNOSTIC_CODES.DUPLICATE, message, decl.nameSpan));
    }
  }
}

function dedupe(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.span.file}\0${d.span.start}\0${d.code}\0${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

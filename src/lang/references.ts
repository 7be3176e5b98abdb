/**
 * A module's names, resolved: every declaration and every use of a name with what it refers to,
 * and the local scopes with the names each declares. Editor tooling (hover, definition, rename,
 * completion) reads this; lint does not, so nothing here can change what `mhl lint` reports.
 * The walk itself is in reference-walk.ts.
 */
import type { NamedDecl, ParallelGroup, Step, TypeNode } from './ast.js';
import type { Span } from './diagnostics.js';
import type { Binding, Module } from './modules.js';
import { ReferenceWalk } from './reference-walk.js';

/** A name declared inside a declaration: a variable, parameter, input, loop variable, … */
export interface LocalSymbol {
  readonly name: string;
  readonly what: 'var' | 'const' | 'mem' | 'input' | 'param' | 'loop' | 'catch' | 'spawn';
  /** The name where it is declared. */
  readonly span: Span;
  /** The whole declaring construct (`input repo: string = "."`), for hover. */
  readonly declSpan: Span;
  readonly type: TypeNode | undefined;
}

export type SymbolTarget =
  | { readonly kind: 'decl'; readonly decl: NamedDecl; readonly module: Module }
  | { readonly kind: 'namespace'; readonly module: Module }
  | { readonly kind: 'local'; readonly local: LocalSymbol }
  /** `Tool.method`, `self.method`, `Enum.Variant`: a part of a declaration. */
  | {
      readonly kind: 'member';
      readonly owner: NamedDecl;
      readonly module: Module;
      readonly name: string;
      readonly span: Span | undefined;
    }
  | { readonly kind: 'native'; readonly name: string }
  | { readonly kind: 'native-method'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'builtin'; readonly name: string }
  | { readonly kind: 'step'; readonly step: Step | ParallelGroup }
  /** An imported `.mh` file or a prompt, skill or schema file. */
  | { readonly kind: 'file'; readonly path: string };

export interface Occurrence {
  /** Exactly the name (or the quoted path for a file). */
  readonly span: Span;
  readonly target: SymbolTarget;
  readonly declaration: boolean;
}

export interface LocalScope {
  readonly start: number;
  readonly end: number;
  /** Locals in declaration order; one is visible from its own name on. */
  readonly locals: LocalSymbol[];
  /** Inside a `test` block, where the assertions are names. */
  readonly test: boolean;
}

export interface ModuleIndex {
  readonly module: Module;
  readonly occurrences: readonly Occurrence[];
  readonly scopes: readonly LocalScope[];
}

/** Indexes one module against the names it was checked with (`CheckResult.scopes`). */
export function indexModule(module: Module, names: ReadonlyMap<string, Binding>): ModuleIndex {
  return new ReferenceWalk(module, names).run();
}

/** The occurrence under `offset` (a name touching the offset on either side). */
export function occurrenceAt(index: ModuleIndex, offset: number): Occurrence | undefined {
  let best: Occurrence | undefined;
  for (const o of index.occurrences) {
    if (o.span.start <= offset && offset <= o.span.end) {
      if (!best || o.span.end - o.span.start < best.span.end - best.span.start) best = o;
    }
  }
  return best;
}

/** Locals visible at `offset`, innermost first, and whether the offset is inside a test. */
export function localsAt(
  index: ModuleIndex,
  offset: number,
): { locals: LocalSymbol[]; test: boolean } {
  const locals: LocalSymbol[] = [];
  let test = false;
  const enclosing = index.scopes
    .filter((s) => s.start <= offset && offset <= s.end)
    .sort((a, b) => b.start - a.start);
  for (const scope of enclosing) {
    test ||= scope.test;
    for (const l of scope.locals) if (l.span.start <= offset) locals.push(l);
  }
  return { locals, test };
}

/** Whether two targets are the same symbol. */
export function sameTarget(a: SymbolTarget, b: SymbolTarget): boolean {
  switch (a.kind) {
    case 'decl':
      return b.kind === 'decl' && a.decl === b.decl;
    case 'local':
      return b.kind === 'local' && a.local === b.local;
    case 'member':
      return b.kind === 'member' && a.owner === b.owner && a.name === b.name;
    case 'step':
      return b.kind === 'step' && a.step === b.step;
    case 'namespace':
      return b.kind === 'namespace' && a.module === b.module;
    case 'native':
    case 'builtin':
      return b.kind === a.kind && a.name === b.name;
    case 'native-method':
      return b.kind === 'native-method' && a.namespace === b.namespace && a.name === b.name;
    case 'file':
      return b.kind === 'file' && a.path === b.path;
  }
}

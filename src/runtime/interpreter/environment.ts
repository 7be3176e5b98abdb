/**
 * Variable scopes at run time. A chain of environments: block → step → pipeline, ending in a
 * resolver for everything that is not a variable (context, declarations, natives, built-ins).
 * Plain assignment writes the innermost existing binding, as MHL specifies.
 */
import { LangError, type Span } from '../../lang/index.js';
import type { Value } from './values.js';

interface Binding {
  value: Value;
  readonly isConst: boolean;
}

/** Answers names no environment binds: `context`, declarations, native namespaces, built-ins. */
export type GlobalResolver = (name: string) => Value | undefined;

export class Environment {
  // Made on the first declaration: most block and step scopes declare nothing (a step that
  // assigns pipeline variables), and a Map is the largest thing a scope would hold.
  #vars: Map<string, Binding> | undefined;
  readonly parent: Environment | undefined;
  readonly #globals: GlobalResolver | undefined;

  constructor(parent: Environment | undefined, globals?: GlobalResolver) {
    this.parent = parent;
    this.#globals = globals ?? (parent ? parent.#globals : undefined);
  }

  /** A child scope (a block, a lambda body). */
  child(): Environment {
    return new Environment(this);
  }

  declare(name: string, value: Value, isConst = false): void {
    this.#vars ??= new Map();
    this.#vars.set(name, { value, isConst });
  }

  has(name: string): boolean {
    return this.#find(name) !== undefined;
  }

  /** The variable's value, else the global's, else undefined. */
  lookup(name: string): Value | undefined {
    const b = this.#find(name);
    if (b) return b.value;
    return this.#globals?.(name);
  }

  /** Assigns the innermost existing binding; throws for constants and unknown names. */
  assign(name: string, value: Value, span: Span): void {
    const b = this.#find(name);
    if (!b) throw new LangError('UNDEFINED', `undefined variable '${name}'`, span);
    if (b.isConst) throw new LangError('CONST_ASSIGN', `cannot assign to const '${name}'`, span);
    b.value = value;
  }

  /** The bindings of this scope only (not parents), in declaration order. */
  own(): IterableIterator<[string, Value]> {
    // An array, not a generator: cheaper to build and to walk for the few bindings a scope has.
    const out: [string, Value][] = [];
    if (this.#vars !== undefined) for (const [k, b] of this.#vars) out.push([k, b.value]);
    return out[Symbol.iterator]();
  }

  /** Calls `visit` with each binding of this scope only, in declaration order; no pairs made. */
  forEachOwn(visit: (name: string, value: Value) => void): void {
    if (this.#vars !== undefined) for (const [k, b] of this.#vars) visit(k, b.value);
  }

  #find(name: string): Binding | undefined {
    for (let e: Environment | undefined = this; e; e = e.parent) {
      const b = e.#vars?.get(name);
      if (b) return b;
    }
    return undefined;
  }
}

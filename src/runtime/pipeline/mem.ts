/**
 * A run's `mem` variables (spec: mhl-language.md §6.7): get-or-init values that live beside the
 * pipeline scope, survive loop iterations and are checkpointed. An initializer runs just before
 * the first node (step, `output:`, `stop_when`) that mentions the name, or again on
 * `name.reset()`. Knows nothing of steps or stores: the runner says when to save and restore.
 */
import type { PipelineDecl, Span } from '../../lang/index.js';
import type { Environment } from '../interpreter/environment.js';
import type { Interpreter } from '../interpreter/interpreter.js';
import { isObject, type MhlObject, newObject, type Value } from '../interpreter/values.js';
import { mentionedNames } from './settings.js';

/** The `mem` variable names of each pipeline declaration. */
const MEM_NAMES = new WeakMap<PipelineDecl, ReadonlySet<string>>();
const NONE_READY: Set<string> = new Set();

export class MemVariables {
  readonly #decl: PipelineDecl;
  readonly #values: MhlObject = newObject();
  readonly #names: ReadonlySet<string>;
  /** Names that hold a value: initialised, reset, or restored from a checkpoint. */
  // A shared empty set until the first name is ready (never added to): most pipelines have no
  // `mem` variables, and a run makes one of these.
  #ready: Set<string> = NONE_READY;

  constructor(decl: PipelineDecl) {
    this.#decl = decl;
    // Per declaration, not per run: a declaration never changes once loaded.
    let names = MEM_NAMES.get(decl);
    if (names === undefined) {
      names = new Set(decl.vars.filter((v) => v.storage === 'mem').map((v) => v.name));
      MEM_NAMES.set(decl, names);
    }
    this.#names = names;
  }

  #markReady(name: string): void {
    if (this.#ready === NONE_READY) this.#ready = new Set();
    this.#ready.add(name);
  }

  /** Whether some `mem` variable still waits for its initializer (`initFor` has work to do). */
  get uninitialised(): boolean {
    return this.#ready.size !== this.#names.size;
  }

  /** Whether `name` is a `mem` variable of the pipeline. */
  has(name: string): boolean {
    return this.#names.has(name);
  }

  /** Declares every `mem` variable in `env` with its value (null until initialised). */
  declareIn(env: Environment): Environment {
    for (const v of this.#decl.vars)
      if (v.storage === 'mem') env.declare(v.name, this.#values[v.name] ?? null);
    return env;
  }

  /** Takes the values a checkpoint saved (its `__mem` entry). */
  restore(saved: Value | undefined): void {
    if (!isObject(saved)) return;
    Object.assign(this.#values, saved);
    for (const name of Object.keys(saved)) if (this.#names.has(name)) this.#markReady(name);
  }

  /** Copies the values of initialised variables out of the scope; returns them all. */
  save(env: Environment): MhlObject {
    for (const name of this.#ready) this.#values[name] = env.lookup(name) ?? null;
    return this.#values;
  }

  /** Runs the initializer of each variable `node` mentions that holds no value yet. */
  async initFor(
    node: object,
    env: Environment,
    interpreter: Interpreter,
    signal: AbortSignal,
  ): Promise<void> {
    if (this.#ready.size === this.#names.size) return;
    const names = mentionedNames(node);
    for (const v of this.#decl.vars) {
      if (v.storage !== 'mem' || this.#ready.has(v.name) || !names.has(v.name)) continue;
      this.#set(env, v.name, await interpreter.evaluate(v.value, env, signal), v.span);
    }
  }

  /** `name.reset()`: runs its initializer again; undefined when `name` is not a `mem`. */
  reset(
    name: string,
    env: Environment,
    interpreter: Interpreter,
    signal: AbortSignal,
  ): Promise<Value> | undefined {
    const decl = this.#decl.vars.find((v) => v.storage === 'mem' && v.name === name);
    if (!decl) return undefined;
    return interpreter.evaluate(decl.value, env, signal).then((value) => {
      this.#set(env, name, value, decl.span);
      return null;
    });
  }

  #set(env: Environment, name: string, value: Value, span: Span): void {
    env.assign(name, value, span);
    this.#values[name] = value;
    this.#markReady(name);
  }
}

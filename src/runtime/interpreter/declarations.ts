// Over 500 lines: RunScope resolves every declaration kind (agents, tools, prompts, memory, schemas, skills, enums) against one run's caches.
/**
 * What names mean while a program runs: declarations (agents, tools, prompts, memory, schemas,
 * skills, enums), native namespaces, built-ins and `context`, resolved per module exactly as
 * the checker resolves them (a module's own scope first, then its program's). Also the call
 * forms that need a declaration: prompt calls, `spawn` and `wait`; agent `.run` and router
 * `.delegate` are agent-calls.ts's.
 */
import type { DeclOf, ExprOf, LoadedProgram, NamedDecl, StmtOf } from '../../lang/index.js';
import { type Binding, LangError, type Module, moduleScope, type Span } from '../../lang/index.js';
import type { AgentState } from '../agents/agents.js';
import { extensionReference } from '../extensions/index.js';
import { NATIVES } from '../natives/index.js';
import type { NativeContext } from '../natives/native.js';
import { matchesType, typeText } from '../pipeline/inputs.js';
import type { Redactor } from '../services/redact.js';
import { AgentCalls } from './agent-calls.js';
import { builtinFunctions, type VaultLookup } from './builtins.js';
import { Environment } from './environment.js';
import { type Callables, Interpreter, withSpan } from './interpreter.js';
import { type KvMemories, memoryMethods } from './memory.js';
import { renderPrompt } from './prompts.js';
import { type SpawnLimiter, waitFor } from './tasks.js';
import {
  callArgs,
  DurationValue,
  EnumValue,
  FunctionValue,
  formatValue,
  fromJson,
  isObject,
  type MhlObject,
  newObject,
  Reference,
  TaskHandle,
  typeOf,
  type Value,
} from './values.js';

/** Everything a run needs from its host (the CLI or the server). */
export interface RunServices {
  readonly cwd: string;
  readonly childEnv: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly redactor: Redactor;
  /** What `vault()` reads; absent where the host has no vault. */
  readonly vault?: VaultLookup | undefined;
  /** Program output, one line at a time (already redacted by the sink). */
  readonly output: (line: string) => void;
  /** Where agents with `cache: {storage: "disk"}` keep entries. */
  readonly cacheDir: string;
  /** The run's in-memory agent cache and the rate limiters it shares with other runs. */
  readonly agents: AgentState;
}

export class RunScope implements Callables {
  readonly interpreter: Interpreter;
  readonly #program: LoadedProgram;
  readonly #services: RunServices;
  readonly #context: () => MhlObject;
  readonly #spawns: SpawnLimiter;
  /** Built on the first free name a run looks up: most trivial runs never look one up. */
  #builtins: ReadonlyMap<string, FunctionValue> | undefined;
  /** Declarations' values, made on the first one a run evaluates. */
  #values: Map<NamedDecl, Value> | undefined;
  // Made on first use (as #kv): most runs declare no agent and no `kv` memory.
  #agents: AgentCalls | undefined;
  /** This run's `kv` memories: created with the run, gone with it, shared with no one. */
  #kv: KvMemories | undefined;

  #kvTable(): KvMemories {
    this.#kv ??= new Map();
    return this.#kv;
  }
  readonly #moduleEnvs = new Map<Module, Environment>();
  /** Tasks spawned and not yet waited for, joined at the end of their step. */
  readonly pending: TaskHandle[] = [];
  /** `name.reset()` for the running pipeline's `mem` variables, set by the runner. */
  memReset: ((name: string, signal: AbortSignal) => Promise<Value> | undefined) | undefined;

  constructor(
    program: LoadedProgram,
    services: RunServices,
    context: () => MhlObject,
    spawns: SpawnLimiter,
  ) {
    this.#program = program;
    this.#services = services;
    this.#context = context;
    this.#spawns = spawns;
    this.interpreter = new Interpreter(this);
  }

  #agentCalls(): AgentCalls {
    this.#agents ??= new AgentCalls({
      interpreter: this.interpreter,
      program: this.#program,
      services: this.#services,
      moduleEnv: (m) => this.moduleEnv(m),
      declOf: (env, name) => this.#declOf(env, name),
    });
    return this.#agents;
  }

  /** The root scope of a module: resolves declarations, natives, built-ins and `context`. */
  moduleEnv(module: Module): Environment {
    let env = this.#moduleEnvs.get(module);
    if (!env) {
      env = new Environment(undefined, (name) => this.#global(module, name));
      this.#moduleEnvs.set(module, env);
    }
    return env;
  }

  #global(module: Module, name: string): Value | undefined {
    if (name === 'context') return this.#context();
    const binding =
      moduleScope(module).bindings.get(name) ?? this.#program.namespace.bindings.get(name);
    if (binding) return this.#bindingValue(binding);
    this.#builtins ??= builtinFunctions(this.#services);
    const builtin = this.#builtins.get(name);
    const native = NATIVES[name];
    if (native) {
      const ops = (op: string) => {
        const impl = native[op];
        return (
          impl &&
          new FunctionValue(`${name}.${op}`, (args, signal) =>
            impl(args, this.#nativeContext(signal)),
          )
        );
      };
      return new Reference('native', name, ops, builtin);
    }
    return builtin;
  }

  #nativeContext(signal: AbortSignal): NativeContext {
    const { cwd, childEnv, env, redactor, output } = this.#services;
    return { signal, cwd, childEnv, env, redactor, output };
  }

  #bindingValue(binding: Binding): Value {
    if (binding.kind === 'unresolved')
      throw new LangError('UNDEFINED', 'name imported from a file that could not be loaded');
    if (binding.kind === 'namespace') {
      const scope = moduleScope(binding.module).bindings;
      return new Reference('namespace', binding.module.path, (name) => {
        const b = scope.get(name);
        return b ? this.#bindingValue(b) : undefined;
      });
    }
    const cached = this.#values?.get(binding.decl);
    if (cached !== undefined) return cached;
    const value = this.#declValue(binding.decl, binding.module);
    this.#values ??= new Map();
    this.#values.set(binding.decl, value);
    return value;
  }

  #declValue(decl: NamedDecl, module: Module): Value {
    const unsupported = (what: string, why: string) => () =>
      new FunctionValue(what, async () => {
        throw new LangError('UNSUPPORTED', `${what} is not supported yet: ${why}`);
      });
    switch (decl.kind) {
      case 'Tool':
        return this.#tool(decl, module);
      case 'Memory':
        return this.#memory(decl, module);
      case 'Schema': {
        const asset = module.assets.get(decl);
        if (asset?.kind !== 'schema')
          throw new LangError('ASSET', `schema '${decl.name}' could not be loaded`, decl.span);
        return newObject([
          ['content', asset.content],
          ['path', asset.path],
        ]);
      }
      case 'Prompt': {
        const asset = module.assets.get(decl);
        const frontmatter = fromJson(asset?.kind === 'prompt' ? asset.frontmatter : {});
        return new Reference('prompt', decl.name, (m) =>
          m === 'frontmatter' ? frontmatter : undefined,
        );
      }
      case 'Enum': {
        const variants = new Map(
          decl.variants.map((v) => [v.name, new EnumValue(decl.name, v.name)]),
        );
        return new Reference('enum', decl.name, (m) => variants.get(m));
      }
      case 'Extension':
        return (
          this.#extension(decl, module) ??
          new Reference(
            'extension',
            decl.name,
            unsupported(`extension ${decl.extKind} '${decl.name}'`, extensionGap(decl.extKind)),
          )
        );
      case 'Router':
        // `R.delegate(…)` is a special call (it needs its named arguments unevaluated).
        return new Reference('router', decl.name, (m) =>
          m === 'delegate'
            ? undefined
            : new FunctionValue(`${decl.name}.${m}`, async () => {
                throw new LangError('CALL', `router '${decl.name}' has only .delegate(prompt:)`);
              }),
        );
      default:
        return new Reference(decl.kind.toLowerCase(), decl.name, () => undefined);
    }
  }

  #tool(decl: DeclOf<'Tool'>, module: Module): Reference {
    let vars: Promise<Environment> | undefined;
    const toolEnv = () => {
      vars ??= (async () => {
        const env = this.moduleEnv(module).child();
        env.declare('self', self);
        for (const v of decl.vars)
          env.declare(
            v.name,
            await this.interpreter.evaluate(v.value, env, AbortSignal.timeout(60_000)),
            v.isConst,
          );
        return env;
      })();
      return vars;
    };
    const methods = new Map(
      decl.methods.map((m) => {
        const what = `${decl.name}.${m.name}`;
        return [
          m.name,
          new FunctionValue(what, async (args, signal) => {
            // Declared parameter and return types are checked at run time.
            for (const [i, p] of m.params.entries()) {
              const v = args.ordered[i];
              if (p.type && v !== undefined && !matchesType(v, p.type))
                throw new LangError(
                  'TYPE',
                  `${what}: parameter '${p.name}' must be ${typeText(p.type)}, got ${typeOf(v)}`,
                );
            }
            const result = await this.interpreter.callFunction(
              m.params,
              m.body,
              (await toolEnv()).child(),
              args.ordered,
              signal,
            );
            if (m.returnType && !matchesType(result, m.returnType))
              throw new LangError(
                'TYPE',
                `${what} must return ${typeText(m.returnType)}, got ${typeOf(result)}`,
              );
            return result;
          }),
        ] as const;
      }),
    );
    const self: Reference = new Reference('tool', decl.name, (name) => methods.get(name));
    return self;
  }

  /** `extension mcp|a2a`: its properties evaluated in the declaring module, on first call. */
  #extension(decl: DeclOf<'Extension'>, module: Module): Reference | undefined {
    const { cwd, childEnv, env, redactor } = this.#services;
    return extensionReference(decl, {
      cwd,
      childEnv,
      env,
      redactor,
      evaluate: async (e, signal) =>
        e.kind === 'Duration'
          ? new DurationValue(e.ms)
          : this.interpreter.evaluate(e, this.moduleEnv(module), signal),
    });
  }

  #memory(decl: DeclOf<'Memory'>, module: Module): Reference {
    let methods: Promise<(name: string) => Value | undefined> | undefined;
    const load = () => {
      methods ??= (async () => {
        const env = this.moduleEnv(module);
        const text = async (key: string) => {
          const p = decl.props.find((x) => x.name === key);
          if (!p) return undefined;
          const v = await this.interpreter.evaluate(p.value, env, AbortSignal.timeout(60_000));
          return typeof v === 'string' ? v : undefined;
        };
        const path = await this.#memoryPath(decl, env);
        const config = {
          name: decl.name,
          type: (await text('type')) ?? '',
          path: path?.path,
          interpolated: path?.interpolated ?? [],
          pathGuard: (await text('path_guard')) === 'no_traversal',
        };
        return memoryMethods(config, this.#services.cwd, this.#kvTable());
      })();
      return methods;
    };
    return new Reference(
      'memory',
      decl.name,
      (name) =>
        new FunctionValue(`${decl.name}.${name}`, async (args, signal) => {
          const method = (await load())(name);
          if (!(method instanceof FunctionValue))
            throw new LangError('CALL', `memory '${decl.name}' has no method '${name}'`);
          return method.invoke(args, signal);
        }),
    );
  }

  /**
   * A memory's `path`, and the values its `${…}` spans produced (what `path_guard` checks: the
   * author's literal text may be absolute or climb with `..`; interpolated values may not).
   */
  async #memoryPath(
    decl: DeclOf<'Memory'>,
    env: Environment,
  ): Promise<{ path: string; interpolated: string[] } | undefined> {
    const e = decl.props.find((x) => x.name === 'path')?.value;
    if (!e) return undefined;
    const signal = AbortSignal.timeout(60_000);
    if (e.kind !== 'String') {
      const v = await this.interpreter.evaluate(e, env, signal);
      return typeof v === 'string' ? { path: v, interpolated: [v] } : undefined;
    }
    let path = '';
    const interpolated: string[] = [];
    for (const seg of e.segments) {
      if (typeof seg === 'string') {
        path += seg;
        continue;
      }
      const v = formatValue(await this.interpreter.evaluate(seg, env, signal));
      interpolated.push(v);
      path += v;
    }
    return { path, interpolated };
  }

  // ── Callables ──────────────────────────────────────────────────────────────────────────────

  specialCall(
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value> | undefined {
    const callee = call.callee;
    if (callee.kind === 'Ident') {
      const target = env.lookup(callee.name);
      if (target instanceof Reference && target.refKind === 'prompt')
        return this.#prompt(target.name, call, env, signal);
    }
    if (
      callee.kind === 'Member' &&
      callee.name === 'reset' &&
      callee.object.kind === 'Ident' &&
      call.args.length === 0
    ) {
      const reset = this.memReset?.(callee.object.name, signal);
      if (reset !== undefined) return reset;
    }
    if (callee.kind === 'Member' && callee.name === 'run' && callee.object.kind === 'Ident') {
      const decl = this.#agentDecl(env, callee.object.name);
      if (decl) return this.#agentCalls().run(decl, call, env, signal);
    }
    if (callee.kind === 'Member' && callee.name === 'delegate' && callee.object.kind === 'Ident') {
      const found = this.#declOf(env, callee.object.name);
      if (found?.decl.kind === 'Router')
        return this.#agentCalls().delegate(found.decl, found.module, call, env, signal);
    }
    return undefined;
  }

  #declOf(env: Environment, name: string): { decl: NamedDecl; module: Module } | undefined {
    if (env.has(name)) return undefined;
    for (const [module, menv] of this.#moduleEnvs) {
      if (!isAncestor(menv, env)) continue;
      const b =
        moduleScope(module).bindings.get(name) ?? this.#program.namespace.bindings.get(name);
      return b?.kind === 'decl' ? { decl: b.decl, module: b.module } : undefined;
    }
    return undefined;
  }

  #agentDecl(env: Environment, name: string) {
    const found = this.#declOf(env, name);
    return found?.decl.kind === 'Agent'
      ? (found as { decl: DeclOf<'Agent'>; module: Module })
      : undefined;
  }

  async #prompt(
    name: string,
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value> {
    const found = this.#declOf(env, name);
    if (found?.decl.kind !== 'Prompt')
      throw new LangError('CALL', `'${name}' is not a prompt`, call.span);
    const decl = found.decl;
    const args = new Map<string, Value>();
    for (const arg of call.args) {
      if (!arg.name)
        throw new LangError(
          'CALL',
          `prompt '${name}' takes named arguments, e.g. ${name}(${decl.params[0]?.name ?? 'x'}: …)`,
          arg.span,
        );
      args.set(arg.name, await this.interpreter.evaluate(arg.value, env, signal));
    }
    return this.renderPrompt(
      decl,
      found.module,
      args,
      { callerScope: env, span: call.span },
      signal,
    );
  }

  /**
   * Renders a prompt declared in `module` with named `args`: the one template path a step's
   * `Name(…)` and the MCP `prompts/get` share. Defaults are evaluated in `at.callerScope` (the
   * declaring module's own scope when no step calls it). Raises `CALL` for a missing or unknown
   * argument; honours `signal` while a body evaluates.
   */
  renderPrompt(
    decl: DeclOf<'Prompt'>,
    module: Module,
    args: ReadonlyMap<string, Value>,
    at: { readonly callerScope?: Environment; readonly span: Span },
    signal: AbortSignal,
  ): Promise<string> {
    const asset = module.assets.get(decl);
    return renderPrompt(decl, asset?.kind === 'prompt' ? asset.body : undefined, args, {
      evaluate: (e, scope) => this.interpreter.evaluate(e, scope, signal),
      scope: () => this.moduleEnv(module).child(),
      callerScope: at.callerScope ?? this.moduleEnv(module),
      span: at.span,
    });
  }

  async spawn(stmt: StmtOf<'Spawn'>, env: Environment, signal: AbortSignal): Promise<void> {
    const call = stmt.call;
    const agent =
      call.kind === 'Call' && call.callee.kind === 'Member' && call.callee.object.kind === 'Ident'
        ? call.callee.object.name
        : 'agent';
    // The call runs later (maybe once a concurrency slot frees up): it sees the variables as
    // they are now, not as the step goes on to change them.
    const frozen = snapshot(env);
    const start = (scope: Environment) => {
      const controller = new AbortController();
      const linked = AbortSignal.any([signal, controller.signal]);
      const started = Date.now();
      let handle: TaskHandle;
      const promise = this.#spawns
        .run(linked, () => this.interpreter.evaluate(call, scope, linked))
        .then(
          (result) => {
            handle.status = 'ok';
            handle.result = result;
          },
          (e: unknown) => {
            handle.status = linked.aborted ? 'canceled' : 'failed';
            handle.error = e instanceof LangError ? e.summary : String(e);
          },
        )
        .finally(() => {
          handle.durationMs = Date.now() - started;
        });
      handle = new TaskHandle(agent, controller, promise);
      this.pending.push(handle);
      return handle;
    };
    if (!stmt.forIterable) {
      env.declare(stmt.name, start(frozen));
      return;
    }
    const items = await this.interpreter.evaluate(stmt.forIterable, env, signal);
    if (!Array.isArray(items))
      throw new LangError(
        'TYPE',
        `spawn … for … in needs an array, got ${typeOf(items)}`,
        stmt.forIterable.span,
      );
    const handles = items.map((item) => {
      const scope = frozen.child();
      scope.declare(stmt.forName as string, item);
      return start(scope);
    });
    env.declare(stmt.name, handles);
  }

  async wait(stmt: StmtOf<'Wait'>, env: Environment, signal: AbortSignal): Promise<void> {
    const handles: TaskHandle[] = [];
    for (const h of stmt.handles) {
      const v = env.lookup(h.name);
      const list = Array.isArray(v) ? v : [v];
      for (const x of list) {
        if (!(x instanceof TaskHandle))
          throw new LangError('TYPE', `wait: '${h.name}' is not a spawn handle`, h.span);
        handles.push(x);
      }
    }
    let timeoutMs: number | undefined;
    let collect = false;
    for (const o of stmt.options) {
      if (o.name === 'timeout') {
        if (o.value.kind !== 'Duration')
          throw new LangError('TYPE', 'wait timeout: needs a duration like 90s', o.value.span);
        timeoutMs = o.value.ms;
      } else {
        collect = (await this.interpreter.evaluate(o.value, env, signal)) === 'collect';
      }
    }
    try {
      await waitFor(handles, { mode: stmt.mode, timeoutMs, collect, signal });
    } catch (e) {
      throw withSpan(e, stmt.span);
    } finally {
      // Calls the wait gave up on (wait any, N of, fail-fast, timeout) are cancelled; let them
      // finish stopping, so every handle reads its final status after the wait.
      await Promise.all(handles.map((h) => h.promise));
    }
  }

  nameof(name: string, span: Span): string {
    for (const module of this.#moduleEnvs.keys()) {
      if (moduleScope(module).bindings.has(name) || this.#program.namespace.bindings.has(name))
        return name;
    }
    throw new LangError('UNDEFINED', `nameof: '${name}' is not declared`, span);
  }

  /** Waits for every task spawned and not waited for (the end of a step joins them). */
  async joinPending(): Promise<void> {
    const tasks = this.pending.splice(0);
    await Promise.all(tasks.map((t) => t.promise));
  }

  /** Calls a function value outside any expression (hooks, `stop_when`). */
  call(fn: FunctionValue, args: Value[], signal: AbortSignal, span: Span): Promise<Value> {
    return this.interpreter.invoke(fn, callArgs(args), signal, span);
  }
}

/**
 * A copy of every variable `env` sees, arrays and objects copied deeply, over the same module
 * scope: what a spawned call evaluates its arguments in.
 */
function snapshot(env: Environment): Environment {
  let root = env;
  while (root.parent) root = root.parent;
  const copy = new Environment(root);
  const seen = new Set<string>();
  for (let e: Environment | undefined = env; e && e !== root; e = e.parent) {
    for (const [name, value] of e.own()) {
      if (seen.has(name)) continue;
      seen.add(name);
      copy.declare(name, cloneValue(value));
    }
  }
  return copy;
}

function cloneValue(v: Value): Value {
  if (Array.isArray(v)) return v.map(cloneValue);
  if (isObject(v)) return newObject(Object.entries(v).map(([k, x]) => [k, cloneValue(x)]));
  return v;
}

/** Why an extension kind has no methods in a run (mcp and a2a have theirs). */
function extensionGap(kind: string): string {
  if (kind === 'store') return 'a store is a state backend for mhl serve, not callable from a step';
  return 'external extension adapters are not part of this runtime';
}

function isAncestor(root: Environment, env: Environment): boolean {
  for (let e: Environment | undefined = env; e; e = e.parent) if (e === root) return true;
  return false;
}

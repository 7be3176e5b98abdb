/**
 * Agent calls that need a declaration: `A.run(prompt:, schema:?, skills:?)` (the `before` hook,
 * prompt and schema, skills through `system_prompt`, the agent's policies, the `after` hook) and
 * `R.delegate(prompt:, schema:?)`, whose choice router.ts makes. Also builds and caches each
 * agent's spec for the run.
 */
import type { DeclOf, ExprOf, LoadedProgram, Module, NamedDecl, Span } from '../../lang/index.js';
import { LangError, moduleScope } from '../../lang/index.js';
import { type AgentConfigContext, agentHooks, buildAgentSpec } from '../agents/agent-config.js';
import type { AgentSpec } from '../agents/agent-spec.js';
import { type AgentContext, runAgent } from '../agents/agents.js';
import type { RunServices } from './declarations.js';
import type { Environment } from './environment.js';
import { hintFor } from './error-hints.js';
import type { Interpreter } from './interpreter.js';
import { type Delegation, delegate } from './router.js';
import {
  callArgs,
  fromJson,
  isObject,
  newObject,
  Reference,
  typeOf,
  type Value,
} from './values.js';
import { wrapMessage } from './wrap-message.js';

/** What agent calls need from the run's scope. */
export interface AgentCallScope {
  readonly interpreter: Interpreter;
  readonly program: LoadedProgram;
  readonly services: RunServices;
  moduleEnv(module: Module): Environment;
  /** The declaration `name` means where `env` is (undefined when a local variable shadows it). */
  declOf(env: Environment, name: string): { decl: NamedDecl; module: Module } | undefined;
}

export class AgentCalls {
  readonly #scope: AgentCallScope;
  readonly #specs = new Map<NamedDecl, Promise<AgentSpec>>();

  constructor(scope: AgentCallScope) {
    this.#scope = scope;
  }

  async run(
    found: { decl: DeclOf<'Agent'>; module: Module },
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value> {
    const { decl, module } = found;
    const arg = (n: string) => call.args.find((a) => a.name === n)?.value;
    const scope = await this.#before(decl, env, signal, call.span);
    const promptExpr = arg('prompt');
    let prompt = promptExpr
      ? await this.#scope.interpreter.evaluate(promptExpr, scope, signal)
      : null;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      throw new LangError('AGENT', `${decl.name}.run requires a non-empty prompt`, call.span);
    }
    const schemaExpr = arg('schema');
    const schema = schemaExpr
      ? await this.#scope.interpreter.evaluate(schemaExpr, scope, signal)
      : null;
    if (schema !== null && typeof schema !== 'string')
      throw new LangError(
        'AGENT',
        `${decl.name}.run: schema must be a string (use S.content or S.path)`,
        call.span,
      );
    const skillsExpr = arg('skills');
    if (skillsExpr) prompt = await this.#withSkills(decl, module, skillsExpr, prompt, env, signal);
    return this.#runDeclared(found, { prompt, schema }, env, signal, call.span);
  }

  /** Runs the agent's `before` hook; its object's fields become variables of the returned scope. */
  async #before(
    decl: DeclOf<'Agent'>,
    env: Environment,
    signal: AbortSignal,
    span: Span,
  ): Promise<Environment> {
    const before = agentHooks(decl.props).before;
    if (!before) return env;
    const extra = await this.#scope.interpreter.callFunction(
      before.params,
      before.body,
      env.child(),
      [],
      signal,
    );
    if (extra !== null && !isObject(extra))
      throw new LangError(
        'AGENT',
        `agent "${decl.name}": the before hook must return an object`,
        span,
      );
    const scope = env.child();
    if (extra) for (const [k, v] of Object.entries(extra)) scope.declare(k, v);
    return scope;
  }

  /** Sends an evaluated prompt to a declared agent (its policies, then its `after` hook). */
  async #runDeclared(
    found: { decl: DeclOf<'Agent'>; module: Module },
    request: Delegation,
    env: Environment,
    signal: AbortSignal,
    span: Span,
  ): Promise<Value> {
    const { decl, module } = found;
    const spec = await this.#spec(decl, module, signal);
    let result = await this.#send(decl.name, spec, request, signal, span);
    const after = agentHooks(decl.props).after;
    if (after) result = await this.#after(decl.name, after, result, env, signal, span);
    return result;
  }

  async #send(
    name: string,
    spec: AgentSpec,
    request: Delegation,
    signal: AbortSignal,
    span: Span,
  ): Promise<Value> {
    try {
      const { prompt, schema } = request;
      return await runAgent(
        spec,
        { prompt, schema: schema ?? undefined },
        this.#agentContext(signal),
      );
    } catch (e) {
      if (signal.aborted) throw e;
      const message =
        e instanceof Error ? (e instanceof LangError ? e.summary : e.message) : String(e);
      const subject = `agent "${name}"`;
      const text = wrapMessage(`${subject} failed: `, subject, message);
      // The agent's own failure (exit, timeout, …) says best what to do.
      const hint = e instanceof LangError ? (e.hint ?? hintFor(e.code, e)) : undefined;
      throw new LangError('AGENT', text, span, { cause: e, hint });
    }
  }

  /** `R.delegate(prompt:, schema:?)`: the router picks an agent (router.ts), which then runs. */
  async delegate(
    router: DeclOf<'Router'>,
    module: Module,
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value> {
    const request = await this.#delegation(router.name, call, env, signal);
    const menv = this.#scope.moduleEnv(module);
    const agent = (name: string) => {
      const b =
        moduleScope(module).bindings.get(name) ?? this.#scope.program.namespace.bindings.get(name);
      return b?.kind === 'decl' && b.decl.kind === 'Agent'
        ? { decl: b.decl as DeclOf<'Agent'>, module: b.module }
        : undefined;
    };
    return delegate(
      router,
      {
        evaluate: (e, s) => this.#scope.interpreter.evaluate(e, menv, s),
        call: (fn, args, s, span) => this.#scope.interpreter.invoke(fn, callArgs(args), s, span),
        agent,
        runDeclared: async (target, req, s, span) =>
          this.#runDeclared(target, req, await this.#before(target.decl, env, s, span), s, span),
        runInline: async (props, req, s) => {
          const spec = await buildAgentSpec(
            '<inline>',
            props,
            this.#configContext(module, s),
            false,
          );
          return this.#send(`${router.name}.decider`, spec, req, s, call.span);
        },
      },
      request,
      signal,
      call.span,
    );
  }

  async #delegation(
    name: string,
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Delegation> {
    const arg = (n: string) => call.args.find((a) => a.name === n)?.value;
    for (const a of call.args)
      if (a.name !== 'prompt' && a.name !== 'schema')
        throw new LangError('CALL', `${name}.delegate takes prompt: and schema:`, a.span);
    const promptExpr = arg('prompt');
    const prompt = promptExpr
      ? await this.#scope.interpreter.evaluate(promptExpr, env, signal)
      : null;
    if (typeof prompt !== 'string' || prompt.trim() === '')
      throw new LangError('ROUTER', `${name}.delegate requires a non-empty prompt`, call.span);
    const schemaExpr = arg('schema');
    const schema = schemaExpr
      ? await this.#scope.interpreter.evaluate(schemaExpr, env, signal)
      : null;
    if (schema !== null && typeof schema !== 'string')
      throw new LangError('ROUTER', `${name}.delegate: schema must be a string`, call.span);
    return { prompt, schema };
  }

  async #after(
    name: string,
    after: ExprOf<'Lambda'>,
    result: Value,
    env: Environment,
    signal: AbortSignal,
    span: Span,
  ): Promise<Value> {
    const scope = env.child();
    scope.declare('result', result);
    // The legacy form `after: (mcp, tools, result) -> …` gets the response as its last parameter.
    const args: Value[] = after.params.map((_, i) =>
      i === after.params.length - 1 ? result : null,
    );
    const replaced = await this.#scope.interpreter.callFunction(
      after.params,
      after.body,
      scope,
      args,
      signal,
    );
    if (replaced === null) return result;
    if (typeof replaced !== 'string')
      throw new LangError(
        'AGENT',
        `agent "${name}": the after hook must return a string or nothing, got ${typeOf(replaced)}`,
        span,
      );
    return replaced;
  }

  async #withSkills(
    decl: DeclOf<'Agent'>,
    module: Module,
    skillsExpr: ExprOf<'Call'>['args'][number]['value'],
    prompt: string,
    env: Environment,
    signal: AbortSignal,
  ): Promise<string> {
    const selected = await this.#scope.interpreter.evaluate(skillsExpr, env, signal);
    if (!Array.isArray(selected))
      throw new LangError('AGENT', 'skills: takes an array of skills', skillsExpr.span);
    const allowedExpr = decl.props.find((p) => p.name === 'skills')?.value;
    const allowed = allowedExpr
      ? await this.#scope.interpreter.evaluate(allowedExpr, this.#scope.moduleEnv(module), signal)
      : [];
    const hook = agentHooks(decl.props).systemPrompt;
    if (!hook)
      throw new LangError(
        'AGENT',
        `agent "${decl.name}" declares no system_prompt`,
        skillsExpr.span,
      );
    const skills: Value[] = [];
    for (const s of selected) {
      if (!(s instanceof Reference) || s.refKind !== 'skill')
        throw new LangError('AGENT', 'skills: takes declared skills', skillsExpr.span);
      if (!Array.isArray(allowed) || !allowed.includes(s))
        throw new LangError(
          'AGENT',
          `skill "${s.name}" not permitted for agent "${decl.name}"`,
          skillsExpr.span,
        );
      const found = this.#scope.declOf(env, s.name);
      const asset = found ? found.module.assets.get(found.decl) : undefined;
      if (asset?.kind !== 'skill')
        throw new LangError('ASSET', `skill '${s.name}' could not be loaded`, skillsExpr.span);
      skills.push(
        newObject([
          ['name', s.name],
          ['frontmatter', fromJson(asset.frontmatter)],
          ['content', asset.content],
        ]),
      );
    }
    const text = await this.#scope.interpreter.callFunction(
      hook.params,
      hook.body,
      env.child(),
      [skills, prompt],
      signal,
    );
    if (typeof text !== 'string')
      throw new LangError(
        'AGENT',
        `agent "${decl.name}": system_prompt must return a string`,
        skillsExpr.span,
      );
    return text;
  }

  #spec(decl: DeclOf<'Agent'>, module: Module, signal: AbortSignal): Promise<AgentSpec> {
    let spec = this.#specs.get(decl);
    if (!spec) {
      spec = buildAgentSpec(decl.name, decl.props, this.#configContext(module, signal));
      this.#specs.set(decl, spec);
    }
    return spec;
  }

  #configContext(module: Module, signal: AbortSignal): AgentConfigContext {
    const env = this.#scope.moduleEnv(module);
    return {
      evaluate: (e) => this.#scope.interpreter.evaluate(e, env, signal),
      sourceOf: (file) => this.#scope.program.texts.get(file),
      agentProps: (name) => {
        const b =
          moduleScope(module).bindings.get(name) ??
          this.#scope.program.namespace.bindings.get(name);
        return b?.kind === 'decl' && b.decl.kind === 'Agent' ? b.decl : undefined;
      },
    };
  }

  #agentContext(signal: AbortSignal): AgentContext {
    const { cwd, childEnv, redactor, output, cacheDir, agents } = this.#scope.services;
    return { signal, cwd, childEnv, redactor, output, cacheDir, state: agents };
  }
}

/**
 * Name resolution for lint: every identifier must name a local, a pipeline variable, a
 * declaration in the program's namespace, a native namespace or a built-in. Also catches
 * assignments to constants and misplaced `spawn`/`goto`.
 *
 * Scopes follow the runtime: blocks nest, a step sees its pipeline's inputs and variables, a tool
 * method sees only its parameters and the namespace. Agent hooks are not name-checked because they
 * run with the calling step's variables in scope, which only the call site knows.
 */
import type { Block, DeclOf, Expr, NamedDecl, Param, Stmt } from './ast.js';
import { BUILTIN_FUNCTIONS, NATIVE_NAMESPACES, TEST_ASSERTIONS } from './builtins.js';
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic, type Span } from './diagnostics.js';
import type { Binding } from './modules.js';
import { suggest } from './suggest.js';

interface Local {
  readonly isConst: boolean;
}

/** Every local is one of these two: a name needs no object of its own. */
const VAR: Local = { isConst: false };
const CONST: Local = { isConst: true };

class Scope {
  /** Made on the first declaration: most nested blocks declare nothing. */
  #names: Map<string, Local> | undefined;
  readonly parent: Scope | undefined;
  constructor(parent?: Scope, names?: Iterable<string>) {
    this.parent = parent;
    if (names) for (const n of names) this.declare(n);
  }
  declare(name: string, isConst = false): void {
    this.#names ??= new Map();
    this.#names.set(name, isConst ? CONST : VAR);
  }
  lookup(name: string): Local | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const found = s.#names?.get(name);
      if (found) return found;
    }
    return undefined;
  }
  *visible(): Generator<string> {
    for (let s: Scope | undefined = this; s; s = s.parent) if (s.#names) yield* s.#names.keys();
  }
}

interface Context {
  /** Inside a step body (not nested in a lambda): where `goto` and `spawn` may appear. */
  readonly inStep: boolean;
  /** Directly in the step's top-level block: the only place `spawn` may appear. */
  readonly stepTop: boolean;
  /** Names allowed but unknown to the checker (before-hook fields in an agent prompt). */
  readonly lenient: boolean;
}

const NO_STEP: Context = { inStep: false, stepTop: false, lenient: false };
/** The contexts of a step's own block and of the blocks nested in it, made once. */
const STEP_TOP: Context = { inStep: true, stepTop: true, lenient: false };
const IN_STEP: Context = { inStep: true, stepTop: false, lenient: false };

/** `ctx` in a nested block: only a step's own block is its top. */
function nestedContext(ctx: Context): Context {
  if (!ctx.stepTop) return ctx;
  return ctx.inStep && !ctx.lenient ? IN_STEP : { ...ctx, stepTop: false };
}

export class NameChecker {
  readonly #bindings: ReadonlyMap<string, Binding>;
  readonly #out: Diagnostic[];
  /** The module's own pipelines, which its tests may run as `Name.run(inputs: {…})`. */
  readonly #pipelines: readonly string[];

  constructor(
    bindings: ReadonlyMap<string, Binding>,
    out: Diagnostic[],
    pipelines: readonly string[] = [],
  ) {
    this.#bindings = bindings;
    this.#out = out;
    this.#pipelines = pipelines;
  }

  /** Checks the bodies of one declaration. */
  checkDecl(decl: NamedDecl): void {
    switch (decl.kind) {
      case 'Pipeline':
        return this.#pipeline(decl);
      case 'Tool': {
        const toolScope = new Scope(undefined, ['self']);
        for (const v of decl.vars) {
          this.#expr(v.value, toolScope, NO_STEP);
          toolScope.declare(v.name, v.isConst);
        }
        for (const m of decl.methods) this.#function(m.params, m.body, toolScope);
        return;
      }
      case 'Prompt':
        if (decl.body) this.#function(decl.params, decl.body, undefined);
        return;
      case 'Agent':
        for (const p of decl.props)
          if (p.value.kind !== 'Lambda') this.#agentValue(p.name, p.value);
        return;
      case 'Router':
        // `select` runs in the router's module scope with only its parameter: check it fully.
        for (const p of decl.props) this.#expr(p.value, new Scope(), NO_STEP);
        return;
      case 'Memory':
      case 'Extension':
        for (const p of decl.props) this.#expr(p.value, new Scope(), NO_STEP);
        return;
      case 'Test':
        for (const c of decl.cases) {
          const names = [...TEST_ASSERTIONS, ...this.#pipelines];
          this.#block(c.body, new Scope(undefined, names), NO_STEP);
        }
        return;
    }
  }

  /** Agent `command`/`args` string literals are used verbatim: their `${…}` are placeholders. */
  #agentValue(name: string, value: Expr): void {
    const verbatim = name === 'command' || name === 'args';
    if (verbatim && value.kind === 'String') return;
    if (verbatim && value.kind === 'Array') {
      for (const item of value.items)
        if (item.kind !== 'String') this.#expr(item, new Scope(), NO_STEP);
      return;
    }
    this.#expr(value, new Scope(), NO_STEP);
  }

  #pipeline(decl: DeclOf<'Pipeline'>): void {
    const scope = new Scope(undefined, ['self']);
    for (const input of decl.inputs) {
      if (input.default) this.#expr(input.default, scope, NO_STEP);
      scope.declare(input.name);
    }
    for (const v of decl.vars) scope.declare(v.name, v.storage === 'const');
    for (const v of decl.vars) this.#expr(v.value, scope, NO_STEP);
    for (const p of decl.props) this.#expr(p.value, scope, NO_STEP);
    for (const step of decl.steps) {
      const steps = step.kind === 'Parallel' ? step.steps : [step];
      for (const s of steps) this.#block(s.body, new Scope(scope), STEP_TOP);
    }
  }

  #function(params: readonly Param[], body: Expr | Block, parent: Scope | undefined): void {
    const scope = new Scope(parent);
    for (const p of params) {
      if (p.default) this.#expr(p.default, scope, NO_STEP);
      scope.declare(p.name);
    }
    if (body.kind === 'Block') this.#block(body, scope, NO_STEP);
    else this.#expr(body, scope, NO_STEP);
  }

  #block(block: Block, scope: Scope, ctx: Context): void {
    for (const stmt of block.body) this.#stmt(stmt, scope, ctx);
  }

  #nested(block: Block | undefined, scope: Scope, ctx: Context, names?: string[]): void {
    if (block) this.#block(block, new Scope(scope, names), nestedContext(ctx));
  }

  #stmt(stmt: Stmt, scope: Scope, ctx: Context): void {
    switch (stmt.kind) {
      case 'VarDecl':
        this.#expr(stmt.value, scope, ctx);
        scope.declare(stmt.name, stmt.isConst);
        return;
      case 'Destructure':
        this.#expr(stmt.value, scope, ctx);
        for (const f of stmt.fields) {
          if (stmt.mode === 'var' || stmt.mode === 'const')
            scope.declare(f.name, stmt.mode === 'const');
          else if (stmt.mode === 'assign') this.#assignTo(f.name, f.span, scope, ctx);
        }
        return;
      case 'Assign': {
        let root: Expr = stmt.target;
        while (root.kind === 'Member' || root.kind === 'Index') {
          if (root.kind === 'Index') this.#expr(root.index, scope, ctx);
          root = root.object;
        }
        if (root.kind === 'Ident') this.#assignTo(root.name, root.span, scope, ctx);
        this.#expr(stmt.value, scope, ctx);
        return;
      }
      case 'If':
        this.#expr(stmt.cond, scope, ctx);
        this.#nested(stmt.then, scope, ctx);
        this.#nested(stmt.else, scope, ctx);
        return;
      case 'While':
        this.#expr(stmt.cond, scope, ctx);
        this.#nested(stmt.body, scope, ctx);
        return;
      case 'ForIn':
        this.#expr(stmt.iterable, scope, ctx);
        this.#nested(stmt.body, scope, ctx, [stmt.name]);
        return;
      case 'Try':
        this.#nested(stmt.body, scope, ctx);
        this.#nested(stmt.handler, scope, ctx, stmt.catchName ? [stmt.catchName] : undefined);
        this.#nested(stmt.finalizer, scope, ctx);
        return;
      case 'Return':
      case 'Break':
        if (stmt.value) this.#expr(stmt.value, scope, ctx);
        return;
      case 'Goto':
        if (!ctx.inStep)
          this.#report(DIAGNOSTIC_CODES.GOTO, "'goto' is only allowed inside a step", stmt.span);
        return;
      case 'Spawn':
        return this.#spawn(stmt, scope, ctx);
      case 'Wait':
        for (const h of stmt.handles) this.#expr(h, scope, ctx);
        for (const o of stmt.options) this.#expr(o.value, scope, ctx);
        return;
      case 'ExprStmt':
        this.#expr(stmt.expr, scope, ctx);
        return;
    }
  }

  #spawn(stmt: Extract<Stmt, { kind: 'Spawn' }>, scope: Scope, ctx: Context): void {
    if (!ctx.stepTop) {
      this.#report(
        DIAGNOSTIC_CODES.INVALID,
        "'spawn' is only allowed directly inside a step, not in a nested block",
        stmt.span,
      );
    }
    const call = stmt.call;
    const isAgentRun =
      call.kind === 'Call' &&
      call.callee.kind === 'Member' &&
      call.callee.object.kind === 'Ident' &&
      ['run', 'delegate'].includes(call.callee.name);
    if (!isAgentRun) {
      this.#report(
        DIAGNOSTIC_CODES.INVALID,
        "'spawn' takes an agent call, e.g. spawn h = Reviewer.run(prompt: p)",
        call.span,
      );
    }
    if (stmt.forIterable) this.#expr(stmt.forIterable, scope, ctx);
    this.#expr(call, stmt.forName ? new Scope(scope, [stmt.forName]) : scope, ctx);
    scope.declare(stmt.name);
  }

  #assignTo(name: string, span: Span, scope: Scope, ctx: Context): void {
    const local = scope.lookup(name);
    if (local?.isConst) {
      this.#report(
        DIAGNOSTIC_CODES.CONST_ASSIGN,
        `cannot assign to const '${name}'; declare it with var`,
        span,
      );
    } else if (!local) {
      this.#ident(name, span, scope, ctx);
    }
  }

  #expr(e: Expr, scope: Scope, ctx: Context): void {
    switch (e.kind) {
      case 'Ident':
        return this.#ident(e.name, e.span, scope, ctx);
      case 'String':
        for (const seg of e.segments) if (typeof seg !== 'string') this.#expr(seg, scope, ctx);
        return;
      case 'Array':
        for (const item of e.items) this.#expr(item, scope, ctx);
        return;
      case 'Object':
      case 'Ref':
        for (const f of e.fields) this.#expr(f.value, scope, ctx);
        return;
      case 'With':
        this.#expr(e.object, scope, ctx);
        for (const f of e.fields) this.#expr(f.value, scope, ctx);
        return;
      case 'InlineAgent':
        for (const p of e.props) if (p.value.kind !== 'Lambda') this.#agentValue(p.name, p.value);
        return;
      case 'Lambda':
        return this.#function(e.params, e.body, scope);
      case 'IfExpr':
        this.#expr(e.cond, scope, ctx);
        this.#expr(e.then, scope, ctx);
        this.#expr(e.else, scope, ctx);
        return;
      case 'Match':
        this.#exhaustive(e);
        this.#expr(e.subject, scope, ctx);
        for (const arm of e.arms) {
          if (arm.pattern) this.#expr(arm.pattern, scope, ctx);
          this.#expr(arm.value, scope, ctx);
        }
        return;
      case 'Unary':
        return this.#expr(e.operand, scope, ctx);
      case 'Binary':
        this.#expr(e.left, scope, ctx);
        this.#expr(e.right, scope, ctx);
        return;
      case 'Member':
        return this.#expr(e.object, scope, ctx);
      case 'Index':
        this.#expr(e.object, scope, ctx);
        this.#expr(e.index, scope, ctx);
        return;
      case 'Slice':
        this.#expr(e.object, scope, ctx);
        if (e.lo) this.#expr(e.lo.value, scope, ctx);
        if (e.hi) this.#expr(e.hi.value, scope, ctx);
        return;
      case 'Call':
        return this.#call(e, scope, ctx);
    }
  }

  #call(e: Extract<Expr, { kind: 'Call' }>, scope: Scope, ctx: Context): void {
    const callee = e.callee;
    if (callee.kind === 'Ident' && callee.name === 'nameof' && !scope.lookup('nameof')) {
      const target = e.args[0]?.value;
      if (e.args.length !== 1 || target?.kind !== 'Ident') {
        this.#report(
          DIAGNOSTIC_CODES.INVALID,
          'nameof takes one declared name, e.g. nameof(Review)',
          e.span,
        );
      } else if (!this.#bindings.has(target.name)) {
        this.#ident(target.name, target.span, new Scope(), ctx);
      }
      return;
    }
    this.#expr(callee, scope, ctx);
    const binding =
      callee.kind === 'Member' &&
      callee.object.kind === 'Ident' &&
      !scope.lookup(callee.object.name)
        ? this.#bindings.get(callee.object.name)
        : undefined;
    const agent =
      binding?.kind === 'decl' && binding.decl.kind === 'Agent' ? binding.decl : undefined;
    const hasBeforeHook = agent?.props.some((p) => p.name === 'before') ?? false;
    for (const arg of e.args) {
      const fromHook = hasBeforeHook && (arg.name === 'prompt' || arg.name === 'schema');
      this.#expr(arg.value, scope, fromHook ? { ...ctx, lenient: true } : ctx);
    }
  }

  /** A match over enum variants or booleans with no `_` arm must cover every value. */
  #exhaustive(e: Extract<Expr, { kind: 'Match' }>): void {
    if (e.arms.length === 0 || e.arms.some((a) => a.pattern === undefined)) return;
    let subject: string | undefined;
    let all: string[] = [];
    const covered = new Set<string>();
    for (const { pattern: p } of e.arms) {
      if (p?.kind === 'Bool') {
        subject = 'bool';
        all = ['true', 'false'];
        covered.add(String(p.value));
        continue;
      }
      if (p?.kind !== 'Member' || p.object.kind !== 'Ident') return;
      const enumName = p.object.name;
      const b = this.#bindings.get(enumName);
      if (b?.kind !== 'decl' || b.decl.kind !== 'Enum') return;
      subject = `enum '${b.decl.name}'`;
      all = b.decl.variants.map((v) => `${enumName}.${v.name}`);
      covered.add(`${enumName}.${p.name}`);
    }
    const missing = all.filter((v) => !covered.has(v));
    if (missing.length === 0) return;
    const them = missing.length === 1 ? 'an arm for it' : 'arms for them';
    const message = `match on ${subject} is not exhaustive: missing ${missing.join(', ')}; add ${them} or a '_' arm`;
    this.#report(DIAGNOSTIC_CODES.INVALID, message, e.span);
  }

  #ident(name: string, span: Span, scope: Scope, ctx: Context): void {
    if (scope.lookup(name) || this.#bindings.has(name) || isIntrinsic(name) || ctx.lenient) return;
    if (TEST_ASSERTIONS.has(name)) {
      this.#report(
        DIAGNOSTIC_CODES.INVALID,
        `'${name}' is an assertion: it is only valid inside a test's describe block`,
        span,
      );
      return;
    }
    const hint = suggest(name, [...scope.visible(), ...this.#bindings.keys()]);
    this.#report(
      DIAGNOSTIC_CODES.UNKNOWN_NAME,
      `unknown name '${name}'${hint ? `; did you mean '${hint}'?` : ''}`,
      span,
    );
  }

  #report(code: Diagnostic['code'], message: string, span: Span): void {
    this.#out.push(diagnostic(code, message, span));
  }
}

function isIntrinsic(name: string): boolean {
  return name === 'context' || NATIVE_NAMESPACES.has(name) || BUILTIN_FUNCTIONS.has(name);
}

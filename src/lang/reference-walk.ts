/**
 * The walk behind `indexModule` (references.ts): visits every declaration, statement and
 * expression of a module with its scopes, recording each name's occurrence and target.
 *
 * Scoping follows check-names.ts: blocks nest, a step sees its pipeline's inputs and variables,
 * a tool method sees its parameters, the tool's members and the namespace.
 */
import { dirname, resolve } from 'node:path';
import type {
  Block,
  DeclOf,
  Expr,
  NamedDecl,
  ParallelGroup,
  Param,
  Step,
  Stmt,
  TypeNode,
} from './ast.js';
import { BUILTIN_FUNCTIONS, NATIVE_NAMESPACES } from './builtins.js';
import type { Span } from './diagnostics.js';
import { type Binding, type Module, moduleScope } from './modules.js';
import { exactName, findName, memberName } from './name-spans.js';
import type {
  LocalScope,
  LocalSymbol,
  ModuleIndex,
  Occurrence,
  SymbolTarget,
} from './references.js';

class Scope {
  readonly #names = new Map<string, LocalSymbol>();
  readonly parent: Scope | undefined;
  readonly tool: DeclOf<'Tool'> | undefined;
  constructor(parent: Scope | undefined, tool?: DeclOf<'Tool'>) {
    this.parent = parent;
    this.tool = tool ?? parent?.tool;
  }
  declare(local: LocalSymbol): void {
    this.#names.set(local.name, local);
  }
  lookup(name: string): LocalSymbol | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const found = s.#names.get(name);
      if (found) return found;
    }
    return undefined;
  }
}

export class ReferenceWalk {
  readonly #module: Module;
  readonly #text: string;
  readonly #names: ReadonlyMap<string, Binding>;
  readonly #occurrences: Occurrence[] = [];
  readonly #scopes: LocalScope[] = [];
  readonly #seen = new Set<number>();
  #pipeline: DeclOf<'Pipeline'> | undefined;

  constructor(module: Module, names: ReadonlyMap<string, Binding>) {
    this.#module = module;
    this.#text = module.text;
    this.#names = names;
  }

  run(): ModuleIndex {
    for (const decl of this.#module.program.decls) {
      if (decl.kind === 'Import') this.#import(decl);
      else this.#decl(decl);
    }
    return { module: this.#module, occurrences: this.#occurrences, scopes: this.#scopes };
  }

  #add(span: Span | undefined, target: SymbolTarget, declaration = false): void {
    // A name reached twice (a shorthand field, say) is still one occurrence.
    if (!span || this.#seen.has(span.start)) return;
    this.#seen.add(span.start);
    this.#occurrences.push({ span, target, declaration });
  }

  #scope(
    parent: Scope | undefined,
    span: { readonly start: number; readonly end: number },
    options: { tool?: DeclOf<'Tool'>; test?: boolean } = {},
  ) {
    const scope = new Scope(parent, options.tool);
    const info: LocalScope = {
      start: span.start,
      end: span.end,
      locals: [],
      test: options.test ?? false,
    };
    this.#scopes.push(info);
    const declare = scope.declare.bind(scope);
    scope.declare = (local) => {
      declare(local);
      info.locals.push(local);
      this.#add(local.span, { kind: 'local', local }, true);
    };
    return scope;
  }

  #local(
    scope: Scope,
    what: LocalSymbol['what'],
    name: string,
    declSpan: Span,
    nameSpan: Span | undefined,
    type?: TypeNode,
  ): void {
    if (nameSpan) scope.declare({ name, what, span: nameSpan, declSpan, type });
  }

  #import(decl: DeclOf<'Import'>): void {
    const edge = this.#module.imports.find((e) => e.decl === decl);
    const path = edge?.target?.path ?? resolve(dirname(this.#module.path), decl.path);
    this.#add(decl.pathSpan, { kind: 'file', path });
    const scope = moduleScope(this.#module).bindings;
    for (const item of decl.items) {
      const binding = scope.get(item.alias ?? item.name);
      const target = binding && this.#bindingTarget(binding);
      if (!target) continue;
      this.#add(exactName(this.#text, item.span, item.name), target);
      if (item.alias)
        this.#add(findName(this.#text, item.span, item.alias, { last: true }), target);
    }
  }

  #bindingTarget(binding: Binding): SymbolTarget | undefined {
    if (binding.kind === 'decl')
      return { kind: 'decl', decl: binding.decl, module: binding.module };
    if (binding.kind === 'namespace') return { kind: 'namespace', module: binding.module };
    return undefined;
  }

  #decl(decl: NamedDecl): void {
    this.#add(decl.nameSpan, { kind: 'decl', decl, module: this.#module }, true);
    switch (decl.kind) {
      case 'Pipeline':
        return this.#pipelineDecl(decl);
      case 'Tool': {
        const scope = this.#scope(undefined, decl.span, { tool: decl });
        for (const v of decl.vars) {
          this.#expr(v.value, scope);
          this.#local(scope, v.isConst ? 'const' : 'var', v.name, v.span, v.nameSpan);
        }
        for (const method of decl.methods) {
          const span = exactName(this.#text, method.span, method.name);
          this.#add(span, {
            kind: 'member',
            owner: decl,
            module: this.#module,
            name: method.name,
            span,
          });
          this.#function(method.params, method.body, scope, method.span);
          if (method.returnType) this.#type(method.returnType);
        }
        return;
      }
      case 'Extensible':
        for (const p of decl.props) this.#expr(p.value, undefined);
        return;
      case 'Prompt':
        if (decl.fromSpan && decl.from !== undefined) this.#asset(decl.fromSpan, decl.from);
        if (decl.body) this.#function(decl.params, decl.body, undefined, decl.span);
        else for (const p of decl.params) if (p.type) this.#type(p.type);
        return;
      case 'Skill':
      case 'Schema':
        if (decl.fromSpan && decl.from !== undefined) this.#asset(decl.fromSpan, decl.from);
        return;
      case 'Agent':
      case 'Router':
      case 'Memory':
      case 'Extension':
        for (const p of decl.props) this.#expr(p.value, undefined);
        return;
      case 'TypeAlias':
        return this.#type(decl.type);
      case 'Enum':
        for (const v of decl.variants)
          this.#add(
            v.span,
            { kind: 'member', owner: decl, module: this.#module, name: v.name, span: v.span },
            true,
          );
        return;
      case 'Test':
        for (const c of decl.cases)
          this.#block(c.body, this.#scope(undefined, c.span, { test: true }));
        return;
    }
  }

  #asset(span: Span, from: string): void {
    this.#add(span, { kind: 'file', path: resolve(dirname(this.#module.path), from) });
  }

  #pipelineDecl(decl: DeclOf<'Pipeline'>): void {
    this.#pipeline = decl;
    const scope = this.#scope(undefined, decl.span);
    const sig = decl.signature;
    if (sig?.returns) this.#type(sig.returns);
    for (const input of decl.inputs) {
      if (input.default) this.#expr(input.default, scope);
      this.#type(input.type);
      // A signature parameter is an input whose span starts at its name, not at `input`.
      const param = sig?.params.includes(input) === true;
      const nameSpan = param
        ? exactName(this.#text, input.span, input.name)
        : findName(this.#text, input.span, input.name, { from: input.span.start + 5 });
      this.#local(scope, param ? 'param' : 'input', input.name, input.span, nameSpan, input.type);
    }
    for (const v of decl.vars) {
      const from = v.span.start + v.storage.length;
      this.#local(scope, v.storage, v.name, v.span, findName(this.#text, v.span, v.name, { from }));
    }
    for (const v of decl.vars) this.#expr(v.value, scope);
    for (const p of decl.props) this.#expr(p.value, scope);
    for (const group of decl.steps) {
      this.#add(group.nameSpan, { kind: 'step', step: group }, true);
      const steps = group.kind === 'Parallel' ? group.steps : [group];
      for (const s of steps) {
        if (s !== group) this.#add(s.nameSpan, { kind: 'step', step: s }, true);
        this.#block(s.body, this.#scope(scope, s.body.span));
      }
    }
    this.#pipeline = undefined;
  }

  #function(
    params: readonly Param[],
    body: Expr | Block,
    parent: Scope | undefined,
    span: Span,
  ): void {
    const scope = this.#scope(parent, span);
    for (const p of params) {
      if (p.default) this.#expr(p.default, scope);
      if (p.type) this.#type(p.type);
      this.#local(scope, 'param', p.name, p.span, exactName(this.#text, p.span, p.name), p.type);
    }
    if (body.kind === 'Block') this.#block(body, scope);
    else this.#expr(body, scope);
  }

  #type(type: TypeNode): void {
    if (type.kind === 'ArrayType') return this.#type(type.element);
    if (type.kind === 'ShapeType') {
      for (const f of type.fields) this.#type(f.type);
      return;
    }
    const binding = this.#names.get(type.name);
    const target = binding && this.#bindingTarget(binding);
    if (target) this.#add(type.span, target);
  }

  #block(block: Block, scope: Scope): void {
    for (const stmt of block.body) this.#stmt(stmt, scope);
  }

  #nested(block: Block | undefined, parent: Scope): Scope | undefined {
    if (!block) return undefined;
    const scope = this.#scope(parent, block.span);
    this.#block(block, scope);
    return scope;
  }

  #stmt(stmt: Stmt, scope: Scope): void {
    const text = this.#text;
    switch (stmt.kind) {
      case 'VarDecl':
        this.#expr(stmt.value, scope);
        return this.#local(
          scope,
          stmt.isConst ? 'const' : 'var',
          stmt.name,
          stmt.span,
          stmt.nameSpan,
        );
      case 'Destructure':
        this.#expr(stmt.value, scope);
        for (const f of stmt.fields) {
          const span = findName(text, f.span, f.name, { last: true });
          if (stmt.mode === 'var' || stmt.mode === 'const')
            this.#local(scope, stmt.mode, f.name, stmt.span, span);
          else if (stmt.mode === 'assign' && span) this.#ident(f.name, span, scope);
        }
        return;
      case 'Assign':
        this.#expr(stmt.target, scope);
        return this.#expr(stmt.value, scope);
      case 'If':
        this.#expr(stmt.cond, scope);
        this.#nested(stmt.then, scope);
        this.#nested(stmt.else, scope);
        return;
      case 'While':
        this.#expr(stmt.cond, scope);
        this.#nested(stmt.body, scope);
        return;
      case 'ForIn': {
        this.#expr(stmt.iterable, scope);
        const inner = this.#scope(scope, stmt.span);
        const from = stmt.span.start + 3;
        this.#local(
          inner,
          'loop',
          stmt.name,
          stmt.span,
          findName(text, stmt.span, stmt.name, { from }),
        );
        this.#nested(stmt.body, inner);
        return;
      }
      case 'Try': {
        this.#nested(stmt.body, scope);
        let handlerParent = scope;
        if (stmt.catchName) {
          const at = text.lastIndexOf('catch', stmt.handler.span.start);
          const from = at >= stmt.span.start ? at + 5 : stmt.body.span.end;
          const span = findName(text, stmt.span, stmt.catchName, { from });
          if (span) {
            handlerParent = this.#scope(scope, { start: span.start, end: stmt.handler.span.end });
            this.#local(handlerParent, 'catch', stmt.catchName, stmt.span, span);
          }
        }
        this.#nested(stmt.handler, handlerParent);
        this.#nested(stmt.finalizer, scope);
        return;
      }
      case 'Return':
      case 'Break':
        if (stmt.value) this.#expr(stmt.value, scope);
        return;
      case 'Goto': {
        const step = this.#findStep(stmt.target);
        if (step) this.#add(exactName(text, stmt.targetSpan, stmt.target), { kind: 'step', step });
        return;
      }
      case 'Spawn': {
        if (stmt.forIterable) this.#expr(stmt.forIterable, scope);
        let callScope = scope;
        if (stmt.forName) {
          callScope = this.#scope(scope, stmt.span);
          const at = text.indexOf(' for ', stmt.call.span.end);
          const span =
            at >= 0 ? findName(text, stmt.span, stmt.forName, { from: at + 5 }) : undefined;
          this.#local(callScope, 'loop', stmt.forName, stmt.span, span);
        }
        this.#expr(stmt.call, callScope);
        const from = stmt.span.start + 5;
        return this.#local(
          scope,
          'spawn',
          stmt.name,
          stmt.span,
          findName(text, stmt.span, stmt.name, { from }),
        );
      }
      case 'Wait':
        for (const h of stmt.handles) this.#expr(h, scope);
        for (const o of stmt.options) this.#expr(o.value, scope);
        return;
      case 'ExprStmt':
        return this.#expr(stmt.expr, scope);
    }
  }

  #findStep(name: string): Step | ParallelGroup | undefined {
    for (const group of this.#pipeline?.steps ?? []) {
      if (group.name === name) return group;
      if (group.kind === 'Parallel') {
        const inner = group.steps.find((s) => s.name === name);
        if (inner) return inner;
      }
    }
    return undefined;
  }

  #ident(name: string, span: Span, scope: Scope | undefined): void {
    const at = exactName(this.#text, span, name);
    if (!at) return;
    const local = scope?.lookup(name);
    if (local) return this.#add(at, { kind: 'local', local });
    if (name === 'self' && scope?.tool)
      return this.#add(at, { kind: 'decl', decl: scope.tool, module: this.#module });
    const binding = this.#names.get(name);
    const target = binding && this.#bindingTarget(binding);
    if (target) return this.#add(at, target);
    if (NATIVE_NAMESPACES.has(name)) return this.#add(at, { kind: 'native', name });
    if (BUILTIN_FUNCTIONS.has(name)) this.#add(at, { kind: 'builtin', name });
  }

  #member(e: Extract<Expr, { kind: 'Member' }>, scope: Scope | undefined): void {
    this.#expr(e.object, scope);
    const span = memberName(this.#text, e.span, e.name);
    if (!span || e.object.kind !== 'Ident') return;
    const owner = e.object.name;
    if (scope?.lookup(owner)) return;
    if (owner === 'self' && scope?.tool)
      return this.#memberOf(scope.tool, this.#module, e.name, span);
    const binding = this.#names.get(owner);
    if (binding?.kind === 'decl') return this.#memberOf(binding.decl, binding.module, e.name, span);
    if (binding?.kind === 'namespace') {
      const decl = binding.module.program.decls.find(
        (d): d is NamedDecl => d.kind !== 'Import' && d.name === e.name,
      );
      if (decl) this.#add(span, { kind: 'decl', decl, module: binding.module });
      return;
    }
    if (!binding && NATIVE_NAMESPACES.has(owner))
      this.#add(span, { kind: 'native-method', namespace: owner, name: e.name });
  }

  #memberOf(owner: NamedDecl, module: Module, name: string, at: Span): void {
    let span: Span | undefined;
    if (owner.kind === 'Tool') {
      const method = owner.methods.find((m) => m.name === name);
      if (!method) return;
      span = exactName(module.text, method.span, name);
    } else if (owner.kind === 'Enum') {
      span = owner.variants.find((v) => v.name === name)?.span;
      if (!span) return;
    } else return;
    this.#add(at, { kind: 'member', owner, module, name, span });
  }

  #expr(e: Expr, scope: Scope | undefined): void {
    switch (e.kind) {
      case 'Ident':
        return this.#ident(e.name, e.span, scope);
      case 'String':
        for (const seg of e.segments) if (typeof seg !== 'string') this.#expr(seg, scope);
        return;
      case 'Array':
        for (const item of e.items) this.#expr(item, scope);
        return;
      case 'Object':
      case 'Ref':
      case 'InlineAgent':
        for (const f of 'fields' in e ? e.fields : e.props) this.#expr(f.value, scope);
        return;
      case 'With':
        this.#expr(e.object, scope);
        for (const f of e.fields) this.#expr(f.value, scope);
        return;
      case 'Lambda':
        return this.#function(e.params, e.body, scope, e.span);
      case 'IfExpr':
        this.#expr(e.cond, scope);
        this.#expr(e.then, scope);
        this.#expr(e.else, scope);
        return;
      case 'Match':
        this.#expr(e.subject, scope);
        for (const arm of e.arms) {
          if (arm.pattern) this.#expr(arm.pattern, scope);
          this.#expr(arm.value, scope);
        }
        return;
      case 'Unary':
        return this.#expr(e.operand, scope);
      case 'Binary':
        this.#expr(e.left, scope);
        this.#expr(e.right, scope);
        return;
      case 'Member':
        return this.#member(e, scope);
      case 'Index':
        this.#expr(e.object, scope);
        this.#expr(e.index, scope);
        return;
      case 'Slice':
        this.#expr(e.object, scope);
        if (e.lo) this.#expr(e.lo.value, scope);
        if (e.hi) this.#expr(e.hi.value, scope);
        return;
      case 'Call':
        this.#expr(e.callee, scope);
        for (const arg of e.args) this.#expr(arg.value, scope);
        return;
      case 'Null':
      case 'Bool':
      case 'Number':
      case 'Duration':
        return;
    }
  }
}

/**
 * Structural checks of declarations: properties each kind accepts, agent configuration, types,
 * duplicates inside a declaration, `goto` targets and unreachable steps. Name resolution lives in
 * check-names.ts; this module looks at shapes, not scopes.
 */
import type {
  Block,
  DeclOf,
  Expr,
  NamedDecl,
  Param,
  Property,
  Step,
  Stmt,
  TypeNode,
} from './ast.js';
import {
  AGENT_PROPERTIES,
  BUILTIN_TYPES,
  MEMORY_PROPERTIES,
  MEMORY_TYPES,
  PIPELINE_PROPERTIES,
  ROUTER_PROPERTIES,
} from './builtins.js';
import { checkExtension } from './check-extension.js';
import { checkPipelineParts } from './check-pipeline-parts.js';
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic, type Span } from './diagnostics.js';
import type { Binding } from './modules.js';
import { suggest } from './suggest.js';

type Report = (
  code: Diagnostic['code'],
  message: string,
  span: Span,
  severity?: Diagnostic['severity'],
) => void;

export function checkDeclaration(
  decl: NamedDecl,
  bindings: ReadonlyMap<string, Binding>,
  out: Diagnostic[],
): void {
  const report: Report = (code, message, span, severity) =>
    out.push(diagnostic(code, message, span, severity));
  const types = new TypeChecker(bindings, report);
  switch (decl.kind) {
    case 'Agent':
      return checkAgent(decl, report);
    case 'Memory':
      return checkMemory(decl, report);
    case 'Extension':
      checkUnique(decl.props, 'property', report);
      return checkExtension(decl, report);
    case 'Router':
      return checkRouter(decl, bindings, report);
    case 'Pipeline':
      return checkPipeline(decl, types, report);
    case 'Tool':
      checkUnique(decl.methods, 'method', report);
      for (const m of decl.methods) checkParams(m.params, types, report, true);
      return;
    case 'Prompt':
      checkParams(decl.params, types, report, false);
      return;
    case 'TypeAlias':
      if (decl.name in BUILTIN_TYPES) {
        report(
          DIAGNOSTIC_CODES.DUPLICATE,
          `type '${decl.name}' would shadow the built-in type; choose another name`,
          decl.nameSpan,
        );
      }
      types.check(decl.type);
      types.checkAliasCycle(decl);
      return;
    case 'Enum':
      checkUnique(decl.variants, 'enum variant', report);
      return;
  }
}

function checkUnique(
  items: readonly { name: string; span: Span }[],
  what: string,
  report: Report,
): void {
  // Most lists (parameters, properties, fields) are short: comparing pairs costs less than a Map.
  const seen = items.length > 8 ? new Map<string, Span>() : undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as { name: string; span: Span };
    const first = seen ? seen.get(item.name) : firstNamed(items, item.name, i);
    if (first)
      report(
        DIAGNOSTIC_CODES.DUPLICATE,
        `${what} '${item.name}' is already declared at line ${first.line}:${first.col}`,
        item.span,
      );
    else seen?.set(item.name, item.span);
  }
}

/** The span of the first of `items[0..before)` named `name`. */
function firstNamed(
  items: readonly { name: string; span: Span }[],
  name: string,
  before: number,
): Span | undefined {
  for (let j = 0; j < before; j++)
    if ((items[j] as { name: string }).name === name) return items[j]?.span;
  return undefined;
}

function checkProperties(
  props: readonly Property[],
  known: ReadonlySet<string>,
  owner: string,
  report: Report,
): void {
  checkUnique(props, 'property', report);
  for (const p of props) {
    if (!known.has(p.name)) {
      report(
        DIAGNOSTIC_CODES.UNKNOWN_PROPERTY,
        `${owner} has no property '${p.name}'; known: ${[...known].join(', ')}`,
        p.span,
      );
    }
  }
}

/** The one value each agent policy field accepts (the runtime implements no other). */
const AGENT_POLICY_VALUES: readonly [string, string, string][] = [
  ['retry', 'backoff', 'exponential'],
  ['cache', 'strategy', 'exact'],
  ['rate_limit', 'on_exceeded', 'queue'],
];

/** The text of a string literal without interpolation, else undefined. */
function stringLiteral(value: Expr): string | undefined {
  if (value.kind !== 'String' || value.segments.length !== 1) return undefined;
  return typeof value.segments[0] === 'string' ? value.segments[0] : undefined;
}

function literal(props: readonly Property[], name: string): string | undefined {
  const value = props.find((p) => p.name === name)?.value;
  return value ? stringLiteral(value) : undefined;
}

function checkAgent(decl: DeclOf<'Agent'>, report: Report): void {
  const owner = `agent '${decl.name}'`;
  checkProperties(decl.props, AGENT_PROPERTIES, owner, report);
  const has = (name: string) => decl.props.some((p) => p.name === name);
  const engine = literal(decl.props, 'engine');
  const isCli =
    engine === undefined ? !has('engine') || !has('endpoint') : engine.startsWith('cli/');
  if (isCli && !has('command')) {
    report(
      DIAGNOSTIC_CODES.AGENT_CONFIG,
      `${owner} has no command: add command: "<cli>" (or an engine like "ollama/<model>" with an endpoint)`,
      decl.nameSpan,
    );
  }
  if (engine?.startsWith('ollama/') && !has('endpoint')) {
    report(
      DIAGNOSTIC_CODES.AGENT_CONFIG,
      `${owner} uses engine "${engine}" but has no endpoint`,
      decl.nameSpan,
    );
  }
  const skills = decl.props.find((p) => p.name === 'skills');
  if (skills && !has('system_prompt')) {
    report(
      DIAGNOSTIC_CODES.AGENT_CONFIG,
      `${owner} declares skills but no system_prompt: (skills, prompt) -> … to build the prompt`,
      skills.span,
    );
  }
  for (const [prop, field, allowed] of AGENT_POLICY_VALUES) {
    const value = decl.props.find((p) => p.name === prop)?.value;
    const given =
      value?.kind === 'Object' ? value.fields.find((f) => f.key === field)?.value : undefined;
    const text = given ? stringLiteral(given) : undefined;
    if (given && text !== undefined && text !== allowed) {
      const message = `${owner}: ${prop} ${field} "${text}" is not supported; use "${allowed}"`;
      report(DIAGNOSTIC_CODES.AGENT_CONFIG, message, given.span);
    }
  }
  const before = decl.props.find((p) => p.name === 'before');
  if (before?.value.kind === 'Lambda' && before.value.params.length > 0) {
    report(
      DIAGNOSTIC_CODES.AGENT_CONFIG,
      `${owner}: the before hook takes no parameters`,
      before.span,
    );
  }
}

/**
 * A router lists declared agents, chooses with `select` (a one-parameter lambda) and/or a
 * `decider` (an agent or an inline `agent { … }`). Unknown names are check-names.ts's to report.
 */
function checkRouter(
  decl: DeclOf<'Router'>,
  bindings: ReadonlyMap<string, Binding>,
  report: Report,
): void {
  const owner = `router '${decl.name}'`;
  checkProperties(decl.props, ROUTER_PROPERTIES, owner, report);
  const prop = (name: string) => decl.props.find((p) => p.name === name)?.value;
  const isAgent = (e: Expr) => {
    if (e.kind !== 'Ident') return false;
    // An unknown or unresolved name is reported elsewhere; only a known non-agent is wrong here.
    const b = bindings.get(e.name);
    return b?.kind !== 'decl' || b.decl.kind === 'Agent';
  };
  const agents = prop('agents');
  if (agents?.kind !== 'Array' || agents.items.length === 0)
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner} needs agents: [A, B]`,
      agents?.span ?? decl.nameSpan,
    );
  else
    for (const item of agents.items)
      if (!isAgent(item))
        report(DIAGNOSTIC_CODES.INVALID, `${owner}: agents lists declared agents only`, item.span);
  const select = prop('select');
  if (select && (select.kind !== 'Lambda' || select.params.length > 1))
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner}: select is a function of the prompt, e.g. (prompt) -> nameof(A)`,
      select.span,
    );
  const decider = prop('decider');
  if (decider && decider.kind !== 'InlineAgent' && !isAgent(decider))
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner}: decider is an agent or an inline agent { … }`,
      decider.span,
    );
  if (!select && !decider)
    report(DIAGNOSTIC_CODES.INVALID, `${owner} needs select, decider or both`, decl.nameSpan);
}

function checkMemory(decl: DeclOf<'Memory'>, report: Report): void {
  const owner = `memory '${decl.name}'`;
  checkProperties(decl.props, MEMORY_PROPERTIES, owner, report);
  const type = literal(decl.props, 'type');
  const typeSpan = decl.props.find((p) => p.name === 'type')?.value.span ?? decl.nameSpan;
  if (type === undefined) {
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner} needs type: one of ${[...MEMORY_TYPES].join(', ')}`,
      decl.nameSpan,
    );
  } else if (!MEMORY_TYPES.has(type)) {
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner} has unknown type "${type}"; use one of ${[...MEMORY_TYPES].join(', ')}`,
      typeSpan,
    );
  } else if (type !== 'kv' && type !== 'vector' && !decl.props.some((p) => p.name === 'path')) {
    report(DIAGNOSTIC_CODES.INVALID, `${owner} of type "${type}" needs a path`, decl.nameSpan);
  }
}

function checkParams(
  params: readonly Param[],
  types: TypeChecker,
  report: Report,
  trailingDefaults: boolean,
): void {
  checkUnique(params, 'parameter', report);
  let sawDefault = false;
  for (const p of params) {
    if (p.type) types.check(p.type, true);
    if (p.default) sawDefault = true;
    else if (sawDefault && trailingDefaults) {
      report(
        DIAGNOSTIC_CODES.INVALID,
        `parameter '${p.name}' has no default but follows one that has; move it before`,
        p.span,
      );
    }
  }
}

function checkPipeline(decl: DeclOf<'Pipeline'>, types: TypeChecker, report: Report): void {
  const owner = `${decl.flavor} '${decl.name}'`;
  checkProperties(decl.props, PIPELINE_PROPERTIES, owner, report);
  checkUnique([...decl.inputs, ...decl.vars], 'pipeline variable', report);
  for (const input of decl.inputs) types.check(input.type);
  if (
    !decl.loop &&
    (decl.maxIterations !== undefined || decl.props.some((p) => p.name === 'repeat'))
  ) {
    report(
      DIAGNOSTIC_CODES.INVALID,
      `${owner} is not a loop: 'repeat' and 'max' need 'loop ${decl.flavor}'`,
      decl.nameSpan,
    );
  }
  const steps = decl.steps.flatMap((s) => (s.kind === 'Parallel' ? s.steps : [s]));
  checkUnique(
    [...decl.steps, ...steps.filter((s) => !decl.steps.includes(s))].map((s) => ({
      name: s.name,
      span: s.nameSpan,
    })),
    'step',
    report,
  );
  const topLevel = new Set(decl.steps.filter((s) => s.kind === 'Step').map((s) => s.name));
  for (const group of decl.steps) {
    if (group.kind !== 'Parallel') continue;
    for (const s of group.steps) {
      eachStatement(s.body, (stmt) => {
        if (stmt.kind === 'Goto' || stmt.kind === 'Break') {
          report(
            DIAGNOSTIC_CODES.GOTO,
            `'${stmt.kind.toLowerCase()}' is not allowed inside parallel group '${group.name}'`,
            stmt.span,
          );
        }
      });
    }
  }
  for (const step of decl.steps) {
    if (step.kind !== 'Step') continue;
    eachStatement(step.body, (stmt) => {
      if (stmt.kind === 'Goto' && !topLevel.has(stmt.target)) {
        const inGroup = steps.some((s) => s.name === stmt.target);
        const hint = suggest(stmt.target, topLevel);
        const why = inGroup
          ? 'it is inside a parallel group'
          : `${owner} has no such step${hint ? `; did you mean '${hint}'?` : ''}`;
        report(DIAGNOSTIC_CODES.GOTO, `goto '${stmt.target}': ${why}`, stmt.targetSpan);
      }
    });
  }
  checkPipelineParts(decl, owner, report);
  reportUnreachable(decl, report);
}

/** Steps no path from the first (or `entry`) step reaches, by fall-through or goto. */
function reportUnreachable(decl: DeclOf<'Pipeline'>, report: Report): void {
  const order = decl.steps;
  if (order.length === 0) return;
  // A goto into a group reaches the group (the goto itself is reported as invalid).
  const index = new Map<string, number>();
  order.forEach((s, i) => {
    index.set(s.name, i);
    if (s.kind === 'Parallel') for (const inner of s.steps) index.set(inner.name, i);
  });
  const entry = order.findIndex((s) => s.kind === 'Step' && s.entry);
  const seen = new Set<number>();
  const queue = [Math.max(entry, 0)];
  while (queue.length) {
    const i = queue.pop() as number;
    if (seen.has(i)) continue;
    seen.add(i);
    const step = order[i] as Step | DeclOf<'Pipeline'>['steps'][number];
    const bodies = step.kind === 'Parallel' ? step.steps.map((s) => s.body) : [step.body];
    for (const body of bodies) {
      eachStatement(body, (stmt) => {
        const target = stmt.kind === 'Goto' ? index.get(stmt.target) : undefined;
        if (target !== undefined) queue.push(target);
      });
    }
    if (i + 1 < order.length && !bodies.every(alwaysLeaves)) queue.push(i + 1);
  }
  order.forEach((step, i) => {
    if (!seen.has(i)) {
      report(
        DIAGNOSTIC_CODES.UNREACHABLE,
        `${step.kind === 'Parallel' ? 'parallel group' : 'step'} '${step.name}' is never reached: no goto targets it and the step before it always jumps away`,
        step.nameSpan,
        'warning',
      );
    }
  });
}

/** Whether a block always ends with `goto`, `break` or `fail(…)`, so it never falls through. */
function alwaysLeaves(block: Block): boolean {
  const last = block.body[block.body.length - 1];
  if (!last) return false;
  if (last.kind === 'Goto' || last.kind === 'Break') return true;
  if (last.kind === 'If') return !!last.else && alwaysLeaves(last.then) && alwaysLeaves(last.else);
  return (
    last.kind === 'ExprStmt' &&
    last.expr.kind === 'Call' &&
    last.expr.callee.kind === 'Ident' &&
    last.expr.callee.name === 'fail'
  );
}

/**
 * Calls `visit` on every statement in a block, nested blocks included (not lambda bodies), in
 * source order. A callback, not a generator: `yield*` makes a generator per block and a result
 * object per statement per level of nesting, and this runs over every step two or three times.
 */
function eachStatement(block: Block, visit: (stmt: Stmt) => void): void {
  for (const stmt of block.body) {
    visit(stmt);
    switch (stmt.kind) {
      case 'If':
        eachStatement(stmt.then, visit);
        if (stmt.else) eachStatement(stmt.else, visit);
        break;
      case 'While':
      case 'ForIn':
        eachStatement(stmt.body, visit);
        break;
      case 'Try':
        eachStatement(stmt.body, visit);
        eachStatement(stmt.handler, visit);
        if (stmt.finalizer) eachStatement(stmt.finalizer, visit);
        break;
    }
  }
}

class TypeChecker {
  readonly #bindings: ReadonlyMap<string, Binding>;
  readonly #report: Report;
  constructor(bindings: ReadonlyMap<string, Binding>, report: Report) {
    this.#bindings = bindings;
    this.#report = report;
  }

  /** Reports unknown type names; `prompt` is a type only for prompt parameters. */
  check(type: TypeNode, allowPrompt = false): void {
    if (type.kind === 'ArrayType') return this.check(type.element, allowPrompt);
    if (type.kind === 'ShapeType') {
      checkUnique(type.fields, 'field', this.#report);
      for (const f of type.fields) this.check(f.type, allowPrompt);
      return;
    }
    if (type.name in BUILTIN_TYPES || (allowPrompt && type.name === 'prompt')) return;
    const b = this.#bindings.get(type.name);
    if (b?.kind === 'decl' && (b.decl.kind === 'TypeAlias' || b.decl.kind === 'Enum')) return;
    this.#report(
      DIAGNOSTIC_CODES.UNKNOWN_TYPE,
      `unknown type '${type.name}'; use string, number, bool, any, array, object, T[], {field: T} or a declared type or enum`,
      type.span,
    );
  }

  checkAliasCycle(decl: DeclOf<'TypeAlias'>): void {
    const seen = new Set<string>([decl.name]);
    let type: TypeNode = decl.type;
    let via: string | undefined;
    while (true) {
      while (type.kind === 'ArrayType') type = type.element;
      if (type.kind !== 'NamedType') return;
      via ??= type.name;
      if (seen.has(type.name)) {
        // Reported on each alias of the cycle; an alias that only leads into one stays quiet.
        if (type.name !== decl.name) return;
        const message = `type '${decl.name}' refers to itself through '${via}'`;
        this.#report(DIAGNOSTIC_CODES.INVALID, message, decl.nameSpan);
        return;
      }
      seen.add(type.name);
      const b = this.#bindings.get(type.name);
      if (b?.kind !== 'decl' || b.decl.kind !== 'TypeAlias') return;
      type = b.decl.type;
    }
  }
}

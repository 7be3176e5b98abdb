// Over 500 lines: the evaluator is one dispatch over every expression and statement kind of the grammar; splitting it would split that switch.
/**
 * The MHL evaluator: expressions and statements over `Environment`s.
 *
 * It knows the language, not where declarations come from or how a pipeline is stepped: calls
 * to declarations go through the `Callables` it is given (declarations.ts), and the runner
 * (runner.ts) drives steps. Every await passes the caller's `signal`; loops check it.
 */
import type { Block, Expr, ExprOf, Stmt, StmtOf } from '../../lang/index.js';
import { LangError, type Span } from '../../lang/index.js';
import type { Cancellation } from '../services/cancellation.js';
import type { Environment } from './environment.js';
import type { Completion } from './signals.js';
import { callValueMethod, copyObject } from './value-methods.js';
import {
  type CallArgs,
  callArgs,
  DurationValue,
  deepEqual,
  FunctionValue,
  formatValue,
  isObject,
  newObject,
  Reference,
  Tagged,
  TaskHandle,
  typeOf,
  type Value,
} from './values.js';

/** What the rest of a postfix chain sees once a `?.` found nothing: the whole chain is null. */
const SHORT: unique symbol = Symbol('optional chain cut short');

/** Iteration cap for `while`, as the reference runtime has. */
export const MAX_LOOP_ITERATIONS = 10_000;

/** What the evaluator asks of the world around it. */
export interface Callables {
  /** Special call forms resolved by name: prompt calls and agent `.run`. Undefined: not special. */
  specialCall(
    call: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value> | undefined;
  /** Runs a `spawn` statement. */
  spawn(stmt: StmtOf<'Spawn'>, env: Environment, signal: AbortSignal): Promise<void>;
  /** Runs a `wait` statement. */
  wait(stmt: StmtOf<'Wait'>, env: Environment, signal: AbortSignal): Promise<void>;
  /** `nameof(X)`: X's declared name, validated. */
  nameof(name: string, span: Span): string;
}

export class Interpreter {
  readonly #callables: Callables;

  constructor(callables: Callables) {
    this.#callables = callables;
  }

  // ── statements ─────────────────────────────────────────────────────────────────────────────

  /** Runs a block in a new child scope. Returns how control left it early, if it did. */
  async execBlock(
    block: Block,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Completion | undefined> {
    return this.execIn(block, env.child(), signal);
  }

  /**
   * Runs a block's statements directly in `env` (a step's own scope). Not async: statements
   * with nothing to wait for run here, and only from the first other one on is there a promise
   * (a block of plain copies, such as a one-step `out = text`, finishes with no microtask).
   * A throw before that is a synchronous throw; callers await the result either way.
   */
  execIn(
    block: Block,
    env: Environment,
    signal: AbortSignal,
  ): Completion | undefined | Promise<Completion | undefined> {
    const body = block.body;
    for (let i = 0; i < body.length; i++) {
      const stmt = body[i] as Stmt;
      signal.throwIfAborted();
      // `name = other` has nothing to wait for: done here, without exec's and #assign's async
      // frames and evaluate's (what they would do, in the same order: look up, then assign).
      if (isPlainCopy(stmt)) {
        env.assign(stmt.target.name, identValue(stmt.value, env), stmt.target.span);
        continue;
      }
      return this.#execFrom(body, i, env, signal);
    }
    return undefined;
  }

  /**
   * `execIn` for a block of plain copies only (`onlyPlainCopies`), which it runs to the end
   * synchronously; any other statement is a programming fault.
   */
  execCopies(block: Block, env: Environment, signal: Cancellation): void {
    for (const stmt of block.body) {
      signal.throwIfAborted();
      if (!isPlainCopy(stmt)) throw new Error('execCopies: not a plain copy');
      env.assign(stmt.target.name, identValue(stmt.value, env), stmt.target.span);
    }
  }

  /** The rest of `execIn` from statement `start`, the first that may wait. */
  async #execFrom(
    body: readonly Stmt[],
    start: number,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Completion | undefined> {
    for (let i = start; i < body.length; i++) {
      const stmt = body[i] as Stmt;
      // Checked already for the first one, by execIn, just before handing over.
      if (i > start) signal.throwIfAborted();
      if (isPlainCopy(stmt)) {
        env.assign(stmt.target.name, identValue(stmt.value, env), stmt.target.span);
        continue;
      }
      const done = await this.exec(stmt, env, signal);
      if (done) return done;
    }
    return undefined;
  }

  async exec(stmt: Stmt, env: Environment, signal: AbortSignal): Promise<Completion | undefined> {
    switch (stmt.kind) {
      case 'VarDecl':
        env.declare(stmt.name, await this.evaluate(stmt.value, env, signal), stmt.isConst);
        return undefined;
      case 'Destructure':
        return this.#destructure(stmt, env, signal);
      case 'Assign':
        await this.#assign(stmt, env, signal);
        return undefined;
      case 'If': {
        const cond = this.#bool(await this.evaluate(stmt.cond, env, signal), 'if', stmt.cond.span);
        const branch = cond ? stmt.then : stmt.else;
        return branch ? this.execBlock(branch, env, signal) : undefined;
      }
      case 'While': {
        for (
          let i = 0;
          this.#bool(await this.evaluate(stmt.cond, env, signal), 'while', stmt.cond.span);
          i++
        ) {
          if (i >= MAX_LOOP_ITERATIONS) {
            throw new LangError(
              'LIMIT_EXCEEDED',
              `while loop ran more than ${MAX_LOOP_ITERATIONS} times`,
              stmt.span,
            );
          }
          signal.throwIfAborted();
          const done = await this.execBlock(stmt.body, env, signal);
          if (done) return done;
        }
        return undefined;
      }
      case 'ForIn': {
        const items = await this.evaluate(stmt.iterable, env, signal);
        if (!Array.isArray(items)) {
          throw new LangError(
            'TYPE',
            `for … in needs an array, got ${typeOf(items)}`,
            stmt.iterable.span,
          );
        }
        for (const item of [...items]) {
          signal.throwIfAborted();
          const scope = env.child();
          scope.declare(stmt.name, item);
          const done = await this.execIn(stmt.body, scope, signal);
          if (done) return done;
        }
        return undefined;
      }
      case 'Try':
        return this.#try(stmt, env, signal);
      case 'Return':
        return {
          kind: 'return',
          value: stmt.value ? await this.evaluate(stmt.value, env, signal) : null,
        };
      case 'Break':
        return {
          kind: 'break',
          value: stmt.value ? await this.evaluate(stmt.value, env, signal) : null,
        };
      case 'Goto':
        return { kind: 'goto', target: stmt.target };
      case 'Spawn':
        await this.#callables.spawn(stmt, env, signal);
        return undefined;
      case 'Wait':
        await this.#callables.wait(stmt, env, signal);
        return undefined;
      case 'ExprStmt':
        await this.evaluate(stmt.expr, env, signal);
        return undefined;
    }
  }

  /**
   * `try`/`catch`/`finally`: only errors the program raised or hit are catchable (pause and
   * cancellation pass through); `finally` always runs, and a jump out of it wins, as in JS.
   */
  async #try(
    stmt: StmtOf<'Try'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Completion | undefined> {
    let outcome: { done: Completion | undefined } | { error: unknown };
    try {
      outcome = { done: await this.execBlock(stmt.body, env, signal) };
    } catch (e) {
      if (!(e instanceof LangError) || signal.aborted) {
        outcome = { error: e };
      } else {
        const scope = env.child();
        if (stmt.catchName) scope.declare(stmt.catchName, e.summary);
        try {
          outcome = { done: await this.execIn(stmt.handler, scope, signal) };
        } catch (handlerError) {
          outcome = { error: handlerError };
        }
      }
    }
    if (stmt.finalizer) {
      const jumped = await this.execBlock(stmt.finalizer, env, signal);
      if (jumped) return jumped;
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.done;
  }

  async #destructure(
    stmt: StmtOf<'Destructure'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<undefined> {
    const value = await this.evaluate(stmt.value, env, signal);
    if (!isObject(value))
      throw new LangError(
        'TYPE',
        `cannot destructure ${typeOf(value)}: expected an object`,
        stmt.value.span,
      );
    for (const f of stmt.fields) {
      const v = f.key in value ? (value[f.key] as Value) : null;
      if (stmt.mode === 'var' || stmt.mode === 'const')
        env.declare(f.name, v, stmt.mode === 'const');
      else env.assign(f.name, v, f.span);
    }
    return undefined;
  }

  async #assign(stmt: StmtOf<'Assign'>, env: Environment, signal: AbortSignal): Promise<void> {
    const target = stmt.target;
    let value = await this.evaluate(stmt.value, env, signal);
    if (stmt.op === '+=')
      value = this.#binary('+', await this.evaluate(target, env, signal), value, stmt.span);
    if (target.kind === 'Ident') return env.assign(target.name, value, target.span);
    const container = await this.evaluate(target.object, env, signal);
    if (target.kind === 'Member') {
      if (!isObject(container))
        throw new LangError(
          'TYPE',
          `cannot set .${target.name} on ${typeOf(container)}`,
          target.span,
        );
      container[target.name] = value;
      return;
    }
    const index = await this.evaluate(target.index, env, signal);
    if (Array.isArray(container) && typeof index === 'number') {
      if (!Number.isInteger(index) || index < 0 || index >= container.length) {
        throw new LangError(
          'INDEX',
          `index ${index} is out of range 0..${container.length - 1}`,
          target.index.span,
        );
      }
      container[index] = value;
    } else if (isObject(container) && typeof index === 'string') {
      container[index] = value;
    } else {
      throw new LangError(
        'TYPE',
        `cannot index ${typeOf(container)} with ${typeOf(index)}`,
        target.span,
      );
    }
  }

  // ── expressions ────────────────────────────────────────────────────────────────────────────

  async evaluate(e: Expr, env: Environment, signal: AbortSignal): Promise<Value> {
    switch (e.kind) {
      case 'Null':
        return null;
      case 'Bool':
      case 'Number':
        return e.value;
      case 'Duration':
        throw new LangError(
          'TYPE',
          'duration values are only allowed as arguments and settings (timeout: 30s)',
          e.span,
        );
      case 'String':
        return this.#string(e, env, signal);
      case 'Array': {
        const out: Value[] = [];
        for (const item of e.items) out.push(await this.#argument(item, env, signal));
        return out;
      }
      case 'Object':
      case 'Ref': {
        const o = newObject();
        for (const f of e.fields) o[f.key] = await this.#argument(f.value, env, signal);
        return o;
      }
      case 'With': {
        const base = await this.evaluate(e.object, env, signal);
        if (!isObject(base))
          throw new LangError('TYPE', `'with' needs an object, got ${typeOf(base)}`, e.object.span);
        const copy = copyObject(base);
        for (const f of e.fields) copy[f.key] = await this.evaluate(f.value, env, signal);
        return copy;
      }
      case 'InlineAgent':
        throw new LangError(
          'INVALID',
          'an inline agent { … } is only allowed in fallback:',
          e.span,
        );
      case 'Lambda':
        return this.closure(e, env);
      case 'IfExpr': {
        const cond = this.#bool(await this.evaluate(e.cond, env, signal), 'if', e.cond.span);
        return this.evaluate(cond ? e.then : e.else, env, signal);
      }
      case 'Match':
        return this.#match(e, env, signal);
      case 'Ident': {
        const v = env.lookup(e.name);
        if (v === undefined)
          throw new LangError('UNDEFINED', `undefined variable '${e.name}'`, e.span);
        return v;
      }
      case 'Unary': {
        const v = await this.evaluate(e.operand, env, signal);
        if (e.op === '!') return !this.#bool(v, '!', e.operand.span);
        if (typeof v !== 'number')
          throw new LangError('TYPE', `unary - needs a number, got ${typeOf(v)}`, e.span);
        return -v;
      }
      case 'Binary':
        return this.#binaryExpr(e, env, signal);
      case 'Member':
      case 'Index':
      case 'Slice':
      case 'Call': {
        const v = await this.#link(e, env, signal);
        return v === SHORT ? null : v;
      }
    }
  }

  /**
   * One link of a postfix chain (`a.b`, `a[i]`, `a[i..j]`, `a(x)`). A `?.` that finds nothing
   * answers `SHORT`, and every later link passes it on, so `n?.a.b` is null, not an error.
   */
  async #link(e: Expr, env: Environment, signal: AbortSignal): Promise<Value | typeof SHORT> {
    switch (e.kind) {
      case 'Member':
        return this.#member(e, env, signal);
      case 'Index':
        return this.#index(e, env, signal);
      case 'Slice':
        return this.#slice(e, env, signal);
      case 'Call':
        return this.#call(e, env, signal);
      default:
        return this.evaluate(e, env, signal);
    }
  }

  /** Arguments and settings may be durations; everywhere else a duration is an error. */
  async #argument(e: Expr, env: Environment, signal: AbortSignal): Promise<Value> {
    return e.kind === 'Duration' ? new DurationValue(e.ms) : this.evaluate(e, env, signal);
  }

  async #string(e: ExprOf<'String'>, env: Environment, signal: AbortSignal): Promise<Value> {
    if (e.segments.length === 1 && typeof e.segments[0] === 'string') return e.segments[0];
    let out = '';
    for (const seg of e.segments)
      out += typeof seg === 'string' ? seg : formatValue(await this.evaluate(seg, env, signal));
    return out;
  }

  async #match(e: ExprOf<'Match'>, env: Environment, signal: AbortSignal): Promise<Value> {
    const subject = await this.evaluate(e.subject, env, signal);
    for (const arm of e.arms) {
      if (!arm.pattern || deepEqual(subject, await this.evaluate(arm.pattern, env, signal))) {
        return this.evaluate(arm.value, env, signal);
      }
    }
    throw new LangError('MATCH', `no match arm for ${formatValue(subject)}`, e.span);
  }

  async #binaryExpr(e: ExprOf<'Binary'>, env: Environment, signal: AbortSignal): Promise<Value> {
    const left = await this.evaluate(e.left, env, signal);
    switch (e.op) {
      case '??':
        return left === null ? this.evaluate(e.right, env, signal) : left;
      case '&&':
        return (
          this.#bool(left, '&&', e.left.span) &&
          this.#bool(await this.evaluate(e.right, env, signal), '&&', e.right.span)
        );
      case '||':
        return (
          this.#bool(left, '||', e.left.span) ||
          this.#bool(await this.evaluate(e.right, env, signal), '||', e.right.span)
        );
    }
    return this.#binary(e.op, left, await this.evaluate(e.right, env, signal), e.span);
  }

  #binary(op: string, a: Value, b: Value, span: Span): Value {
    if (op === '==') return deepEqual(a, b);
    if (op === '!=') return !deepEqual(a, b);
    if (op === '+') {
      if (typeof a === 'number' && typeof b === 'number') return a + b;
      if (typeof a === 'string' && typeof b === 'string') return a + b;
      if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
      throw new LangError(
        'TYPE',
        `cannot add ${typeOf(a)} and ${typeOf(b)} (use "\${…}" to build strings)`,
        span,
      );
    }
    if (typeof a !== 'number' || typeof b !== 'number') {
      throw new LangError('TYPE', `'${op}' needs numbers, got ${typeOf(a)} and ${typeOf(b)}`, span);
    }
    switch (op) {
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        if (b === 0) throw new LangError('ARITHMETIC', 'division by zero', span);
        return a / b;
      case '%':
        if (b === 0) throw new LangError('ARITHMETIC', 'division by zero', span);
        return a % b;
      case '<':
        return a < b;
      case '<=':
        return a <= b;
      case '>':
        return a > b;
      case '>=':
        return a >= b;
    }
    throw new LangError('INTERNAL', `unknown operator ${op}`, span);
  }

  #bool(v: Value, where: string, span: Span): boolean {
    if (typeof v !== 'boolean')
      throw new LangError(
        'TYPE',
        `${where} needs a bool, got ${typeOf(v)} (MHL has no truthiness)`,
        span,
      );
    return v;
  }

  async #member(
    e: ExprOf<'Member'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value | typeof SHORT> {
    const object = await this.#link(e.object, env, signal);
    if (object === SHORT) return SHORT;
    const v = this.memberOf(object, e.name);
    if (v !== undefined) return v;
    if (e.optional) return SHORT;
    if (object === null)
      throw new LangError('NULL', `cannot read .${e.name} of null (use ?. to allow null)`, e.span);
    throw new LangError('FIELD', `${typeOf(object)} has no field '${e.name}'`, e.span);
  }

  /** `object.name` for objects, task handles and references; undefined when absent. */
  memberOf(object: Value, name: string): Value | undefined {
    if (isObject(object)) return name in object ? (object[name] as Value) : undefined;
    if (object instanceof TaskHandle) return object.field(name);
    if (object instanceof Reference) return object.member(name);
    return undefined;
  }

  async #index(
    e: ExprOf<'Index'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value | typeof SHORT> {
    const object = await this.#link(e.object, env, signal);
    if (object === SHORT) return SHORT;
    const index = await this.evaluate(e.index, env, signal);
    if (Array.isArray(object) && typeof index === 'number') {
      if (Number.isInteger(index) && index >= 0 && index < object.length)
        return object[index] as Value;
      if (e.optional) return SHORT;
      throw new LangError(
        'INDEX',
        `index ${index} is out of range 0..${object.length - 1}`,
        e.index.span,
      );
    }
    if (isObject(object) && typeof index === 'string') {
      if (index in object) return object[index] as Value;
      if (e.optional) return SHORT;
      throw new LangError(
        'FIELD',
        `object has no key '${index}' (use ?.[key] or .get(key, default))`,
        e.index.span,
      );
    }
    if (e.optional) return SHORT;
    throw new LangError('TYPE', `cannot index ${typeOf(object)} with ${typeOf(index)}`, e.span);
  }

  async #slice(
    e: ExprOf<'Slice'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value | typeof SHORT> {
    const object = await this.#link(e.object, env, signal);
    if (object === SHORT) return SHORT;
    if (!Array.isArray(object) && typeof object !== 'string') {
      throw new LangError('TYPE', `cannot slice ${typeOf(object)}`, e.span);
    }
    const bound = async (b: typeof e.lo, fallback: number) => {
      if (!b) return fallback;
      const n = await this.evaluate(b.value, env, signal);
      if (typeof n !== 'number' || !Number.isInteger(n))
        throw new LangError('TYPE', 'slice bounds must be whole numbers', b.value.span);
      const at = b.fromEnd ? object.length - n : n;
      return Math.min(Math.max(at, 0), object.length);
    };
    const lo = await bound(e.lo, 0);
    const hi = await bound(e.hi, object.length);
    return object.slice(lo, Math.max(lo, hi));
  }

  async #call(
    e: ExprOf<'Call'>,
    env: Environment,
    signal: AbortSignal,
  ): Promise<Value | typeof SHORT> {
    const special = this.#callables.specialCall(e, env, signal);
    if (special !== undefined) return special;
    const callee = e.callee;
    if (callee.kind === 'Ident' && callee.name === 'nameof' && !env.has('nameof')) {
      const target = e.args[0]?.value;
      if (target?.kind !== 'Ident')
        throw new LangError('INVALID', 'nameof takes one declared name', e.span);
      return this.#callables.nameof(target.name, target.span);
    }
    if (callee.kind === 'Member') {
      // The receiver first: a chain cut short by `?.` evaluates no arguments.
      const receiver = await this.#link(callee.object, env, signal);
      if (receiver === SHORT || (receiver === null && callee.optional)) return SHORT;
      const args = await this.#args(e, env, signal);
      const member = this.memberOf(receiver, callee.name);
      if (member instanceof FunctionValue) return this.invoke(member, args, signal, e.span);
      if (member !== undefined && !(receiver instanceof Reference)) {
        throw new LangError('CALL', `'${callee.name}' is a field, not a method`, callee.span);
      }
      const result = await callValueMethod(receiver, callee.name, [...args.ordered], (fn, a) =>
        this.invoke(fn, callArgs(a), signal, e.span),
      ).catch((err: unknown) => {
        throw withSpan(err, e.span);
      });
      if (result === undefined) {
        throw new LangError(
          'CALL',
          `${describe(receiver)} has no method '${callee.name}'`,
          callee.span,
        );
      }
      return result;
    }
    const value = await this.#link(callee, env, signal);
    if (value === SHORT) return SHORT;
    const args = await this.#args(e, env, signal);
    const fn = value instanceof Reference && value.call ? value.call : value;
    if (!(fn instanceof FunctionValue))
      throw new LangError('CALL', `value is not callable (${typeOf(fn)})`, callee.span);
    return this.invoke(fn, args, signal, e.span);
  }

  async #args(e: ExprOf<'Call'>, env: Environment, signal: AbortSignal): Promise<CallArgs> {
    const positional: Value[] = [];
    const named = new Map<string, Value>();
    const ordered: Value[] = [];
    for (const arg of e.args) {
      const v = await this.#argument(arg.value, env, signal);
      ordered.push(v);
      if (arg.name === undefined) positional.push(v);
      else named.set(arg.name, v);
    }
    return callArgs(positional, named, ordered);
  }

  /** Calls a function value, attaching the call's position to errors that have none. */
  async invoke(fn: FunctionValue, args: CallArgs, signal: AbortSignal, span: Span): Promise<Value> {
    signal.throwIfAborted();
    try {
      return await fn.invoke(args, signal);
    } catch (err) {
      throw withSpan(err, span);
    }
  }

  /** A lambda as a function value; it runs in a child of the scope it was made in. */
  closure(e: ExprOf<'Lambda'>, env: Environment): FunctionValue {
    return new FunctionValue('<lambda>', (args, signal) =>
      this.callFunction(e.params, e.body, env.child(), args.ordered, signal),
    );
  }

  /** Binds parameters positionally (defaults evaluated in the callee scope) and runs a body. */
  async callFunction(
    params: ExprOf<'Lambda'>['params'],
    body: ExprOf<'Lambda'>['body'],
    scope: Environment,
    args: readonly Value[],
    signal: AbortSignal,
  ): Promise<Value> {
    if (args.length > params.length) {
      throw new LangError(
        'ARITY',
        `expected at most ${params.length} arguments, got ${args.length}`,
      );
    }
    for (const [i, p] of params.entries()) {
      if (i < args.length) scope.declare(p.name, args[i] as Value);
      else if (p.default) scope.declare(p.name, await this.evaluate(p.default, scope, signal));
      else throw new LangError('ARITY', `missing argument '${p.name}'`, p.span);
    }
    if (body.kind !== 'Block') return this.evaluate(body, scope, signal);
    const done = await this.execIn(body, scope, signal);
    if (done?.kind === 'return') return done.value;
    if (done)
      throw new LangError('INVALID', `'${done.kind}' is not allowed inside a function`, body.span);
    return null;
  }
}

function describe(v: Value): string {
  return v instanceof Tagged ? v.format() : typeOf(v);
}

/** Gives a span-less `LangError` (from a native, a method) the position of the call. */
export function withSpan(err: unknown, span: Span): unknown {
  if (err instanceof LangError && !err.span)
    return new LangError(err.code, err.summary, span, { cause: err.cause, hint: err.hint });
  return err;
}

type PlainCopy = StmtOf<'Assign'> & {
  readonly target: ExprOf<'Ident'>;
  readonly value: ExprOf<'Ident'>;
};

/** `a = b`: a plain assignment of one variable to another. */
/** Whether every statement of `block` is a plain copy: `execIn` then runs it synchronously. */
export function onlyPlainCopies(block: Block): boolean {
  for (const stmt of block.body) if (!isPlainCopy(stmt)) return false;
  return true;
}

function isPlainCopy(stmt: Stmt): stmt is PlainCopy {
  return (
    stmt.kind === 'Assign' &&
    stmt.op === '=' &&
    stmt.target.kind === 'Ident' &&
    stmt.value.kind === 'Ident'
  );
}

/** What `evaluate` gives for an identifier: its value, or the UNDEFINED error. */
function identValue(e: ExprOf<'Ident'>, env: Environment): Value {
  const v = env.lookup(e.name);
  if (v === undefined) throw new LangError('UNDEFINED', `undefined variable '${e.name}'`, e.span);
  return v;
}

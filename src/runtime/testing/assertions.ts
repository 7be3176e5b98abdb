/**
 * The assertions a `describe` block may call (spec §5.9), as function values bound into the
 * case's scope. A failed assertion raises a `LangError` with code `ASSERTION` whose cause is an
 * `AssertionDetail` (what was expected, what was found), so the interpreter stamps it with the
 * call's position like any other error and the runner reports it. `incomplete(reason?)` raises
 * `IncompleteSignal`, which no `try` catches: it ends the case as pending, not failed.
 *
 * It knows nothing of files or output formats; the runner turns these into results.
 */
import { LangError, TEST_ASSERTIONS } from '../../lang/index.js';
import {
  type CallArgs,
  deepEqual,
  FunctionValue,
  formatValue,
  typeOf,
  type Value,
} from '../interpreter/values.js';

/** The code of a failed assertion's `LangError`. */
export const ASSERTION_FAILED = 'ASSERTION';

/** What a failed assertion wanted and what it got, as text a reader can compare. */
export class AssertionDetail {
  readonly assertion: string;
  readonly expected: string;
  readonly actual: string;
  /** The author's own message, when the call passed one as its last argument. */
  readonly note: string | undefined;
  constructor(assertion: string, expected: string, actual: string, note?: string) {
    this.assertion = assertion;
    this.expected = expected;
    this.actual = actual;
    this.note = note;
  }
}

/** Raised by `incomplete(reason?)`: the case stops and counts as pending. */
export class IncompleteSignal extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason || 'incomplete');
    this.name = 'IncompleteSignal';
    this.reason = reason;
  }
}

/** A value as a failure shows it: strings quoted, so `"1"` and `1` never look alike. */
export function display(v: Value): string {
  return typeof v === 'string' ? JSON.stringify(v) : formatValue(v);
}

type Check = (args: readonly Value[]) => { expected: string; actual: string } | undefined;

interface Spec {
  readonly arity: number;
  readonly check: Check;
}

const compare =
  (op: string, holds: (a: number, b: number) => boolean): Check =>
  ([a, b]) => {
    const x = a as Value;
    const y = b as Value;
    if (typeof x === 'number' && typeof y === 'number' && holds(x, y)) return undefined;
    const kinds = typeof x === 'number' && typeof y === 'number' ? '' : ' (numbers)';
    return { expected: `${op} ${display(y)}${kinds}`, actual: display(x) };
  };

const truth =
  (want: boolean): Check =>
  ([v]) =>
    v === want ? undefined : { expected: String(want), actual: display(v as Value) };

const differs: Check = ([a, b]) =>
  deepEqual(a as Value, b as Value)
    ? { expected: `not ${display(b as Value)}`, actual: display(a as Value) }
    : undefined;

const SPECS: Readonly<Record<string, Spec>> = {
  are_equal: {
    arity: 2,
    check: ([a, b]) =>
      deepEqual(a as Value, b as Value)
        ? undefined
        : { expected: display(b as Value), actual: display(a as Value) },
  },
  are_not_equal: { arity: 2, check: differs },
  not_equal: { arity: 2, check: differs },
  is_true: { arity: 1, check: truth(true) },
  is_false: { arity: 1, check: truth(false) },
  is_null: {
    arity: 1,
    check: ([v]) => (v === null ? undefined : { expected: 'null', actual: display(v as Value) }),
  },
  not_null: {
    arity: 1,
    check: ([v]) =>
      v === null ? { expected: 'a value other than null', actual: 'null' } : undefined,
  },
  greater_than: { arity: 2, check: compare('>', (a, b) => a > b) },
  less_than: { arity: 2, check: compare('<', (a, b) => a < b) },
  greater_than_or_equal: { arity: 2, check: compare('>=', (a, b) => a >= b) },
  less_than_or_equal: { arity: 2, check: compare('<=', (a, b) => a <= b) },
  includes: { arity: 2, check: includes },
};

/** `includes(array, value)`; a string container checks for a substring. */
function includes([container, item]: readonly Value[]): ReturnType<Check> {
  const c = container as Value;
  const v = item as Value;
  if (Array.isArray(c) && c.some((x) => deepEqual(x, v))) return undefined;
  if (typeof c === 'string' && typeof v === 'string' && c.includes(v)) return undefined;
  const what = typeof c === 'string' ? 'a string containing' : 'an array including';
  return { expected: `${what} ${display(v)}`, actual: display(c) };
}

function assertion(name: string, spec: Spec): FunctionValue {
  return new FunctionValue(name, async (args: CallArgs) => {
    const given = args.ordered;
    if (given.length < spec.arity || given.length > spec.arity + 1) {
      const want = spec.arity === 1 ? '1 argument' : `${spec.arity} arguments`;
      throw new LangError(
        'ARITY',
        `${name} takes ${want} (and an optional message), got ${given.length}`,
      );
    }
    const extra = given[spec.arity];
    if (extra !== undefined && typeof extra !== 'string')
      throw new LangError('TYPE', `${name}: the message must be a string, got ${typeOf(extra)}`);
    const failed = spec.check(given.slice(0, spec.arity));
    if (!failed) return null;
    const detail = new AssertionDetail(name, failed.expected, failed.actual, extra);
    const summary = `${name} failed${extra ? `: ${extra}` : ''} (expected ${failed.expected}, got ${failed.actual})`;
    throw new LangError(ASSERTION_FAILED, summary, undefined, { cause: detail });
  });
}

function incomplete(): FunctionValue {
  return new FunctionValue('incomplete', async (args: CallArgs) => {
    const reason = args.ordered[0] ?? null;
    throw new IncompleteSignal(reason === null ? '' : formatValue(reason));
  });
}

/** Every assertion of §5.9 by name, fresh function values for one case. */
export function assertionFunctions(): ReadonlyMap<string, FunctionValue> {
  const out = new Map<string, FunctionValue>();
  for (const [name, spec] of Object.entries(SPECS)) out.set(name, assertion(name, spec));
  out.set('incomplete', incomplete());
  for (const name of TEST_ASSERTIONS)
    if (!out.has(name)) throw new Error(`assertion '${name}' has no implementation`);
  return out;
}

/**
 * Helpers every native shares: reading a call's arguments by position or by name with type
 * checks, the `NATIVE` error they raise, duration display, and freezing a namespace.
 *
 * Errors carry no span: the interpreter attaches the call's position. This module does no I/O.
 */
import { LangError } from '../../lang/index.js';
import { nativeHint } from '../interpreter/error-hints.js';
import {
  type CallArgs,
  DurationValue,
  isObject,
  type MhlObject,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import type { NativeNamespace, NativeOp } from './native.js';

/** The `LangError` code of every failure a native raises. */
export const NATIVE_ERROR = 'NATIVE';

/** A catchable MHL error from `op` (e.g. `cmd.exec`): `"<op>: <message>"`, no span. */
export function nativeError(op: string, message: string, cause?: unknown): LangError {
  return new LangError(NATIVE_ERROR, `${op}: ${message}`, undefined, {
    cause,
    hint: nativeHint(op),
  });
}

/** `30000` → `30s`, `90000` → `1m30s`, `250` → `250ms`: how durations appear in messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${Number(s.toFixed(3))}s` : ''}`;
}

/** Builds a namespace with no prototype (so `cmd.toString` is not an operation), frozen. */
export function defineNamespace(ops: Record<string, NativeOp>): NativeNamespace {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, NativeOp>, ops));
}

/** How a parameter may be passed: by position (its index in `positional`) and/or by name. */
export interface ArgShape {
  /** Parameters that may be positional, in order; each may also be passed by name. */
  readonly positional: readonly string[];
  /** Parameters accepted only by name. */
  readonly named?: readonly string[];
  /** Accept positional arguments beyond `positional` (read them with `rest()`). */
  readonly rest?: boolean;
}

/**
 * Binds a call's arguments to parameter names and reads them with type checks.
 *
 * Raises `NATIVE` for an unknown named argument, too many positional ones, a parameter given
 * both ways, and (in the getters) a missing or ill-typed argument. `null` counts as absent for
 * optional parameters.
 */
export class ArgReader {
  readonly op: string;
  readonly #values = new Map<string, Value>();
  readonly #rest: readonly Value[];

  constructor(op: string, args: CallArgs, shape: ArgShape) {
    this.op = op;
    const { positional } = shape;
    if (!shape.rest && args.positional.length > positional.length) {
      const max = positional.length;
      throw nativeError(
        op,
        `takes at most ${max} positional argument${max === 1 ? '' : 's'}, got ${args.positional.length}`,
      );
    }
    args.positional.forEach((v, i) => {
      const name = positional[i];
      if (name !== undefined) this.#values.set(name, v);
    });
    this.#rest = args.positional.slice(positional.length);
    const known = new Set([...positional, ...(shape.named ?? [])]);
    for (const [name, v] of args.named) {
      if (!known.has(name)) {
        const list = [...known].join(', ') || 'none';
        throw nativeError(op, `unknown argument "${name}" (accepted: ${list})`);
      }
      if (this.#values.has(name)) throw nativeError(op, `${name} is given twice`);
      this.#values.set(name, v);
    }
  }

  /** Positional arguments beyond the declared ones (for `fs.join`, `log.info`, …). */
  rest(): readonly Value[] {
    return this.#rest;
  }

  /** Whether the parameter was passed with a non-null value. */
  has(name: string): boolean {
    const v = this.#values.get(name);
    return v !== undefined && v !== null;
  }

  /** The raw value; `undefined` when absent or null. */
  optValue(name: string): Value | undefined {
    const v = this.#values.get(name);
    return v === null ? undefined : v;
  }

  /** The raw value, which must be present (it may be `null` only if passed explicitly). */
  value(name: string): Value {
    const v = this.#values.get(name);
    if (v === undefined) throw nativeError(this.op, `missing argument ${name}`);
    return v;
  }

  string(name: string): string {
    return this.#required(name, this.optString(name));
  }

  optString(name: string): string | undefined {
    return this.#typed(name, 'a string', (v) => (typeof v === 'string' ? v : undefined));
  }

  number(name: string): number {
    return this.#required(name, this.optNumber(name));
  }

  optNumber(name: string): number | undefined {
    return this.#typed(name, 'a number', (v) => (typeof v === 'number' ? v : undefined));
  }

  /** A whole number ≥ `min`. */
  integer(name: string, min = 0): number {
    const n = this.number(name);
    if (!Number.isInteger(n) || n < min) {
      throw nativeError(this.op, `${name} must be a whole number ≥ ${min}, got ${n}`);
    }
    return n;
  }

  optBool(name: string): boolean | undefined {
    return this.#typed(name, 'true or false', (v) => (typeof v === 'boolean' ? v : undefined));
  }

  /** A duration literal (`30s`), as milliseconds. */
  duration(name: string): number {
    return this.#required(name, this.optDuration(name));
  }

  optDuration(name: string): number | undefined {
    const v = this.optValue(name);
    if (v === undefined) return undefined;
    if (!(v instanceof DurationValue) || !Number.isFinite(v.ms) || v.ms < 0) {
      throw nativeError(this.op, `${name} must be a duration like 30s`);
    }
    return v.ms;
  }

  optArray(name: string): readonly Value[] | undefined {
    return this.#typed(name, 'an array', (v) => (Array.isArray(v) ? v : undefined));
  }

  optObject(name: string): MhlObject | undefined {
    return this.#typed(name, 'an object', (v) => (isObject(v) ? v : undefined));
  }

  /** A list of strings given as an array of strings or as one string (a one-element list). */
  optStrings(name: string): string[] | undefined {
    const v = this.optValue(name);
    if (v === undefined) return undefined;
    if (typeof v === 'string') return [v];
    if (!Array.isArray(v)) {
      throw nativeError(
        this.op,
        `${name} must be a string or an array of strings, got ${typeOf(v)}`,
      );
    }
    return v.map((x, i) => {
      if (typeof x !== 'string') {
        throw nativeError(this.op, `${name}[${i}] must be a string, got ${typeOf(x)}`);
      }
      return x;
    });
  }

  #typed<T>(name: string, expected: string, pick: (v: Value) => T | undefined): T | undefined {
    const v = this.optValue(name);
    if (v === undefined) return undefined;
    const out = pick(v);
    if (out === undefined) {
      throw nativeError(this.op, `${name} must be ${expected}, got ${typeOf(v)}`);
    }
    return out;
  }

  /** A required parameter: absent → "missing argument", explicit null → "must not be null". */
  #required<T>(name: string, v: T | undefined): T {
    if (v !== undefined) return v;
    if (this.#values.get(name) === null) {
      throw nativeError(this.op, `${name} must not be null`);
    }
    throw nativeError(this.op, `missing argument ${name}`);
  }
}

/** Shorthand for `new ArgReader(op, args, shape)`. */
export function readArgs(op: string, args: CallArgs, shape: ArgShape): ArgReader {
  return new ArgReader(op, args, shape);
}

/** Rejects any argument at all (for `uuid.v4()`, `time.now()`). */
export function noArgs(op: string, args: CallArgs): void {
  readArgs(op, args, { positional: [] });
}

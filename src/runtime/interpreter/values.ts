/**
 * MHL runtime values.
 *
 * JSON-like values are plain JS: `null`, booleans, numbers, strings, arrays and null-prototype
 * objects. Everything else a program can hold (enum values, functions, task handles, durations
 * in argument position, references to declarations and native namespaces) is a `Tagged` class
 * instance, so it can never be mistaken for an object or persisted by accident.
 */

export type Value = null | boolean | number | string | Value[] | MhlObject | Tagged;

/** A string-keyed object. Always made with `newObject()` (null prototype: `__proto__` is just a key). */
export interface MhlObject {
  [key: string]: Value;
}

/** Base class of every non-JSON runtime value. */
export abstract class Tagged {
  /** What `type_of` answers. */
  abstract readonly typeName: string;
  /** How the value prints in interpolation, `log` and `fail`. */
  abstract format(): string;
}

export class EnumValue extends Tagged {
  readonly typeName = 'enum';
  readonly enumName: string;
  readonly variant: string;
  constructor(enumName: string, variant: string) {
    super();
    this.enumName = enumName;
    this.variant = variant;
  }
  format(): string {
    return this.variant;
  }
}

/** A duration literal where a consumer accepts one (`timeout: 30s`, `time.sleep(2s)`). */
export class DurationValue extends Tagged {
  readonly typeName = 'duration';
  readonly ms: number;
  constructor(ms: number) {
    super();
    this.ms = ms;
  }
  format(): string {
    return `${this.ms}ms`;
  }
}

/** Arguments as written at a call site: positional values in order, and `name: value` ones. */
export interface CallArgs {
  readonly positional: readonly Value[];
  readonly named: ReadonlyMap<string, Value>;
  /** Every argument in source order, labels ignored (tool methods and lambdas bind this way). */
  readonly ordered: readonly Value[];
}

export function callArgs(
  positional: Value[],
  named: Map<string, Value> = new Map(),
  ordered?: Value[],
): CallArgs {
  return { positional, named, ordered: ordered ?? [...positional, ...named.values()] };
}

/** Anything callable: lambdas, tool methods, built-ins, native operations. */
export class FunctionValue extends Tagged {
  readonly typeName = 'function';
  readonly name: string;
  readonly invoke: (args: CallArgs, signal: AbortSignal) => Promise<Value>;
  constructor(name: string, invoke: (args: CallArgs, signal: AbortSignal) => Promise<Value>) {
    super();
    this.name = name;
    this.invoke = invoke;
  }
  format(): string {
    return '<function>';
  }
}

/** The result of `spawn`: a background agent call. */
export class TaskHandle extends Tagged {
  readonly typeName = 'task';
  readonly agent: string;
  readonly promise: Promise<void>;
  readonly controller: AbortController;
  status: 'running' | 'ok' | 'failed' | 'canceled' = 'running';
  result: Value = null;
  error: string | null = null;
  durationMs = 0;
  constructor(agent: string, controller: AbortController, promise: Promise<void>) {
    super();
    this.agent = agent;
    this.controller = controller;
    this.promise = promise;
  }
  format(): string {
    return `<task ${this.agent}>`;
  }
  /** The fields MHL code reads: `h.result`, `h.ok`, `h.error`, `h.status`, `h.duration_ms`. */
  field(name: string): Value | undefined {
    switch (name) {
      case 'result':
        return this.result;
      case 'ok':
        return this.status === 'ok';
      case 'error':
        return this.error;
      case 'status':
        return this.status;
      case 'duration_ms':
        return this.durationMs;
      default:
        return undefined;
    }
  }
}

/**
 * A name that denotes something callable through members rather than a value: a declaration
 * (`Reviewer.run(…)`, `Store.get(…)`) or a native namespace (`cmd.exec(…)`).
 */
export class Reference extends Tagged {
  readonly typeName = 'object';
  readonly refKind: string;
  readonly name: string;
  /** Resolves `ref.member` to a function or value; undefined when there is no such member. */
  readonly member: (name: string) => Value | undefined;
  /** Set when the name is also callable by itself (`log("x")` beside `log.info("x")`). */
  readonly call: FunctionValue | undefined;
  constructor(
    refKind: string,
    name: string,
    member: (name: string) => Value | undefined,
    call?: FunctionValue,
  ) {
    super();
    this.refKind = refKind;
    this.name = name;
    this.member = member;
    this.call = call;
  }
  format(): string {
    return `<${this.refKind} ${this.name}>`;
  }
}

export function newObject(entries?: Iterable<readonly [string, Value]>): MhlObject {
  const o = Object.create(null) as MhlObject;
  if (entries) for (const [k, v] of entries) o[k] = v;
  return o;
}

export function isObject(v: Value | undefined): v is MhlObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Tagged);
}

/** `type_of(v)`: string, number, bool, array, object, null, enum, function, task. */
export function typeOf(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Tagged) return v.typeName;
  return 'object';
}

/** Sorted keys: MHL's order for `keys()`, `values()`, formatting and JSON. */
export function sortedKeys(o: MhlObject): string[] {
  const keys = Object.keys(o);
  // A result has a handful of keys: an insertion sort in place, in the order `sort()` gives
  // (UTF-16 code units), without the copy Array.prototype.sort makes (2% of a call's bytes).
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/** Deep, type-aware equality (`==`): numbers and strings are never equal, arrays by order. */
export function deepEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== typeof b) return false;
  if (Array.isArray(a)) {
    return (
      Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i] as Value))
    );
  }
  if (a instanceof EnumValue)
    return b instanceof EnumValue && a.enumName === b.enumName && a.variant === b.variant;
  if (a instanceof DurationValue) return b instanceof DurationValue && a.ms === b.ms;
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => k in b && deepEqual(a[k] as Value, b[k] as Value))
    );
  }
  return false;
}

/**
 * Formats a number the way MHL prints it: the shortest digits that read back as the same
 * number, in plain decimal form (`1e21` prints as `1000000000000000000000`, `1e-7` as
 * `0.0000001`), no trailing zeros.
 */
export function formatNumber(n: number): string {
  const text = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!m) return text;
  const [, sign = '', first = '', rest = '', exp = '0'] = m;
  const digits = first + rest;
  const point = 1 + Number(exp);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * How a value prints in interpolation, `log`, `fail` and `join`: strings raw, numbers in plain
 * decimal form, other JSON values as compact JSON with sorted keys, tagged values as their own
 * format.
 */
export function formatValue(v: Value): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return formatNumber(v);
  if (v instanceof Tagged) return v.format();
  return toJson(v);
}

/** Compact JSON with sorted keys. Tagged values inside print as their format (as strings). */
export function toJson(v: Value, indent?: number): string {
  return JSON.stringify(toPlain(v), null, indent);
}

/** A JSON-ready copy with sorted keys; tagged values become their formatted text. */
export function toPlain(v: Value): unknown {
  if (v === null || typeof v !== 'object')
    return typeof v === 'number' && !Number.isFinite(v) ? null : v;
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Tagged) return v.format();
  const out: Record<string, unknown> = {};
  for (const k of sortedKeys(v)) out[k] = toPlain(v[k] as Value);
  return out;
}

/** Converts parsed JSON (or any plain data) into MHL values; undefined and functions become null. */
export function fromJson(data: unknown): Value {
  if (data === null || data === undefined) return null;
  if (typeof data === 'boolean' || typeof data === 'number' || typeof data === 'string')
    return data;
  if (Array.isArray(data)) return data.map(fromJson);
  if (typeof data === 'object') {
    const o = newObject();
    for (const [k, v] of Object.entries(data as Record<string, unknown>)) o[k] = fromJson(v);
    return o;
  }
  return null;
}

/** Whether a value can be persisted (checkpoints, results): JSON data only. */
export function isJsonValue(v: Value): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (v instanceof Tagged) return v instanceof EnumValue;
  if (Array.isArray(v)) return v.every(isJsonValue);
  return Object.values(v).every(isJsonValue);
}

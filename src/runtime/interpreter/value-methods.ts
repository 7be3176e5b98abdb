/**
 * Methods every value has (`s.split(",")`, `items.filter(f)`, `o.keys()`), per the language's
 * value-method table. All are non-mutating. Callbacks (`filter`, `map`, …) are MHL functions,
 * called back through the interpreter.
 */
import { LangError } from '../../lang/index.js';
import {
  deepEqual,
  FunctionValue,
  formatValue,
  isObject,
  type MhlObject,
  newObject,
  sortedKeys,
  typeOf,
  type Value,
} from './values.js';

export type Callback = (fn: FunctionValue, args: Value[]) => Promise<Value>;

const fail = (message: string): never => {
  throw new LangError('TYPE', message);
};

function want<T>(
  ok: (v: Value) => v is Value & T,
  v: Value | undefined,
  what: string,
  method: string,
): T {
  if (v === undefined || !ok(v))
    fail(`${method}: expected ${what}, got ${v === undefined ? 'nothing' : typeOf(v)}`);
  return v as T;
}
const isStr = (v: Value): v is string => typeof v === 'string';
const isNum = (v: Value): v is number => typeof v === 'number';
const isFn = (v: Value): v is FunctionValue => v instanceof FunctionValue;

function bool(v: Value, method: string): boolean {
  if (typeof v !== 'boolean') fail(`${method}: the callback must return a bool, got ${typeOf(v)}`);
  return v as boolean;
}

/**
 * Calls `receiver.name(...args)`. Returns undefined when the value has no such method, so the
 * caller can report it with the call's position.
 */
export async function callValueMethod(
  receiver: Value,
  name: string,
  args: Value[],
  call: Callback,
): Promise<Value | undefined> {
  switch (name) {
    case 'equals':
    case 'deep_equal':
      return deepEqual(receiver, args[0] ?? null);
    case 'size':
      if (typeof receiver === 'string') return Buffer.byteLength(receiver);
      if (Array.isArray(receiver)) return receiver.length;
      if (isObject(receiver)) return Object.keys(receiver).length;
      return undefined;
    case 'is_empty':
      if (typeof receiver === 'string') return receiver.length === 0;
      if (Array.isArray(receiver)) return receiver.length === 0;
      if (isObject(receiver)) return Object.keys(receiver).length === 0;
      return undefined;
  }
  if (typeof receiver === 'string') return stringMethod(receiver, name, args);
  if (Array.isArray(receiver)) return arrayMethod(receiver, name, args, call);
  if (isObject(receiver)) return objectMethod(receiver, name, args);
  return undefined;
}

function stringMethod(s: string, name: string, args: Value[]): Value | undefined {
  const m = `string.${name}`;
  const str = (i: number) => want(isStr, args[i], 'a string', m);
  switch (name) {
    case 'split':
      return s.split(str(0));
    case 'replace':
      return s.split(str(0)).join(str(1));
    case 'contains':
      return s.includes(str(0));
    case 'starts_with':
      return s.startsWith(str(0));
    case 'ends_with':
      return s.endsWith(str(0));
    case 'matches':
      return new RegExp(`^(?:${str(0)})$`, 'u').test(s);
    case 'trim':
      return s.trim();
    case 'to_upper':
      return s.toUpperCase();
    case 'to_lower':
      return s.toLowerCase();
    case 'substring': {
      const bytes = Buffer.from(s);
      const start = want(isNum, args[0], 'a number', m);
      const end = args[1] === undefined ? bytes.length : want(isNum, args[1], 'a number', m);
      if (start < 0 || end > bytes.length || start > end)
        fail(`${m}: range ${start}..${end} is outside 0..${bytes.length}`);
      return bytes.subarray(start, end).toString();
    }
    case 'remove': {
      const from = s.indexOf(str(0));
      const to = s.indexOf(str(1), Math.max(from, 0));
      if (from < 0 || to < 0) return s;
      return s.slice(0, from) + s.slice(to + str(1).length);
    }
    case 'remove_content':
    case 'extract_content': {
      const from = s.indexOf(str(0));
      const to = from < 0 ? -1 : s.indexOf(str(1), from + str(0).length);
      if (from < 0 || to < 0) return name === 'remove_content' ? s : '';
      return name === 'remove_content'
        ? s.slice(0, from) + s.slice(to + str(1).length)
        : s.slice(from + str(0).length, to);
    }
  }
  return undefined;
}

async function arrayMethod(
  a: Value[],
  name: string,
  args: Value[],
  call: Callback,
): Promise<Value | undefined> {
  const m = `array.${name}`;
  const fn = () => want(isFn, args[0], 'a function', m);
  switch (name) {
    case 'get_index': {
      const i = want(isNum, args[0], 'a number', m);
      if (!Number.isInteger(i) || i < 0 || i >= a.length)
        fail(`${m}: index ${i} is out of range 0..${a.length - 1}`);
      return a[i] as Value;
    }
    case 'index_of':
      return a.findIndex((x) => deepEqual(x, args[0] ?? null));
    case 'contains':
      return a.some((x) => deepEqual(x, args[0] ?? null));
    case 'filter': {
      const f = fn();
      const out: Value[] = [];
      for (const x of a) if (bool(await call(f, [x]), m)) out.push(x);
      return out;
    }
    case 'find': {
      const f = fn();
      for (const x of a) if (bool(await call(f, [x]), m)) return x;
      return null;
    }
    case 'map': {
      const f = fn();
      const out: Value[] = [];
      for (const x of a) out.push(await call(f, [x]));
      return out;
    }
    case 'reduce': {
      const f = fn();
      let acc = args[1] ?? null;
      for (const x of a) acc = await call(f, [acc, x]);
      return acc;
    }
    case 'any': {
      const f = fn();
      for (const x of a) if (bool(await call(f, [x]), m)) return true;
      return false;
    }
    case 'all': {
      const f = fn();
      for (const x of a) if (!bool(await call(f, [x]), m)) return false;
      return true;
    }
    case 'sort_by': {
      const f = fn();
      const keyed: [Value, Value][] = [];
      for (const x of a) keyed.push([await call(f, [x]), x]);
      keyed.sort(([ka], [kb]) => compareKeys(ka, kb, m));
      return keyed.map(([, x]) => x);
    }
    case 'append':
      return [...a, args[0] ?? null];
    case 'join':
      return a
        .map(formatValue)
        .join(args[0] === undefined ? '' : want(isStr, args[0], 'a string', m));
    case 'unique': {
      const out: Value[] = [];
      for (const x of a) if (!out.some((y) => deepEqual(x, y))) out.push(x);
      return out;
    }
  }
  return undefined;
}

function compareKeys(a: Value, b: Value, method: string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return fail(`${method}: keys must be all numbers or all strings`);
}

function objectMethod(o: MhlObject, name: string, args: Value[]): Value | undefined {
  switch (name) {
    case 'keys':
      return sortedKeys(o);
    case 'values':
      return sortedKeys(o).map((k) => o[k] as Value);
    case 'get': {
      const key = want(isStr, args[0], 'a string key', 'object.get');
      return key in o ? (o[key] as Value) : (args[1] ?? null);
    }
  }
  return undefined;
}

/** A shallow copy of an object (for `with`). */
export function copyObject(o: MhlObject): MhlObject {
  return newObject(Object.entries(o));
}

/**
 * The `time` native namespace: instants as RFC 3339 UTC strings, layouts, arithmetic and a
 * cancellable sleep.
 *
 * A time argument is RFC 3339 / ISO 8601 text or a number of seconds since the epoch; results
 * are RFC 3339 UTC strings. The clock is injectable (`createTimeNamespace`) so tests need no
 * real time. `sleep` rejects with the abort reason as soon as the run is cancelled. See the
 * language digest, §8 "time".
 */
import { type CallArgs, DurationValue, typeOf, type Value } from '../interpreter/values.js';
import { type ArgReader, defineNamespace, nativeError, noArgs, readArgs } from './args.js';
import type { NativeContext, NativeNamespace } from './native.js';
import { formatLayout, formatRfc3339, parseIso, parseLayout } from './time-layout.js';

/** Reads a time argument (RFC 3339 text or epoch seconds) as milliseconds since the epoch. */
export function timeArg(a: ArgReader, name: string): number {
  const v = a.value(name);
  if (typeof v === 'number' && Number.isFinite(v)) return v * 1000;
  if (typeof v === 'string') {
    const ms = parseIso(v);
    if (ms !== undefined) return ms;
    throw nativeError(
      a.op,
      `${name} is not an RFC 3339 time: "${v}" (use time.parse with a layout)`,
    );
  }
  throw nativeError(a.op, `${name} must be a time string or epoch seconds, got ${typeOf(v)}`);
}

/** Waits `ms`, or rejects with `signal.reason` the moment `signal` aborts. */
export function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function parse(args: CallArgs): Promise<Value> {
  const a = readArgs('time.parse', args, { positional: ['text', 'layout'] });
  const text = a.string('text');
  const layout = a.optString('layout');
  const ms = layout === undefined ? parseIso(text) : parseLayout(text, layout);
  if (ms === undefined) {
    const expected = layout === undefined ? 'RFC 3339 time' : `time in layout "${layout}"`;
    throw nativeError(a.op, `"${text}" is not a valid ${expected}`);
  }
  return formatRfc3339(ms);
}

async function format(args: CallArgs): Promise<Value> {
  const a = readArgs('time.format', args, { positional: ['value', 'layout'] });
  const ms = timeArg(a, 'value');
  const layout = a.optString('layout');
  return layout === undefined ? formatRfc3339(ms) : formatLayout(ms, layout);
}

async function add(args: CallArgs): Promise<Value> {
  const a = readArgs('time.add', args, { positional: ['value', 'duration'] });
  const ms = timeArg(a, 'value');
  const d = a.value('duration');
  if (d instanceof DurationValue) return formatRfc3339(ms + d.ms);
  if (typeof d === 'number' && Number.isFinite(d)) return formatRfc3339(ms + d * 1000);
  throw nativeError(a.op, 'duration must be a duration like 30s (or a number of seconds)');
}

async function diff(args: CallArgs): Promise<Value> {
  const a = readArgs('time.diff', args, { positional: ['a', 'b'] });
  return (timeArg(a, 'a') - timeArg(a, 'b')) / 1000;
}

async function compare(args: CallArgs): Promise<Value> {
  const a = readArgs('time.compare', args, { positional: ['a', 'b'] });
  return Math.sign(timeArg(a, 'a') - timeArg(a, 'b')) || 0;
}

async function sleep(args: CallArgs, ctx: NativeContext): Promise<Value> {
  const a = readArgs('time.sleep', args, { positional: ['duration'] });
  await sleepFor(a.duration('duration'), ctx.signal);
  return null;
}

/**
 * Builds the namespace around a clock. `now()` → RFC 3339 UTC (`clock` defaults to
 * `Date.now`); `parse(text, layout?)`, `format(value, layout?)`, `add(value, duration)` →
 * RFC 3339; `diff(a, b)` → seconds from b to a; `compare(a, b)` → -1, 0 or 1;
 * `sleep(duration)` → null (honours `signal`). Bad arguments raise `NATIVE`.
 */
export function createTimeNamespace(clock: () => number = Date.now): NativeNamespace {
  const now = async (args: CallArgs): Promise<Value> => {
    noArgs('time.now', args);
    return formatRfc3339(Math.floor(clock() / 1000) * 1000);
  };
  return defineNamespace({ now, parse, format, add, diff, compare, sleep });
}

/** The `time` namespace on the system clock. */
export const TIME_NAMESPACE = createTimeNamespace();

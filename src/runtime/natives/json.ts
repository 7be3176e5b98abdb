/**
 * The `json` native namespace: parse JSON text into MHL values and print values as JSON.
 *
 * Parsed objects become null-prototype MHL objects (`fromJson`); printing sorts keys so output
 * is stable (`toJson`). Invalid input raises a catchable `NATIVE` error. See the digest, §8 "json".
 */
import { type CallArgs, fromJson, toJson, type Value } from '../interpreter/values.js';
import { defineNamespace, nativeError, readArgs } from './args.js';

/** Parses one JSON text, raising `NATIVE` with the parser's reason (and `line` if given). */
export function parseJson(op: string, text: string, line?: number): Value {
  try {
    return fromJson(JSON.parse(text));
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    const where = line === undefined ? '' : ` on line ${line}`;
    throw nativeError(op, `invalid JSON${where}: ${reason}`, e);
  }
}

/** `json.parse(text)` → any value. */
async function parse(args: CallArgs): Promise<Value> {
  const a = readArgs('json.parse', args, { positional: ['text'] });
  return parseJson(a.op, a.string('text'));
}

/** `json.parse_lines(text)` → one value per non-blank line (JSON Lines). */
async function parseLines(args: CallArgs): Promise<Value> {
  const a = readArgs('json.parse_lines', args, { positional: ['text'] });
  const out: Value[] = [];
  a.string('text')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() !== '') out.push(parseJson(a.op, line, i + 1));
    });
  return out;
}

/** `json.stringify(value)` → compact JSON with sorted keys. */
async function stringify(args: CallArgs): Promise<Value> {
  const a = readArgs('json.stringify', args, { positional: ['value'] });
  return toJson(a.value('value'));
}

/** The `json` namespace: `parse`, `parse_lines`, `stringify`. Raises `NATIVE`; never waits. */
export const JSON_NAMESPACE = defineNamespace({ parse, parse_lines: parseLines, stringify });

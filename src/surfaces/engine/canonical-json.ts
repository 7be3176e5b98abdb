/**
 * RFC 8785 (JSON Canonicalization Scheme) for the values the engine signs and digests: object
 * members sorted by their UTF-16 code units, no whitespace, strings and numbers as ECMAScript's
 * `JSON.stringify` writes them (which is what RFC 8785 §3.2.2 prescribes). Refuses what JSON
 * cannot carry (non-finite numbers, `undefined` members, functions) instead of dropping it,
 * since a digest over silently altered data would prove nothing.
 */
import { createHash } from 'node:crypto';

/** The canonical JSON text of `value`; throws `TypeError` for a value JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON has no NaN or Infinity');
      // ECMAScript's Number-to-string is RFC 8785's number form; -0 serialises as 0.
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const record = value as Record<string, unknown>;
      // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
      const keys = Object.keys(record).sort();
      const members: string[] = [];
      for (const key of keys) {
        const member = record[key];
        if (member === undefined) throw new TypeError(`member ${key} is undefined`);
        members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
      }
      return `{${members.join(',')}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot carry a ${typeof value}`);
  }
}

/** Lower-case hex SHA-256 of `data`. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Lower-case hex SHA-256 of the canonical JSON of `value`. */
export function canonicalDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * The `uuid` native namespace: random identifiers as lowercase hyphenated strings.
 *
 * `v4` is fully random; `v7` starts with the Unix time in milliseconds so identifiers sort by
 * creation time (RFC 9562). See the language digest, §8 "uuid".
 */
import { randomFillSync, randomUUID } from 'node:crypto';
import type { CallArgs, Value } from '../interpreter/values.js';
import { defineNamespace, noArgs } from './args.js';

/** A version-7 UUID for the given time (milliseconds since the epoch). */
export function uuidV7(nowMs: number = Date.now()): string {
  const bytes = randomFillSync(new Uint8Array(16));
  let ms = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function v4(args: CallArgs): Promise<Value> {
  noArgs('uuid.v4', args);
  return randomUUID();
}

async function v7(args: CallArgs): Promise<Value> {
  noArgs('uuid.v7', args);
  return uuidV7();
}

/** The `uuid` namespace: `v4`, `v7`. Raises `NATIVE` when given any argument. */
export const UUID_NAMESPACE = defineNamespace({ v4, v7 });

/**
 * The canonical bytes of a session file and its seal (spec session-profile §2.5): 2-space JSON,
 * top-level keys in a fixed priority order then sorted, nested keys sorted, undefined dropped,
 * non-finite numbers refused; the seal is hex HMAC-SHA256 of those bytes. Verification compares
 * in constant time. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PRIORITY = [
  'schemaVersion',
  'status',
  'workflowId',
  'workflowVersion',
  'agentId',
  'sessionIndex',
  'planningFolderPath',
  'currentActivity',
  'currentTechnique',
  'condition',
  'activeCheckpoint',
  'seq',
  'ts',
  'startedAt',
  'completedActivities',
  'skippedActivities',
  'variables',
  'checkpointResponses',
  'history',
  'triggeredWorkflows',
  'parentSession',
];
const RANK = new Map(PRIORITY.map((k, i) => [k, i]));

function sortDeep(value: unknown, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => sortDeep(v === undefined ? null : v, false));
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new RangeError('a session file cannot hold a non-finite number');
  }
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).filter(
    (k) => (value as Record<string, unknown>)[k] !== undefined,
  );
  keys.sort(
    top
      ? (a, b) => (RANK.get(a) ?? 999) - (RANK.get(b) ?? 999) || (a < b ? -1 : a > b ? 1 : 0)
      : (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  );
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = sortDeep((value as Record<string, unknown>)[k], false);
  return out;
}

/** The canonical JSON text of a session file (no trailing newline). */
export function canonicalJson(state: unknown): string {
  return JSON.stringify(sortDeep(state, true), null, 2);
}

/** Hex HMAC-SHA256 of `bytes` under `key`. */
export function seal(key: Buffer, bytes: Buffer | string): string {
  return createHmac('sha256', key).update(bytes).digest('hex');
}

/**
 * The shapes the writer produces, and nothing else: one seal, or two (new, then old) on two
 * lines while a write is between its renames. Surrounding whitespace is trimmed, as the public
 * server does; anything else (a junk line, a blank line, a short seal) refuses the file.
 */
const TOKEN = /^[0-9a-f]{64}(?:\n[0-9a-f]{64})?$/;

/** True when `token` holds the seal of `bytes`; constant time in the token's content. */
export function verifySeal(key: Buffer, bytes: Buffer, token: string): boolean {
  const expected = Buffer.from(seal(key, bytes), 'utf8');
  const trimmed = token.trim();
  if (!TOKEN.test(trimmed)) return false;
  let ok = false;
  for (const line of trimmed.split('\n')) {
    const given = Buffer.from(line, 'utf8');
    // Lengths are public (always 64 for a real seal); equal lengths compare in constant time.
    if (given.length === expected.length && timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

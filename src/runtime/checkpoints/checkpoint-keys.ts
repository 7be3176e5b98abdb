/**
 * Where run state lives in a store (spec: mhl-language.md §11), relative to the store root:
 *
 *   state/<Pipeline>.latest             "<session>\n"
 *   state/<session>/<Pipeline>.json     per-step checkpoint (while the run is unfinished)
 *   state/<session>/loop-<Pipeline>.json
 *   state/<session>/result.json
 *
 * Names and ids are checked here so no caller can build a key outside this layout. Pure.
 */
import { randomBytes } from 'node:crypto';
import { CHECKPOINT_ERROR_CODES, CheckpointError } from './checkpoint-codec.js';
import type { CheckpointRecord } from './checkpoint-records.schema.js';

/** Session ids: generated ones are 32 lowercase hex; `--session` values may use these characters. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Directory names under `state/` that belong to other state (serve's session records). */
const RESERVED_SESSIONS = new Set(['sessions']);
/** Pipeline names are MHL identifiers; `result` would collide with `result.json`. */
const STATE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A fresh session id: 128 random bits as 32 lowercase hex characters. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}

/** Whether `id` can name a session directory (`--session` values are checked with this). */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id) && !RESERVED_SESSIONS.has(id);
}

/** Whether a pipeline name can name state files (an identifier other than `result`). */
export function isStateName(name: string): boolean {
  return STATE_NAME.test(name) && name !== 'result';
}

/** Store keys of each state file (see the module header for the layout). */
export const stateKeys = {
  latest: (pipeline: string) => `state/${checkName(pipeline)}.latest`,
  checkpoint: (session: string, pipeline: string) =>
    `state/${checkSession(session)}/${checkName(pipeline)}.json`,
  loop: (session: string, pipeline: string) =>
    `state/${checkSession(session)}/loop-${checkName(pipeline)}.json`,
  result: (session: string) => `state/${checkSession(session)}/result.json`,
} as const;

/** Returns `session`. @throws CheckpointError `STATE_INVALID_NAME`. */
export function checkSession(session: string): string {
  if (isSessionId(session)) return session;
  throw new CheckpointError(
    CHECKPOINT_ERROR_CODES.INVALID_NAME,
    `state/${session}`,
    'invalid session id',
  );
}

/** Returns `pipeline`. @throws CheckpointError `STATE_INVALID_NAME`. */
export function checkName(pipeline: string): string {
  if (isStateName(pipeline)) return pipeline;
  throw new CheckpointError(
    CHECKPOINT_ERROR_CODES.INVALID_NAME,
    `state/${pipeline}`,
    'invalid pipeline name for state',
  );
}

/** Whether a checkpoint's TTL has passed at `now` (TTL ≤ 0 never expires). */
export function isExpired(record: CheckpointRecord, now: Date): boolean {
  if (record.ttl_seconds <= 0) return false;
  return Date.parse(record.saved_at) + record.ttl_seconds * 1000 <= now.getTime();
}

/** File names per session directory, from keys `state/<session>/<file>`. */
export function groupBySession(keys: readonly string[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const key of keys) {
    const parts = key.split('/');
    if (parts.length !== 3 || !isSessionId(parts[1] as string)) continue;
    const files = out.get(parts[1] as string) ?? new Set<string>();
    files.add(parts[2] as string);
    out.set(parts[1] as string, files);
  }
  return out;
}

/** The pipelines with a checkpoint among a session's files. */
export function checkpointPipelines(files: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const file of files) {
    const m = /^(.+)\.json$/.exec(file);
    if (m && !file.startsWith('loop-') && isStateName(m[1] as string)) out.push(m[1] as string);
  }
  return out;
}

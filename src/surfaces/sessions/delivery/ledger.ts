/**
 * The delivery ledger (spec session-profile §3.9): `deliveredContent[scope][key] = hash`, the
 * first 16 hex digits of SHA-256 over the delivered text. Hashes are always recorded; they are
 * consulted (an entry becomes `{delivery: "unchanged", content_hash}`) only in reference mode,
 * or for the blocks every activity shares once a scope holds them. Mutates the session given.
 */
import { createHash } from 'node:crypto';
import { getOwn, setOwn } from '../store/safe-keys.js';
import type { SessionFile } from '../store/session.schema.js';

/** The ledger hash of a text. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export interface Marker {
  delivery: 'unchanged';
  content_hash: string;
}

/** True when the call wants `unchanged` markers (a reference bundle or a persistent session). */
export function referenceMode(
  state: SessionFile,
  bundle: 'reference' | 'full' | undefined,
  full?: boolean,
): boolean {
  if (bundle === 'full' || full === true) return false;
  return bundle === 'reference' || state.contextMode === 'persistent';
}

/** Whether `scope` already holds `key` with this exact hash. */
export function delivered(state: SessionFile, scope: string, key: string, hash: string): boolean {
  return getOwn(getOwn(state.deliveredContent, scope), key) === hash;
}

/** Records that `scope` now holds `key` at `hash`. */
export function record(state: SessionFile, scope: string, key: string, hash: string): void {
  state.deliveredContent ??= {};
  let held = getOwn(state.deliveredContent, scope);
  if (held === undefined) {
    held = {};
    setOwn(state.deliveredContent, scope, held);
  }
  setOwn(held, key, hash);
}

/**
 * The content to send for `key`: the marker when `consult` and the scope already holds it, the
 * content otherwise. Always records the hash.
 */
export function deliver<T>(
  state: SessionFile,
  scope: string,
  key: string,
  text: string,
  content: T,
  consult: boolean,
): T | Marker {
  const hash = contentHash(text);
  const unchanged = consult && delivered(state, scope, key, hash);
  record(state, scope, key, hash);
  return unchanged ? { delivery: 'unchanged', content_hash: hash } : content;
}

/**
 * What the catalog cache keeps of a checked catalog: everything a server needs before its first
 * answers (names, kinds, descriptions, projected input schemas, prompt names), the warnings the
 * check gave, and every file the check read beyond the listed ones with a hash of its text (an
 * import outside the folder must invalidate the entry too). Encoding and decoding only; a
 * decoded entry of the wrong shape is refused whole, never half-used.
 */
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../lang/index.js';
import type { CredentialSlot } from './effects.js';
import type { JsonObject } from './types.js';

/** Bumped whenever the entry's shape or meaning changes: older entries then read as misses. */
export const ENTRY_FORMAT = 2;

export interface CachedWorkflow {
  readonly name: string;
  readonly kind: 'pipeline' | 'workflow';
  readonly loop: boolean;
  readonly description: string;
  /** Absolute path of the declaring file. */
  readonly file: string;
  readonly inputSchema: JsonObject;
  readonly credentialSlots: readonly CredentialSlot[];
}

export interface CachedPrompt {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
}

export interface CatalogEntry {
  readonly format: number;
  /** The key the entry was written under (a renamed entry is refused). */
  readonly key: string;
  /** Files read beyond the listed ones: absolute path, then the SHA-256 of its text or null
   * for a file the check found missing. */
  readonly reads: readonly (readonly [string, string | null])[];
  /** Sorted by name, as the catalog orders them. */
  readonly workflows: readonly CachedWorkflow[];
  /** In the catalog's order (file order). */
  readonly prompts: readonly CachedPrompt[];
  readonly warnings: readonly Diagnostic[];
}

/** SHA-256 of a text as the check read it, or null for a missing file. */
export function textHash(text: string | undefined): string | null {
  return text === undefined ? null : createHash('sha256').update(text).digest('hex');
}

export function encodeEntry(entry: CatalogEntry): Buffer {
  return Buffer.from(JSON.stringify(entry), 'utf8');
}

/** The entry in `bytes` written under `key`, or undefined for anything else. */
export function decodeEntry(bytes: Uint8Array, key: string): CatalogEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(value) || value['format'] !== ENTRY_FORMAT || value['key'] !== key)
    return undefined;
  const { reads, workflows, prompts, warnings } = value;
  if (!Array.isArray(reads) || !reads.every(isRead)) return undefined;
  if (!Array.isArray(workflows) || workflows.length === 0 || !workflows.every(isWorkflow)) {
    return undefined;
  }
  if (!Array.isArray(prompts) || !prompts.every(isPrompt)) return undefined;
  if (!Array.isArray(warnings) || !warnings.every(isWarning)) return undefined;
  return value as unknown as CatalogEntry;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isRead(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    typeof v[0] === 'string' &&
    (v[1] === null || typeof v[1] === 'string')
  );
}

function isWorkflow(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v['name'] === 'string' &&
    (v['kind'] === 'pipeline' || v['kind'] === 'workflow') &&
    typeof v['loop'] === 'boolean' &&
    typeof v['description'] === 'string' &&
    typeof v['file'] === 'string' &&
    isObject(v['inputSchema']) &&
    Array.isArray(v['credentialSlots']) &&
    v['credentialSlots'].every(isSlot)
  );
}

function isSlot(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v['name'] === 'string' &&
    Array.isArray(v['kinds']) &&
    v['kinds'].every((kind) => typeof kind === 'string')
  );
}

function isPrompt(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v['name'] === 'string' &&
    typeof v['description'] === 'string' &&
    (v['title'] === undefined || typeof v['title'] === 'string')
  );
}

function isWarning(v: unknown): boolean {
  if (!isObject(v) || v['severity'] !== 'warning' || typeof v['code'] !== 'string') return false;
  const span = v['span'];
  return (
    typeof v['message'] === 'string' &&
    isObject(span) &&
    typeof span['file'] === 'string' &&
    ['start', 'end', 'line', 'col'].every((k) => typeof span[k] === 'number')
  );
}

/**
 * A2A tasks and messages (in their 1.0 ProtoJSON form, whichever version was spoken) as the
 * plain MHL objects `extension a2a` methods return: `kind`, `id`, `context_id`, `state` (the
 * lifecycle name in lower case: `completed`, `input-required`, …), `text` (every text part
 * concatenated: a task's artifacts, else its status message), `data` (the first data part, or
 * null), and the parts and artifacts as sent.
 */
import { fromJson, type Value } from '../interpreter/values.js';

/** A normalized result, with the fields `send` decides on kept typed. */
export interface Normalized {
  readonly kind: 'task' | 'message';
  readonly id: string;
  readonly state: string | null;
  /** The text of the task's status message, if any. */
  readonly statusText: string;
  readonly value: Value;
}

type Part = { text?: unknown; data?: unknown; url?: unknown; raw?: unknown };
type Json = Record<string, unknown>;

const partsOf = (x: unknown): Part[] =>
  Array.isArray((x as Json | undefined)?.['parts']) ? ((x as Json)['parts'] as Part[]) : [];
const textOf = (parts: Part[]) =>
  parts.flatMap((p) => (typeof p.text === 'string' ? [p.text] : [])).join('\n');
const dataOf = (parts: Part[]) => parts.find((p) => p.data !== undefined)?.data ?? null;
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`. */
export function stateName(state: unknown): string | null {
  if (typeof state !== 'string' || state === '') return null;
  return state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replaceAll('_', '-');
}

/** Normalizes a task or message in ProtoJSON form. */
export function normalizeResult(kind: 'task' | 'message', json: unknown): Normalized {
  const o = (json ?? {}) as Json;
  if (kind === 'message') {
    const parts = partsOf(o);
    return {
      kind,
      id: str(o['messageId']),
      state: null,
      statusText: '',
      value: fromJson({
        kind,
        id: str(o['messageId']),
        context_id: str(o['contextId']) || null,
        task_id: str(o['taskId']) || null,
        state: null,
        text: textOf(parts),
        data: dataOf(parts),
        parts,
        metadata: o['metadata'] ?? null,
      }),
    };
  }
  const status = (o['status'] ?? {}) as Json;
  const statusParts = partsOf(status['message']);
  const artifacts = Array.isArray(o['artifacts']) ? (o['artifacts'] as Json[]) : [];
  const artifactParts = artifacts.flatMap(partsOf);
  const state = stateName(status['state']);
  const statusText = textOf(statusParts);
  return {
    kind,
    id: str(o['id']),
    state,
    statusText,
    value: fromJson({
      kind,
      id: str(o['id']),
      context_id: str(o['contextId']) || null,
      state,
      text: artifactParts.length > 0 ? textOf(artifactParts) : statusText,
      data: dataOf(artifactParts.length > 0 ? artifactParts : statusParts),
      status_message: statusText || null,
      artifacts,
      metadata: o['metadata'] ?? null,
    }),
  };
}

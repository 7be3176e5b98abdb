/**
 * Delivery within one `get_activity` response (spec session-profile §3.9): an entry or shared
 * block identical to one earlier in the same response collapses to `{delivery: "unchanged",
 * content_hash}` in every mode, since the copy travels in that same response; in reference mode
 * the scope's ledger widens the pass to what earlier calls delivered. Hashes are taken over the
 * YAML the response carries, so a marker names the bytes an agent can find. Mutates the session.
 */

import type { SessionFile } from '../store/session.schema.js';
import { contentHash, delivered, type Marker, record } from './ledger.js';
import { toYaml } from './yaml.js';

/** The blocks step-bound techniques share (contract inheritance, the provenance preamble). */
const INHERITED = ['inherited_inputs', 'inherited_outputs'] as const;

export interface ResponseLedger {
  /** `content`, or a marker when `key` was already delivered at this hash. */
  entry<T>(key: string, text: string, content: T): T | Marker;
  /** The technique object with its shared blocks collapsed where already delivered. */
  blocks(object: Record<string, unknown>): Record<string, unknown>;
}

export function responseLedger(
  state: SessionFile,
  scope: string,
  reference: boolean,
): ResponseLedger {
  const local = new Map<string, string>();
  const held = (key: string, hash: string): boolean => {
    const was = local.get(key) === hash || (reference && delivered(state, scope, key, hash));
    local.set(key, hash);
    record(state, scope, key, hash);
    return was;
  };
  const marker = (hash: string): Marker => ({ delivery: 'unchanged', content_hash: hash });
  // One field keyed by its content: the key carries the hash, so a changed block is a new key.
  const field = (prefix: string, name: string, value: unknown): unknown => {
    const hash = contentHash(toYaml({ [name]: value }));
    return held(`${prefix}:${hash}`, hash) ? marker(hash) : value;
  };
  return {
    entry(key, text, content) {
      const hash = contentHash(text);
      return held(key, hash) ? marker(hash) : content;
    },
    blocks(object) {
      const out = { ...object };
      if (out['provenance_note'] !== undefined)
        out['provenance_note'] = field(
          'technique:provenance_note',
          'provenance_note',
          out['provenance_note'],
        );
      for (const block of INHERITED) {
        const value = out[block];
        if (value === undefined) continue;
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          out[block] = field(`technique:${block}`, block, value);
          continue;
        }
        const rec = value as Record<string, unknown>;
        const next: Record<string, unknown> = { ...rec };
        // Note and items are keyed apart, so a shared preamble collapses even where items differ.
        if (rec['note'] !== undefined)
          next['note'] = field(`technique:${block}.note`, 'note', rec['note']);
        if (rec['items'] !== undefined)
          next['items'] = field(`technique:${block}.items`, 'items', rec['items']);
        const whole = contentHash(toYaml({ [block]: value }));
        out[block] = held(`technique:${block}:${whole}`, whole) ? marker(whole) : next;
      }
      if (out['rules'] !== undefined)
        out['rules'] = field('technique:rules', 'rules', out['rules']);
      return out;
    },
  };
}

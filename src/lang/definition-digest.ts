/**
 * The definition digest stamped on checkpoints (spec: mhl-language.md §11): a hash of an AST
 * subtree that ignores source positions, so re-indenting a file or editing its comments leaves
 * it unchanged while any change to what runs changes it. Resume compares digests to refuse a
 * checkpoint taken under a different definition. Pure: no I/O.
 */
import { createHash, type Hash } from 'node:crypto';

/** Whether a property holds a source position (`span`, `nameSpan`, `pathSpan`, …), not meaning. */
function isPositionKey(key: string): boolean {
  return key === 'span' || key.endsWith('Span');
}

/**
 * sha256 (lowercase hex) of `node` serialised as JSON with sorted keys, skipping position
 * properties (`span` and every `…Span`) and undefined values. Accepts any AST subtree, or an
 * array of them (a pipeline plus the shared declarations it uses). Comments never reach the AST,
 * so they cannot change it; a `Program`'s `file` does, so hash declarations when the path
 * should not matter.
 */
export function definitionDigest(node: unknown): string {
  const hash = createHash('sha256');
  feed(hash, node);
  return hash.digest('hex');
}

function feed(hash: Hash, value: unknown): void {
  if (value === null || value === undefined) {
    hash.update('null');
  } else if (typeof value === 'string' || typeof value === 'boolean') {
    hash.update(JSON.stringify(value));
  } else if (typeof value === 'number') {
    hash.update(Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value)));
  } else if (Array.isArray(value)) {
    hash.update('[');
    value.forEach((item, i) => {
      if (i > 0) hash.update(',');
      feed(hash, item);
    });
    hash.update(']');
  } else if (typeof value === 'object') {
    feedObject(hash, value as Record<string, unknown>);
  } else {
    hash.update(JSON.stringify(String(value)));
  }
}

function feedObject(hash: Hash, object: Record<string, unknown>): void {
  hash.update('{');
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const v = object[key];
    if (v === undefined || isPositionKey(key)) continue;
    if (!first) hash.update(',');
    first = false;
    hash.update(JSON.stringify(key));
    hash.update(':');
    feed(hash, v);
  }
  hash.update('}');
}

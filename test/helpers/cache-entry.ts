/**
 * Rewriting a catalog cache entry on disk as a writer with a bug could have: for the tests that
 * check a hit which does not load falls back instead of serving it.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/** The entry file's header: its magic, then the SHA-256 of the payload. */
const HEADER = 'MHLCACH1'.length + 32;

/**
 * `edit` changes the decoded entry at `path`, and the header's hash is made to match again, so
 * only the entry's content is wrong.
 */
export function rewriteCacheEntry(
  path: string,
  edit: (entry: Record<string, unknown>) => void,
): void {
  const bytes = readFileSync(path);
  const entry = JSON.parse(bytes.subarray(HEADER).toString('utf8')) as Record<string, unknown>;
  edit(entry);
  const payload = Buffer.from(JSON.stringify(entry), 'utf8');
  const hash = createHash('sha256').update(payload).digest();
  writeFileSync(path, Buffer.concat([bytes.subarray(0, 8), hash, payload]), { mode: 0o600 });
}

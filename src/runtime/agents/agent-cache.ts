/**
 * The agent response cache (spec §5.1 `cache`): exact-match keys, a bounded in-process map, and
 * a disk store of one JSON file per key written atomically with mode 0600. Only successful
 * responses are stored. Disk failures never fail a call: a bad entry is a miss, a failed write
 * is skipped. This module does not decide when to cache; `agents.ts` does.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../store/index.js';
import type { AgentRequest, AgentSpec } from './agent-spec.js';

/** Entries the in-process cache keeps before evicting the oldest. */
const MEMORY_CAPACITY = 1024;

/**
 * SHA-256 (hex) over engine, prompt, command, args, endpoint, temperature and schema. The parts
 * are JSON-encoded as one array, so no two different calls can concatenate to the same text.
 */
export function agentCacheKey(spec: AgentSpec, request: AgentRequest): string {
  const args = spec.args.map((a) => (a.kind === 'text' ? ['text', a.value] : [a.kind]));
  const parts = [
    spec.engine ?? null,
    request.prompt,
    spec.command ?? null,
    args,
    spec.endpoint ?? null,
    spec.temperature ?? null,
    request.schema ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

interface Entry {
  readonly value: string;
  readonly expiresAt: number;
}

/** The in-process store: insertion-ordered, expired entries dropped on read, oldest evicted. */
export class MemoryCache {
  /** Made on the first `set`: every run has a cache, and most runs call no agent. */
  #entries: Map<string, Entry> | undefined;

  get(key: string, now: number): string | undefined {
    const entry = this.#entries?.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries?.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: string, expiresAt: number): void {
    this.#entries ??= new Map();
    const entries = this.#entries;
    entries.delete(key);
    entries.set(key, { value, expiresAt });
    while (entries.size > MEMORY_CAPACITY) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      entries.delete(oldest.value);
    }
  }
}

/** The path of one disk entry. */
export function diskCachePath(dir: string, key: string): string {
  return join(dir, `${key}.json`);
}

/** Reads a live disk entry; missing, corrupt or expired entries are misses. Honours `signal`. */
export async function readDiskCache(
  dir: string,
  key: string,
  now: number,
  signal: AbortSignal,
): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(diskCachePath(dir, key), { encoding: 'utf8', signal });
  } catch {
    // Missing or unreadable: a miss, unless the call itself was cancelled.
    signal.throwIfAborted();
    return undefined;
  }
  try {
    const entry: unknown = JSON.parse(text);
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { key: k, value, expiresAt } = entry as Record<string, unknown>;
    if (k !== key || typeof value !== 'string' || typeof expiresAt !== 'number') return undefined;
    return expiresAt > now ? value : undefined;
  } catch {
    // A torn or hand-edited entry is a miss; the next success overwrites it.
    return undefined;
  }
}

/**
 * Writes one entry atomically (temp file, fsync, rename; mode 0600, directory 0700). Best effort:
 * failures are swallowed, since a cache that cannot be written must not fail the call. Checks
 * `signal` between steps.
 */
export async function writeDiskCache(
  dir: string,
  key: string,
  value: string,
  expiresAt: number,
  signal: AbortSignal,
): Promise<void> {
  try {
    await writeFileAtomic(
      diskCachePath(dir, key),
      JSON.stringify({ key, expiresAt, value }),
      signal,
    );
  } catch {
    // Best effort (see above); the atomic write leaves no temp file behind.
  }
}

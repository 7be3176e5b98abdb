/**
 * Reading the workflow folders' files: text and parsed YAML, each cached by the file's identity
 * (inode, size, mtime) so a call re-reads only what changed on disk. The definition in force is
 * always the one on disk (a hot fix lands mid-session); the cache only saves re-parsing bytes
 * that did not change. Files are read synchronously: they are small and local.
 */
import { readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';

interface Cached {
  readonly stamp: string;
  readonly text: string;
  parsed?: { value: unknown } | { error: string };
}

const MAX_CACHED = 4096;
const cache = new Map<string, Cached>();

function stampOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    if (!s.isFile()) return undefined;
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    // Missing or unreadable: the caller reports "not found".
    return undefined;
  }
}

function entry(path: string): Cached | undefined {
  const stamp = stampOf(path);
  if (stamp === undefined) {
    cache.delete(path);
    return undefined;
  }
  const hit = cache.get(path);
  if (hit !== undefined && hit.stamp === stamp) return hit;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // Vanished between stat and read: as missing.
    return undefined;
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  const fresh: Cached = { stamp, text };
  cache.set(path, fresh);
  return fresh;
}

/** The file's text, or undefined when it is not a readable file. */
export function readText(path: string): string | undefined {
  return entry(path)?.text;
}

/** The file's parsed YAML; `{error}` for YAML that does not parse; undefined when missing. */
export function readYaml(path: string): { value: unknown } | { error: string } | undefined {
  const hit = entry(path);
  if (hit === undefined) return undefined;
  if (hit.parsed === undefined) {
    try {
      hit.parsed = { value: parse(hit.text) };
    } catch (e) {
      hit.parsed = { error: e instanceof Error ? e.message : String(e) };
    }
  }
  return hit.parsed;
}

/** True when `path` is a readable file. */
export function isFile(path: string): boolean {
  return stampOf(path) !== undefined;
}

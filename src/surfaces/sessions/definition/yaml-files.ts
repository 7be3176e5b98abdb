/**
 * Reading the workflow folders' files: text, parsed YAML and derived values, each cached by the
 * file's identity (inode, size, mtime, ctime) so a call re-reads only what changed on disk. The
 * definition in force is always the one on disk (a hot fix lands mid-session): `trackReads`
 * records what a load read, and `unchanged` tells whether any of it moved since. Files are read
 * synchronously: they are small and local.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { yaml } from '../../../lang/index.js';

interface Cached {
  readonly stamp: string;
  readonly text: string;
  parsed?: { value: unknown } | { error: string };
  /** Values derived from the text (a parsed technique), by deriver name. */
  derived?: Map<string, unknown>;
}

/** Paths read (and listings taken) while a `trackReads` call runs, with what they were. */
let tracking: Map<string, string> | undefined;

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
  tracking?.set(path, stamp ?? '-');
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
      hit.parsed = { value: yaml().parse(hit.text) };
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

/** `fn(text)` of the file, computed once per version of the file; undefined when missing. */
export function readDerived<T>(path: string, name: string, fn: (text: string) => T): T | undefined {
  const hit = entry(path);
  if (hit === undefined) return undefined;
  hit.derived ??= new Map();
  if (!hit.derived.has(name)) hit.derived.set(name, fn(hit.text));
  return hit.derived.get(name) as T;
}

/** The sorted names in `dir` (empty when unreadable), recorded for `trackReads`. */
export function listDir(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    // Missing folder: nothing in it.
    names = [];
  }
  tracking?.set(`dir:${dir}`, names.join('/'));
  return names;
}

/** Runs `fn`, returning its value and every file and listing it read, with their stamps. */
export function trackReads<T>(fn: () => T): { value: T; reads: Map<string, string> } {
  const outer = tracking;
  const reads = new Map<string, string>();
  tracking = reads;
  try {
    return { value: fn(), reads };
  } finally {
    tracking = outer;
    if (outer !== undefined) for (const [k, v] of reads) outer.set(k, v);
  }
}

/** True when every file and listing in `reads` is as it was. */
export function unchanged(reads: ReadonlyMap<string, string>): boolean {
  for (const [key, was] of reads) {
    const now = key.startsWith('dir:') ? listDirQuiet(key.slice(4)) : (stampOf(key) ?? '-');
    if (now !== was) return false;
  }
  return true;
}

function listDirQuiet(dir: string): string {
  try {
    return readdirSync(dir).sort().join('/');
  } catch {
    // Missing folder.
    return '';
  }
}

/**
 * `memory` declarations: `kv` (in memory, one store per run), `json` (one JSON object in a file, rewritten on each
 * change), `append_log` (one line per call) and `jsonl` (one `{value, ts}` JSON line per call).
 * Methods take positional arguments. Keys may navigate nested values with `::`.
 */
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LangError } from '../../lang/index.js';
import { writeFileAtomic } from '../../store/index.js';
import {
  type CallArgs,
  FunctionValue,
  fromJson,
  isObject,
  type MhlObject,
  newObject,
  toJson,
  type Value,
} from './values.js';

export interface MemoryConfig {
  readonly name: string;
  readonly type: string;
  /** Resolved (interpolated) path, for file-backed types. */
  readonly path: string | undefined;
  /** What the path's `${…}` spans produced; `path_guard` checks these. */
  readonly interpolated?: readonly string[];
  readonly pathGuard: boolean;
}

/**
 * The `kv` memories of one run, by memory name. A run owns its own (never a process-wide map:
 * a served process runs many callers' workflows, and one caller must never read another's
 * values). A resume is a new execution and starts empty, as `mhl run --resume` always has;
 * values that must survive a pause belong in `mem` variables or a `json` memory.
 */
export type KvMemories = Map<string, Map<string, Value>>;

/** The methods of one memory declaration as function values; `kv` lives in `kv`. */
export function memoryMethods(
  config: MemoryConfig,
  cwd: string,
  kv: KvMemories,
): (name: string) => Value | undefined {
  const method = (name: string, body: (args: readonly Value[]) => Promise<Value>) =>
    new FunctionValue(`${config.name}.${name}`, (args: CallArgs) => body(args.ordered));
  switch (config.type) {
    case 'kv': {
      const store = kv.get(config.name) ?? new Map<string, Value>();
      kv.set(config.name, store);
      const methods: Record<string, FunctionValue> = {
        set: method('set', async ([k, v]) => {
          store.set(key(k), v ?? null);
          return v ?? null;
        }),
        get: method('get', async ([k, d]) => store.get(key(k)) ?? d ?? null),
        remove: method('remove', async ([k]) => store.delete(key(k))),
        clear: method('clear', async () => {
          store.clear();
          return null;
        }),
      };
      return (name) => methods[name];
    }
    case 'json':
      return jsonMemory(config, filePath(config, cwd), method);
    case 'append_log':
    case 'jsonl': {
      const path = filePath(config, cwd);
      const append = method('append', async ([v]) => {
        const value = v ?? null;
        if (config.type === 'append_log' && typeof value !== 'string') {
          throw new LangError(
            'TYPE',
            `${config.name}.append: an append_log takes text, not structured values`,
          );
        }
        const line =
          config.type === 'jsonl'
            ? toJson(
                newObject([
                  ['value', value],
                  ['ts', new Date().toISOString()],
                ]),
              )
            : (value as string);
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await appendFile(path, `${line}\n`, { mode: 0o600 });
        return value;
      });
      return (name) => (name === 'append' ? append : undefined);
    }
    default:
      throw new LangError(
        'MEMORY',
        `memory '${config.name}' of type "${config.type}" has no backend`,
      );
  }
}

function jsonMemory(
  config: MemoryConfig,
  path: string,
  method: (name: string, body: (args: readonly Value[]) => Promise<Value>) => FunctionValue,
): (name: string) => Value | undefined {
  const load = async (): Promise<MhlObject> => {
    try {
      const data = fromJson(JSON.parse(await readFile(path, 'utf8')));
      return isObject(data) ? data : newObject();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return newObject();
      throw new LangError(
        'MEMORY',
        `memory '${config.name}': cannot read ${path}: ${(e as Error).message}`,
      );
    }
  };
  // Atomic (a crash leaves the old object or the new one) with a unique temp name, so two runs
  // saving the same file at once cannot tear it.
  const save = (data: MhlObject) => writeFileAtomic(path, toJson(data, 2));
  const methods: Record<string, FunctionValue> = {
    get: method('get', async ([k, d]) => navigate(await load(), key(k)) ?? d ?? null),
    set: method('set', async ([k, v]) => {
      const data = await load();
      if (isObject(k) && v === undefined) {
        Object.assign(data, k);
        await save(data);
        return k;
      }
      setPath(data, key(k), v ?? null);
      await save(data);
      return v ?? null;
    }),
    remove: method('remove', async ([k]) => {
      const data = await load();
      const existed = removePath(data, key(k));
      if (existed) await save(data);
      return existed;
    }),
  };
  return (name) => methods[name];
}

function key(k: Value | undefined): string {
  if (typeof k !== 'string') throw new LangError('TYPE', 'memory keys are strings');
  return k;
}

/** Reads `a::b::0` through nested objects and arrays; undefined when any step is missing. */
function navigate(data: Value, path: string): Value | undefined {
  let v: Value | undefined = data;
  for (const part of path.split('::')) {
    if (Array.isArray(v) && /^\d+$/.test(part)) v = v[Number(part)];
    else if (isObject(v)) v = part in v ? v[part] : undefined;
    else return undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

/** Removes `a::b::0` from nested objects and arrays; false when there was nothing there. */
function removePath(data: MhlObject, path: string): boolean {
  const parts = path.split('::');
  const last = parts.pop() as string;
  const parent = parts.length ? navigate(data, parts.join('::')) : data;
  if (isObject(parent) && last in parent) {
    delete parent[last];
    return true;
  }
  if (Array.isArray(parent) && /^\d+$/.test(last) && Number(last) < parent.length) {
    parent.splice(Number(last), 1);
    return true;
  }
  return false;
}

function setPath(data: MhlObject, path: string, value: Value): void {
  const parts = path.split('::');
  let o = data;
  for (const part of parts.slice(0, -1)) {
    const next = o[part];
    if (!isObject(next)) o[part] = newObject();
    o = o[part] as MhlObject;
  }
  o[parts[parts.length - 1] as string] = value;
}

function filePath(config: MemoryConfig, cwd: string): string {
  if (!config.path) throw new LangError('MEMORY', `memory '${config.name}' needs a path`);
  const escaping = (config.interpolated ?? []).find((v) => isAbsolute(v) || v.includes('..'));
  if (config.pathGuard && escaping !== undefined) {
    throw new LangError(
      'MEMORY',
      `memory '${config.name}': path "${config.path}" interpolates "${escaping}", which path_guard "no_traversal" rejects`,
    );
  }
  return resolve(cwd, config.path);
}

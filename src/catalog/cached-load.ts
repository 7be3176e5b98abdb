/**
 * `loadCatalog` with a content-addressed cache of checked catalogs, for a server's restart: a
 * folder whose files have not changed since the last start skips the parse and check and is
 * served from what that start recorded. The key is a hash of mhl's version, the running build,
 * the versions of the packages outside the build the check runs (Ajv, yaml and theirs), the
 * folder, and the name and text of every listed `.mh` file; the entry also lists every other
 * file the check read (imports outside the folder, prompt files) with a hash of its text, and
 * each is read again and compared. Only catalogs that loaded are cached: a folder with errors is
 * checked afresh every time, so its diagnostics always come from the check itself.
 *
 * A hit gives the same catalog a fresh load gives: the projections come from the entry, and the
 * parts only a call needs (each workflow's declaration, program and definition; each prompt's)
 * come from a full load of the very texts that were hashed, made on first use or by
 * `materialise` once the server is serving. That load must give what the entry says; when it
 * throws, reports problems or gives other projections (an entry that lies, a dependency the key
 * missed), the entry is removed, `onFallback` is told, and the parts come from a fresh
 * `loadCatalog` of the folder instead. Packs are never cached here: an entry is plain text and a
 * pack's workflows are secret.
 */
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { SourceHost } from '../lang/index.js';
import { diskHost } from '../lang/index.js';
import { cacheKey, readCacheEntry, removeCacheEntry, writeCacheEntry } from '../store/index.js';
import {
  type CachedPrompt,
  type CachedWorkflow,
  type CatalogEntry,
  decodeEntry,
  ENTRY_FORMAT,
  encodeEntry,
  textHash,
} from './cache-entry.js';
import { buildCatalog, type CatalogResult, deepFreeze, loadCatalog } from './load.js';
import type { CatalogPrompt } from './prompts.js';
import { listMhFiles } from './sources.js';
import type { Catalog, Workflow } from './types.js';
import { createValidatorCompiler, type ValidatorCompiler } from './validate.js';

export interface CatalogCacheOptions {
  /** The folder entries live in (created 0700 on first write). */
  readonly dir: string;
  /** mhl's version and an id of the running build: an entry is never read by other code. */
  readonly version: string;
  readonly buildId: string;
  /**
   * `name@version` of every package outside the build whose code shapes a checked catalog
   * (`checkerVersions()`): the build id covers only the bundle, so an upgraded Ajv must miss.
   */
  readonly dependencies: readonly string[];
  /** Where sources are read from; the disk by default. */
  readonly host?: SourceHost;
  /**
   * Told when a hit's programs could not be loaded as the entry promised and the folder was
   * loaded afresh instead (`fallback.result`). When that fresh load failed too and this returns,
   * whatever needed the programs throws.
   */
  readonly onFallback?: (fallback: CacheFallback) => void;
}

/** Why a hit's programs did not come from the texts it hashed. */
export type FallbackReason =
  /** The load threw. */
  | 'threw'
  /** The load reported problems. */
  | 'problems'
  /** The load gave other names, kinds, descriptions, schemas or warnings than the entry. */
  | 'mismatch';

export interface CacheFallback {
  /** The entry's file (removed by now): for the operator's log, never for a client. */
  readonly entry: string;
  readonly reason: FallbackReason;
  /** What the load threw, for `threw`. */
  readonly error?: unknown;
  /** The fresh load of the folder the programs now come from. */
  readonly result: CatalogResult;
}

/** How the cache took part: served from it, checked and written, checked but not written. */
export type CacheOutcome = 'hit' | 'written' | 'unwritten' | 'bypassed';

export interface CachedCatalogResult {
  readonly result: CatalogResult;
  readonly cache: CacheOutcome;
  /**
   * On a hit, loads the parts calls need now rather than on the first call (idempotent; never
   * throws: a failure goes to `onFallback` and to whatever needs the programs). A server calls
   * it once it is serving. A no-op otherwise.
   */
  readonly materialise: () => void;
  /**
   * The folder's `.mh` files and their texts as this load read them, when it read them all: what
   * a caller scanning the same files again (the server's store declaration) reads instead of
   * the disk, so both see the same bytes.
   */
  readonly sources?: ServedSources;
}

/** The `.mh` files of a served folder, sorted, and their texts in the same order. */
export interface ServedSources {
  readonly files: readonly string[];
  readonly texts: readonly string[];
}

const NOTHING = () => {};

/** Every text read through it is kept, so a second load reads the same bytes. */
class RecordingHost implements SourceHost {
  readonly reads = new Map<string, string | undefined>();
  readonly #inner: SourceHost;

  constructor(inner: SourceHost) {
    this.#inner = inner;
  }

  readText(path: string): string | undefined {
    if (this.reads.has(path)) return this.reads.get(path);
    const text = this.#inner.readText(path);
    this.reads.set(path, text);
    return text;
  }
}

/**
 * Loads the catalog of `dir` as `loadCatalog` does, through the cache under `options.dir`.
 * Never throws for bad input or an unusable cache: a cache that cannot be read or written only
 * costs the check it would have saved.
 */
export function loadCatalogCached(dir: string, options: CatalogCacheOptions): CachedCatalogResult {
  const host = new RecordingHost(options.host ?? diskHost);
  const root = resolve(dir);
  let files: string[];
  const texts: string[] = [];
  try {
    files = listMhFiles(root);
    for (const file of files) {
      const text = host.readText(file);
      if (text === undefined) throw new Error('vanished');
      texts.push(text);
    }
  } catch {
    // Missing folder, unreadable file: the plain load reports it with its usual problem code.
    return { result: loadCatalog(dir, options.host), cache: 'bypassed', materialise: NOTHING };
  }
  const { dependencies } = options;
  const parts = ['mhl-catalog', String(ENTRY_FORMAT), options.version, options.buildId];
  parts.push(String(dependencies.length), ...dependencies, root);
  for (const [i, file] of files.entries()) parts.push(file, texts[i] as string);
  const key = cacheKey(parts);
  const name = `${key}.json`;
  const cached = readCacheEntry(options.dir, name);
  const hit = cached === undefined ? undefined : decodeEntry(cached, key);
  if (hit !== undefined && readsUnchanged(hit, host)) {
    const compile = createValidatorCompiler();
    const full = () => buildCatalog({ root: dir, files, host, source: 'dir', compile });
    const fresh = (reason: FallbackReason, error?: unknown): CatalogResult => {
      removeCacheEntry(options.dir, name);
      // From the source itself, not from the texts this start read: the cache path is suspect.
      const result = loadCatalog(dir, options.host);
      const entry = join(options.dir, name);
      options.onFallback?.({ entry, reason, ...(error === undefined ? {} : { error }), result });
      return result;
    };
    return { ...fromEntry(hit, root, host, compile, { full, fresh }), sources: { files, texts } };
  }
  const result = buildCatalog({ root: dir, files, host, source: 'dir' });
  if (!result.ok) return { result, cache: 'bypassed', materialise: NOTHING };
  const listed = new Set(files);
  const reads = [...host.reads]
    .filter(([path]) => !listed.has(path))
    .map(([path, text]) => [path, textHash(text)] as const);
  const entry = toEntry(key, reads, result);
  const bytes = encodeEntry(entry);
  // A schema JSON cannot carry exactly (a default of 1e999 becomes null) is never cached: a hit
  // must give what this load gave.
  const exact = isDeepStrictEqual(JSON.parse(bytes.toString('utf8')), entry);
  const written = exact && writeCacheEntry(options.dir, name, bytes);
  return {
    result,
    cache: written ? 'written' : 'unwritten',
    materialise: NOTHING,
    sources: { files, texts },
  };
}

function readsUnchanged(entry: CatalogEntry, host: SourceHost): boolean {
  try {
    return entry.reads.every(([path, hash]) => textHash(host.readText(path)) === hash);
  } catch {
    return false;
  }
}

function toEntry(
  key: string,
  reads: CatalogEntry['reads'],
  result: Extract<CatalogResult, { ok: true }>,
): CatalogEntry {
  return { format: ENTRY_FORMAT, key, reads, ...projections(result) };
}

/** What an entry says of a catalog (all but its key and reads). */
function projections(result: Extract<CatalogResult, { ok: true }>) {
  const workflows = [...result.catalog.workflows.values()].map(
    (w): CachedWorkflow => ({
      name: w.name,
      kind: w.kind,
      loop: w.loop,
      description: w.description,
      file: w.file,
      inputSchema: w.inputSchema,
      credentialSlots: w.credentialSlots,
    }),
  );
  const prompts = [...result.catalog.prompts.values()].map(
    (p): CachedPrompt => ({
      name: p.name,
      ...(p.title === undefined ? {} : { title: p.title }),
      description: p.description,
    }),
  );
  return { workflows, prompts, warnings: result.warnings };
}

/** How a hit gets its programs: from the hashed texts, else afresh from the folder. */
interface Loaders {
  readonly full: () => CatalogResult;
  readonly fresh: (reason: FallbackReason, error?: unknown) => CatalogResult;
}

/** The catalog `full` gives when it is the one `entry` describes, else the fresh one. */
function loadPrograms(entry: CatalogEntry, loaders: Loaders): Catalog {
  let result: CatalogResult;
  try {
    result = loaders.full();
  } catch (error) {
    return okOrThrow(loaders.fresh('threw', error));
  }
  if (!result.ok) return okOrThrow(loaders.fresh('problems'));
  const { workflows, prompts, warnings } = entry;
  if (!isDeepStrictEqual(projections(result), { workflows, prompts, warnings })) {
    return okOrThrow(loaders.fresh('mismatch'));
  }
  return result.catalog;
}

function okOrThrow(result: CatalogResult): Catalog {
  if (result.ok) return result.catalog;
  throw new Error('catalog cache: the folder no longer loads');
}

/** The catalog an entry describes; what it does not hold comes from `full` on first use. */
function fromEntry(
  entry: CatalogEntry,
  root: string,
  host: RecordingHost,
  compile: ValidatorCompiler,
  loaders: Loaders,
): CachedCatalogResult {
  let loaded: Catalog | undefined;
  let failed: unknown;
  const materialise = (): Catalog => {
    if (loaded !== undefined) return loaded;
    // A folder that no longer loads is loaded (and reported) once, not once per call.
    if (failed !== undefined) throw failed;
    try {
      loaded = loadPrograms(entry, loaders);
    } catch (error) {
      failed = error;
      throw error;
    }
    return loaded;
  };
  const workflows = new Map<string, Workflow>();
  for (const w of entry.workflows) {
    workflows.set(w.name, cachedWorkflow(w, host.reads.get(w.file) ?? '', compile, materialise));
  }
  const prompts = new Map<string, CatalogPrompt>();
  for (const p of entry.prompts) prompts.set(p.name, cachedPrompt(p, materialise));
  const catalog: Catalog = Object.freeze({ workflows, prompts, root, source: 'dir' });
  return {
    result: { ok: true, catalog, warnings: entry.warnings },
    cache: 'hit',
    materialise: () => {
      try {
        materialise();
      } catch {
        // Reported through onFallback; the calls that need the programs fail with it.
      }
    },
  };
}

function cachedWorkflow(
  w: CachedWorkflow,
  source: string,
  compile: ValidatorCompiler,
  full: () => Catalog,
): Workflow {
  const inputSchema = deepFreeze(w.inputSchema);
  const real = (): Workflow => {
    const workflow = full().workflows.get(w.name);
    if (workflow === undefined) throw new Error(`catalog cache: workflow ${w.name} is gone`);
    return workflow;
  };
  return Object.freeze({
    name: w.name,
    kind: w.kind,
    loop: w.loop,
    description: w.description,
    get decl() {
      return real().decl;
    },
    get program() {
      return real().program;
    },
    file: w.file,
    source,
    inputSchema,
    credentialSlots: deepFreeze(w.credentialSlots),
    validate: compile(w.name, inputSchema),
    get definition() {
      return real().definition;
    },
  });
}

function cachedPrompt(p: CachedPrompt, full: () => Catalog): CatalogPrompt {
  const real = (): CatalogPrompt => {
    const prompt = full().prompts.get(p.name);
    if (prompt === undefined) throw new Error(`catalog cache: prompt ${p.name} is gone`);
    return prompt;
  };
  return Object.freeze({
    name: p.name,
    ...(p.title === undefined ? {} : { title: p.title }),
    description: p.description,
    get decl() {
      return real().decl;
    },
    get module() {
      return real().module;
    },
    get program() {
      return real().program;
    },
  });
}

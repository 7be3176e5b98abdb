/**
 * An in-process store on a Map: for tests, `mhl run` without a state directory, and a single
 * server replica without `--state-dir`. Nothing survives the process. It has `cas` (every
 * operation runs to completion on one thread, so conditional writes are trivially atomic) and
 * enforces the same key rules as the dir store, so a key layout that works here works on disk.
 */
import {
  type CasCapability,
  STORE_ERROR_CODES,
  type Store,
  type StoreCapability,
  StoreError,
  type StoreOptions,
  type Versioned,
  validateKey,
  validatePrefix,
  validateValue,
} from './store.js';

interface Entry {
  readonly value: string;
  readonly version: string;
}

/**
 * A `Store` held in memory, with capability `cas`. Versions are a per-store counter.
 * Operations throw `StoreError` `STORE_CLOSED` after `close()`.
 */
const MEMORY_CAPABILITIES: ReadonlySet<StoreCapability> = new Set<StoreCapability>(['cas']);

const NO_ENTRIES: Map<string, Entry> = new Map();
const NO_DIRS: Map<string, number> = new Map();

export class MemoryStore implements Store {
  /** Shared by every instance: read-only, and a synchronous call makes one store per call. */
  readonly capabilities: ReadonlySet<StoreCapability> = MEMORY_CAPABILITIES;
  // Both start as shared empty maps, never written (only `#write` adds, and it makes the
  // store's own first): a synchronous call makes a store per call and most write nothing.
  #entries: Map<string, Entry> = NO_ENTRIES;
  /** How many keys lie under each "directory" prefix (`a` and `a/b` for key `a/b/c`). */
  #dirs: Map<string, number> = NO_DIRS;
  #counter = 0;
  #closed = false;

  #cas: CasCapability | undefined;

  /**
   * Made on first use: a synchronous call makes a store per call and seldom asks for `cas`, so
   * most stores never build its three closures.
   */
  get cas(): CasCapability {
    this.#cas ??= {
      getVersioned: async (key, options) => this.#getVersioned(key, options),
      putIfAbsent: async (key, value, options) => {
        this.#check(key, options);
        return this.#entries.has(key) ? undefined : this.#write(key, value);
      },
      compareAndSwap: async (key, expectedVersion, value, options) => {
        this.#check(key, options);
        const current = this.#entries.get(key);
        return current?.version === expectedVersion ? this.#write(key, value) : undefined;
      },
    };
    return this.#cas;
  }

  /** The value at `key`, or undefined. Honours `signal`. */
  async get(key: string, options?: StoreOptions): Promise<string | undefined> {
    return this.#getVersioned(key, options)?.value;
  }

  /** Stores `value` at `key`, replacing any value. Honours `signal`. */
  async put(key: string, value: string, options?: StoreOptions): Promise<void> {
    this.#check(key, options);
    this.#write(key, value);
  }

  /** Removes `key`; absent keys are a no-op. Honours `signal`. */
  async delete(key: string, options?: StoreOptions): Promise<void> {
    this.#check(key, options);
    if (!this.#entries.delete(key)) return;
    for (const dir of ancestors(key)) {
      const n = (this.#dirs.get(dir) ?? 0) - 1;
      if (n > 0) this.#dirs.set(dir, n);
      else this.#dirs.delete(dir);
    }
  }

  /** Every key starting with `prefix`, ascending. Honours `signal`. */
  async list(prefix: string, options?: StoreOptions): Promise<string[]> {
    this.#open(prefix, options);
    validatePrefix(prefix);
    const keys: string[] = [];
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) keys.push(key);
    return keys.sort();
  }

  /** Drops every entry. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#entries = NO_ENTRIES;
    this.#dirs = NO_DIRS;
  }

  #getVersioned(key: string, options: StoreOptions | undefined): Versioned | undefined {
    this.#check(key, options);
    return this.#entries.get(key);
  }

  #open(key: string, options: StoreOptions | undefined): void {
    options?.signal?.throwIfAborted();
    if (this.#closed) throw new StoreError(STORE_ERROR_CODES.CLOSED, key, 'store is closed');
  }

  #check(key: string, options: StoreOptions | undefined): void {
    this.#open(key, options);
    validateKey(key);
  }

  /** Writes after the same conflict checks the dir store's file system makes. */
  #write(key: string, value: string): string {
    validateValue(key, value);
    if (this.#entries === NO_ENTRIES) {
      this.#entries = new Map();
      this.#dirs = new Map();
    }
    const fresh = !this.#entries.has(key);
    if (fresh) {
      if (this.#dirs.has(key)) conflict(key, 'other keys lie under it');
      const parents = ancestors(key);
      const clash = parents.find((dir) => this.#entries.has(dir));
      if (clash !== undefined) conflict(key, `key ${JSON.stringify(clash)} is one of its parents`);
      for (const dir of parents) this.#dirs.set(dir, (this.#dirs.get(dir) ?? 0) + 1);
    }
    this.#counter += 1;
    const version = String(this.#counter);
    this.#entries.set(key, { value, version });
    return version;
  }
}

function conflict(key: string, why: string): never {
  throw new StoreError(STORE_ERROR_CODES.KEY_CONFLICT, key, `store key conflict: ${why}`);
}

/** `a`, `a/b` for `a/b/c`. */
function ancestors(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) out.push(key.slice(0, i));
  return out;
}

/**
 * An in-process store on a Map: for tests, `mhl run` without a state directory, and a single
 * server replica without `--state-dir`. Nothing survives the process. It has `cas`, `lease` and
 * `fence` (every operation runs to completion on one thread, so conditional writes are
 * trivially atomic; its clock is the process's) and enforces the same key rules as the dir
 * store, so a key layout that works here works on disk.
 */
import { randomBytes } from 'node:crypto';
import {
  type BatchWrite,
  type CasCapability,
  type Fence,
  type FenceCapability,
  type Lease,
  type LeaseCapability,
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

const MEMORY_CAPABILITIES: ReadonlySet<StoreCapability> = new Set<StoreCapability>([
  'cas',
  'fence',
  'lease',
]);

const NO_ENTRIES: Map<string, Entry> = new Map();
const NO_DIRS: Map<string, number> = new Map();

/** Options of `MemoryStore`. */
export interface MemoryStoreOptions {
  /** The lease clock, milliseconds since the epoch; `Date.now` by default. */
  readonly now?: () => number;
}

/**
 * A `Store` held in memory, with capabilities `cas`, `lease` and `fence`. Versions are a
 * per-store counter. Operations throw `StoreError` `STORE_CLOSED` after `close()`.
 */
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
  #lease: LeaseCapability | undefined;
  #fence: FenceCapability | undefined;
  /** Held leases by run id (released ones are removed); made on first use, as `lease` is. */
  #leaseTable: Map<string, Lease> | undefined;
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Made on first use, like `cas`. */
  get lease(): LeaseCapability {
    this.#lease ??= {
      acquire: async (runId, holder, ttlMs, options) => {
        this.#open(runId, options);
        const held = this.#leases().get(runId);
        if (held !== undefined && held.expiresAt > this.#now()) return undefined;
        const lease: Lease = {
          runId,
          holder,
          token: randomBytes(16).toString('hex'),
          expiresAt: this.#now() + ttlMs,
        };
        this.#leases().set(runId, lease);
        return lease;
      },
      renew: async (fence, ttlMs, options) => {
        this.#open(fence.runId, options);
        const held = this.#held(fence);
        if (held === undefined) return undefined;
        const lease = { ...held, expiresAt: this.#now() + ttlMs };
        this.#leases().set(fence.runId, lease);
        return lease;
      },
      release: async (fence, options) => {
        this.#open(fence.runId, options);
        const held = this.#leases().get(fence.runId);
        if (held?.token !== fence.token) return false;
        this.#leases().delete(fence.runId);
        return true;
      },
      read: async (runId, options) => {
        this.#open(runId, options);
        const held = this.#leases().get(runId);
        if (held === undefined) return undefined;
        return {
          holder: held.holder,
          expiresAt: held.expiresAt,
          live: held.expiresAt > this.#now(),
        };
      },
    };
    return this.#lease;
  }

  /** Made on first use, like `cas`. */
  get fence(): FenceCapability {
    this.#fence ??= {
      putFenced: async (key, value, fence, options) =>
        this.#writeFenced([{ key, value }], fence, options),
      deleteFenced: async (key, fence, options) =>
        this.#writeFenced([{ key, value: undefined }], fence, options),
      writeFenced: async (writes, fence, options) => {
        const done = this.#writeFenced(writes, fence, options);
        if (done && options?.release) this.#leases().delete(fence.runId);
        return done;
      },
    };
    return this.#fence;
  }

  #leases(): Map<string, Lease> {
    this.#leaseTable ??= new Map();
    return this.#leaseTable;
  }

  /** The lease `fence` names, when that token still holds it live. */
  #held(fence: Fence): Lease | undefined {
    const held = this.#leases().get(fence.runId);
    return held?.token === fence.token && held.expiresAt > this.#now() ? held : undefined;
  }

  /** Checks every write first, so a refused batch writes nothing. */
  #writeFenced(
    writes: readonly BatchWrite[],
    fence: Fence,
    options: StoreOptions | undefined,
  ): boolean {
    for (const write of writes) {
      this.#check(write.key, options);
      if (write.value !== undefined) validateValue(write.key, write.value);
    }
    if (this.#held(fence) === undefined) return false;
    const before = writes.map((write) => [write.key, this.#entries.get(write.key)] as const);
    try {
      for (const write of writes) {
        if (write.value === undefined) this.#remove(write.key);
        else this.#write(write.key, write.value);
      }
    } catch (error) {
      // A key conflict part-way: put back what the earlier writes changed.
      for (const [key, entry] of before.reverse()) {
        this.#remove(key);
        if (entry !== undefined) this.#write(key, entry.value);
      }
      throw error;
    }
    return true;
  }

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
    this.#remove(key);
  }

  #remove(key: string): void {
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

/**
 * The key-value contract every state store implements (memory, dir, and PostgreSQL later), its
 * optional capabilities, the lease type, and the key rules all stores share.
 *
 * A store knows nothing of runs, checkpoints or workflows: it maps keys to text. The run layer
 * asks `storeCan(store, 'cas')` what a store can do and adapts; it never branches on the class.
 * This module imports nothing, so any driver can depend on it alone.
 *
 * Values are strings (UTF-8 text, almost always JSON), not bytes: every record mhl persists is
 * text, the extension-store wire contract carries JSON values, and a PostgreSQL `text` column
 * round-trips a string exactly. A value must be well-formed Unicode (no lone surrogates), so
 * what is read back is exactly what was written.
 */

/** Options every store operation takes. Aborting before the write is published leaves no trace. */
export interface StoreOptions {
  readonly signal?: AbortSignal;
}

/**
 * Options of `delete`. `durable: false` lets the store skip making the removal itself survive a
 * crash (the dir store's directory fsync), for a key whose reappearance after a power loss is
 * harmless: a completed run's last checkpoint, which `result.json` supersedes. Default true.
 */
export interface DeleteOptions extends StoreOptions {
  readonly durable?: boolean;
}

/** A value with the version a compare-and-swap must name to replace it. */
export interface Versioned {
  readonly value: string;
  /** Opaque and store-specific (a counter, a row version, the raw text); compare only for equality. */
  readonly version: string;
}

/**
 * A run lease: who may execute `runId` until `expiresAt`. Released only by its `token`; times
 * come from the store's clock (PostgreSQL `now()`), never the caller's. The PostgreSQL and
 * memory stores hold leases (capability `lease`); the dir store holds none.
 */
export interface Lease {
  readonly runId: string;
  /** The replica holding the lease (its instance id). */
  readonly holder: string;
  /** Random per acquisition; a fenced write must present it. */
  readonly token: string;
  /** Milliseconds since the epoch, on the store's clock. */
  readonly expiresAt: number;
}

/** What a fenced write presents: the lease it acts under. */
export type Fence = Pick<Lease, 'runId' | 'token'>;

/** Capability `cas`: atomic conditional writes, the basis of the cross-replica run lock. */
export interface CasCapability {
  /** The value and its current version; undefined when the key is absent. */
  getVersioned(key: string, options?: StoreOptions): Promise<Versioned | undefined>;
  /** Writes only when the key is absent. Resolves to the new version, or undefined when refused. */
  putIfAbsent(key: string, value: string, options?: StoreOptions): Promise<string | undefined>;
  /**
   * Writes only while the key still holds `expectedVersion`. Resolves to the new version, or
   * undefined when the key changed or vanished since that version was read.
   */
  compareAndSwap(
    key: string,
    expectedVersion: string,
    value: string,
    options?: StoreOptions,
  ): Promise<string | undefined>;
}

/** A lease as another replica sees it: who holds it and whether it is still live. */
export interface LeaseState {
  readonly holder: string;
  readonly expiresAt: number;
  /** Whether it had not expired when read, judged on the store's clock. */
  readonly live: boolean;
}

/**
 * Capability `lease`: one lease per run id, every time judged on the store's clock. A fresh
 * random token is minted at each acquisition, so whoever held a lapsed lease can neither renew
 * nor release its successor's.
 */
export interface LeaseCapability {
  /**
   * Takes the lease of `runId` for `ttlMs` when nobody holds it live. Resolves to the new
   * lease, or undefined when a live lease is held (by anyone, this holder included).
   */
  acquire(
    runId: string,
    holder: string,
    ttlMs: number,
    options?: StoreOptions,
  ): Promise<Lease | undefined>;
  /** Extends a lease still held live with its token; undefined once it lapsed or was taken. */
  renew(lease: Fence, ttlMs: number, options?: StoreOptions): Promise<Lease | undefined>;
  /** Gives the lease up; false (changing nothing) when the token no longer holds it. */
  release(lease: Fence, options?: StoreOptions): Promise<boolean>;
  /** The lease of `runId` as of now, or undefined when none was ever taken or it was released. */
  read(runId: string, options?: StoreOptions): Promise<LeaseState | undefined>;
  /**
   * Up to `limit` run ids whose lease expired more than `ageMs` ago (store clock), for
   * housekeeping; a store that keeps no lease rows after they lapse need not implement it.
   */
  lapsed?(ageMs: number, limit: number, options?: StoreOptions): Promise<string[]>;
}

/** One write of a batch: `value` undefined deletes the key. */
export interface BatchWrite {
  readonly key: string;
  readonly value: string | undefined;
}

/** Options of `writeFenced`. */
export interface FencedWriteOptions extends StoreOptions {
  /**
   * Gives the lease up in the same transaction: a run's last record lands exactly when its
   * lease ends, so whoever reads the record sees the run free to resume.
   */
  readonly release?: boolean;
}

/** Capability `fence`: writes that land only while a lease is live and held with this token. */
export interface FenceCapability {
  /** Resolves to false (writing nothing) when the lease expired or another token holds it. */
  putFenced(
    key: string,
    value: string,
    fence: Fence,
    options?: StoreOptions & {
      /**
       * False for an advisory record a crash of the store may lose (never tear): a run's status
       * at a step boundary, which its checkpoint supersedes. PostgreSQL then commits without
       * waiting for the WAL flush. Default true.
       */
      readonly durable?: boolean;
    },
  ): Promise<boolean>;
  /** Resolves to false (deleting nothing) when the lease expired or another token holds it. */
  deleteFenced(key: string, fence: Fence, options?: StoreOptions): Promise<boolean>;
  /**
   * Several writes as one: all land, in order, while the lease is held, or none does (false).
   * A terminal transition (the run record and its cleared checkpoint) is one of these.
   */
  writeFenced(
    writes: readonly BatchWrite[],
    fence: Fence,
    options?: FencedWriteOptions,
  ): Promise<boolean>;
}

/**
 * Capability `batch`: several writes as one; every one lands, in order, or none does. A step
 * transition that writes one key and deletes another (a result and its cleared checkpoint) is
 * one of these, so a reader never sees the one without the other.
 */
export interface BatchCapability {
  /** @throws StoreError as `put`; nothing is written when it throws. */
  write(writes: readonly BatchWrite[], options?: StoreOptions): Promise<void>;
}

/** An indexed query over JSON values: pending, expired or terminal run records, say. */
export interface ScanQuery {
  /** Only keys under this prefix (same rules as `list`). */
  readonly prefix: string;
  /** Only keys ending with this text, e.g. `/status`. */
  readonly suffix?: string;
  /**
   * Only values that are JSON objects whose top-level fields equal these (an array: any of its
   * strings). Stores index the `state` and `owner` fields; others are filtered.
   */
  readonly where?: Readonly<Record<string, string | number | boolean | null | readonly string[]>>;
  /** Only values last written before this time (ms since the epoch, store clock). */
  readonly updatedBefore?: number;
  /** At most this many entries per page. */
  readonly limit?: number;
  /** Continue after this key (the previous page's `next`). */
  readonly after?: string;
}

/** One page of a scan, ascending by key. */
export interface ScanPage {
  readonly entries: readonly { readonly key: string; readonly value: string }[];
  /** Pass as `after` for the next page; undefined on the last page. */
  readonly next?: string;
}

/** Capability `scan`: queries a store answers from an index instead of a full `list`. */
export interface ScanCapability {
  scan(query: ScanQuery, options?: StoreOptions): Promise<ScanPage>;
  /** How many entries match `query` (its `limit` and `after` ignored), from the same index. */
  count(query: ScanQuery, options?: StoreOptions): Promise<number>;
  /**
   * Deletes up to `query.limit` (default 100) matching entries, each with every key under its
   * parent (a run record takes its checkpoints with it), in one transaction; entries another
   * replica is deleting at the same moment are skipped, not waited for. Resolves to the keys
   * that matched.
   */
  purge(query: ScanQuery, options?: StoreOptions): Promise<string[]>;
}

/** The capability names, as `storeCan` and the `capabilities` set spell them. */
export const STORE_CAPABILITIES = ['batch', 'cas', 'fence', 'lease', 'scan'] as const;
/** One of `STORE_CAPABILITIES`. */
export type StoreCapability = (typeof STORE_CAPABILITIES)[number];

/**
 * A key-value store of text values under slash-separated keys (see `validateKey`).
 *
 * Contract, tested against every implementation by one suite: a `put` is atomic and durable when
 * it resolves (readers see the old or the new value, never part of one); `get` of an absent key
 * is undefined; `delete` of an absent key is a no-op; `list(prefix)` returns every key starting
 * with `prefix`, ascending as JavaScript sorts strings. No key is ever a "directory" of another:
 * writing `a/b` while `a` exists (or the reverse) fails with `STORE_KEY_CONFLICT`.
 */
export interface Store {
  /** Which optional capabilities this instance has; the matching members are then present. */
  readonly capabilities: ReadonlySet<StoreCapability>;
  readonly batch?: BatchCapability;
  readonly cas?: CasCapability;
  readonly fence?: FenceCapability;
  readonly lease?: LeaseCapability;
  readonly scan?: ScanCapability;
  /** @throws StoreError `STORE_INVALID_KEY`, `STORE_IO`. Honours `signal`. */
  get(key: string, options?: StoreOptions): Promise<string | undefined>;
  /** @throws StoreError `STORE_INVALID_KEY`, `STORE_INVALID_VALUE`, `STORE_KEY_CONFLICT`, `STORE_FULL`, `STORE_IO`. Honours `signal`. */
  put(key: string, value: string, options?: StoreOptions): Promise<void>;
  /** @throws StoreError `STORE_INVALID_KEY`, `STORE_IO`. Honours `signal`. Durable unless `durable: false`. */
  delete(key: string, options?: DeleteOptions): Promise<void>;
  /** @throws StoreError `STORE_INVALID_KEY` (bad prefix), `STORE_IO`. Honours `signal`. */
  list(prefix: string, options?: StoreOptions): Promise<string[]>;
  /** Releases connections or handles; the store is unusable afterwards. Idempotent. */
  close(): Promise<void>;
}

/** A store narrowed to one that has capability `C`. */
export type StoreWith<C extends StoreCapability> = Store & {
  readonly [K in C]-?: NonNullable<Store[K]>;
};

/** Whether `store` has capability `cap` (declared in `capabilities` and its member present). */
export function storeCan<C extends StoreCapability>(store: Store, cap: C): store is StoreWith<C> {
  return store.capabilities.has(cap) && store[cap] !== undefined;
}

/** The stable codes of `StoreError`. */
export const STORE_ERROR_CODES = {
  INVALID_KEY: 'STORE_INVALID_KEY',
  INVALID_VALUE: 'STORE_INVALID_VALUE',
  KEY_CONFLICT: 'STORE_KEY_CONFLICT',
  CLOSED: 'STORE_CLOSED',
  /** The device or quota is full (`ENOSPC`, `EDQUOT`): the write left nothing behind. */
  FULL: 'STORE_FULL',
  IO: 'STORE_IO',
} as const;
/** One of `STORE_ERROR_CODES`. */
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[keyof typeof STORE_ERROR_CODES];

/** A store failure: a stable `code`, the `key` involved, and the underlying error as `cause`. */
export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly key: string;
  constructor(code: StoreErrorCode, key: string, message: string, options?: { cause?: unknown }) {
    super(`${message} (key ${JSON.stringify(key)})`, options);
    this.name = 'StoreError';
    this.code = code;
    this.key = key;
  }
}

/** Longest key accepted, in UTF-16 code units. */
export const MAX_KEY_LENGTH = 1024;
/** Longest key segment, in UTF-8 bytes: a file name on every common file system. */
export const MAX_SEGMENT_BYTES = 255;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether `text` holds no lone surrogate. `String.prototype.isWellFormed` (ES2024, in Node 20)
 * answers a string V8 stores one byte per character without reading it, where the regular
 * expression scanned every checkpoint (2 µs at 6 KB).
 */
function isWellFormed(text: string): boolean {
  const native = (text as { isWellFormed?: () => boolean }).isWellFormed;
  return native === undefined ? !LONE_SURROGATE.test(text) : native.call(text);
}

/** Why `key` is not a valid key, or undefined when it is. */
function keyProblem(key: string): string | undefined {
  if (key.length === 0) return 'is empty';
  if (key.length > MAX_KEY_LENGTH) return `is longer than ${MAX_KEY_LENGTH} characters`;
  if (key.includes('\0')) return 'contains NUL';
  if (CONTROL.test(key)) return 'contains a control character';
  if (LONE_SURROGATE.test(key)) return 'is not well-formed Unicode';
  if (key.includes('\\')) return 'contains a backslash';
  if (key.startsWith('/')) return 'is absolute (starts with "/")';
  for (const segment of key.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment`;
    if (segment.startsWith('.')) return 'has a segment starting with "." (reserved for the store)';
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      return `has a segment longer than ${MAX_SEGMENT_BYTES} bytes`;
    }
  }
  return undefined;
}

/**
 * Checks a key: slash-separated relative segments, none empty, none starting with `.` (so no
 * `.`/`..` traversal, and dot names stay free for store internals such as temp files), no NUL,
 * control characters, backslashes or lone surrogates, at most 1024 characters, segments at most
 * 255 UTF-8 bytes. Returns the key.
 * @throws StoreError `STORE_INVALID_KEY` naming the rule broken.
 */
export function validateKey(key: string): string {
  const problem = typeof key === 'string' ? keyProblem(key) : 'is not a string';
  if (problem !== undefined) {
    throw new StoreError(
      STORE_ERROR_CODES.INVALID_KEY,
      String(key),
      `invalid store key: ${problem}`,
    );
  }
  return key;
}

/**
 * Checks a `list` prefix: empty (everything), or a key with an optional trailing `/`. The last
 * segment may be partial (`state/Build` matches `state/Build.latest`). Returns the prefix.
 * @throws StoreError `STORE_INVALID_KEY`.
 */
export function validatePrefix(prefix: string): string {
  if (prefix === '') return prefix;
  const problem =
    typeof prefix === 'string'
      ? keyProblem(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix)
      : 'is not a string';
  if (problem !== undefined) {
    throw new StoreError(
      STORE_ERROR_CODES.INVALID_KEY,
      String(prefix),
      `invalid store prefix: ${problem}`,
    );
  }
  return prefix;
}

/**
 * Checks a value: a string of well-formed Unicode. Returns the value.
 * @throws StoreError `STORE_INVALID_VALUE`.
 */
export function validateValue(key: string, value: string): string {
  if (typeof value !== 'string') {
    throw new StoreError(STORE_ERROR_CODES.INVALID_VALUE, key, 'store value is not a string');
  }
  if (!isWellFormed(value)) {
    throw new StoreError(
      STORE_ERROR_CODES.INVALID_VALUE,
      key,
      'store value is not well-formed Unicode',
    );
  }
  return value;
}

/**
 * A store in one PostgreSQL table (`--store postgres://…`, `MHL_SERVE_STORE`, or an
 * `extension store` declaration), shared by every replica pointed at it. Capabilities: `cas`
 * (versions from one sequence), `lease` (a row per run, every expiry judged by the database's
 * `now()`), `fence` (a write is one statement whose CTE share-locks the lease row and checks the
 * token, so a takeover waits for it and every later write of the old holder finds nothing) and
 * `scan` (the `state` and `owner` expression indexes, see postgres-schema.ts).
 *
 * Two pools: the main one, and a small one for acquiring, renewing and releasing leases only
 * (reads of a lease, which clients' polls make, use the main one), so neither runs busy
 * checkpointing nor a flood of status polls can starve a heartbeat. Every connection sets `statement_timeout`; the lease
 * pool also a client-side `query_timeout`, so a renew over a dead link fails rather than hangs. The
 * `pg` driver is loaded on first open, never at start-up of a server that does not use it. The
 * DSN's password never appears in an error or a log line (`describeDsn`, `scrub`). Must not
 * know runs, owners or checkpoints.
 */
import { createRequire } from 'node:module';
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { leaseCapability } from './postgres-lease.js';
import { likePrefix, scanCapability } from './postgres-scan.js';
import { isTableName, migrate, type TableNames, tableNames } from './postgres-schema.js';
import {
  type BatchWrite,
  type CasCapability,
  type DeleteOptions,
  type Fence,
  type FenceCapability,
  type FencedWriteOptions,
  type LeaseCapability,
  type ScanCapability,
  STORE_ERROR_CODES,
  type Store,
  type StoreCapability,
  StoreError,
  type StoreOptions,
  validateKey,
  validatePrefix,
  validateValue,
} from './store.js';

/** Options of `openPostgresStore`. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/db?…`; the password is never repeated anywhere. */
  readonly dsn: string;
  /** The table, `name` or `schema.name` (lower-case identifiers); default `mhl_store`. */
  readonly table?: string;
  /** Per statement, on the server side; default 5000 ms. */
  readonly statementTimeoutMs?: number;
  /** Connections of the main pool; default 10. */
  readonly maxConnections?: number;
  /** Connections of the lease pool; default 2. */
  readonly leaseConnections?: number;
  /** How long to wait for a connection; default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** Told of pool errors (a connection lost while idle); the pool replaces the connection. */
  readonly onPoolError?: (message: string) => void;
}

const CAPABILITIES: ReadonlySet<StoreCapability> = new Set<StoreCapability>([
  'cas',
  'fence',
  'lease',
  'scan',
]);

/** Whether `url` names a PostgreSQL store. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

/** `postgres://user@host:port/db`: the DSN without its password or query, for logs. */
export function describeDsn(dsn: string): string {
  try {
    const url = new URL(dsn);
    const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
    return `${url.protocol}//${user}${url.host}${url.pathname}`;
  } catch {
    return 'postgres://(unparseable DSN)';
  }
}

/**
 * Opens the store: connects, brings the schema up to date (safe from many replicas at once) and
 * checks both pools answer.
 * @throws StoreError `STORE_IO` naming what failed, never the password.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const table = options.table ?? 'mhl_store';
  if (!isTableName(table)) {
    throw new StoreError(
      STORE_ERROR_CODES.IO,
      table,
      'the store table must be a lower-case identifier or schema.identifier',
    );
  }
  const secret = passwordOf(options.dsn);
  const { Pool: PoolClass } = loadPg();
  const base: PoolConfig = {
    connectionString: options.dsn,
    statement_timeout: options.statementTimeoutMs ?? 5000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    application_name: 'mhl',
  };
  const main = new PoolClass({ ...base, max: options.maxConnections ?? 10 });
  // A client-side deadline too: a lease statement whose connection went silent (a partition,
  // not a refusal) fails instead of hanging, so the heartbeat retries and the run layer's
  // watchdog, not a stuck socket, decides when the lease is lost.
  const leases = new PoolClass({
    ...base,
    max: options.leaseConnections ?? 2,
    query_timeout: (options.statementTimeoutMs ?? 5000) + 1000,
  });
  // Advisory writes only (`durable: false`): fenced and atomic as any, not waiting for the flush.
  const relaxed = new PoolClass({ ...base, max: 2, options: '-c synchronous_commit=off' });
  const onError = (error: Error) => options.onPoolError?.(scrub(error.message, secret));
  main.on('error', onError);
  leases.on('error', onError);
  relaxed.on('error', onError);
  const store = new PostgresStore({ main, leases, relaxed }, tableNames(table), secret);
  try {
    const client = await main.connect();
    try {
      await migrate(client, tableNames(table));
    } finally {
      client.release();
    }
    await leases.query('SELECT 1');
  } catch (error) {
    await store.close();
    throw store.fault(table, 'could not open the store', error);
  }
  return store;
}

/** Loaded here, on first open: most servers never need the driver. */
function loadPg(): { Pool: new (config: PoolConfig) => Pool } {
  const require = createRequire(import.meta.url);
  return require('pg') as { Pool: new (config: PoolConfig) => Pool };
}

function passwordOf(dsn: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(dsn).password);
    return password === '' ? undefined : password;
  } catch {
    return undefined;
  }
}

/** `text` with every occurrence of the password replaced. */
function scrub(text: string, secret: string | undefined): string {
  return secret === undefined ? text : text.split(secret).join('***');
}

/** `a`, `a/b` for `a/b/c`. */
function ancestors(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) out.push(key.slice(0, i));
  return out;
}

/** A store in PostgreSQL; see the module header. Made by `openPostgresStore`. */
export class PostgresStore implements Store {
  readonly capabilities = CAPABILITIES;
  readonly cas: CasCapability;
  readonly lease: LeaseCapability;
  readonly fence: FenceCapability;
  readonly scan: ScanCapability;
  readonly #main: Pool;
  readonly #leases: Pool;
  readonly #relaxed: Pool;
  readonly #n: TableNames;
  readonly #secret: string | undefined;
  /** The statement that upserts a key unless it would be a parent or child of another key. */
  readonly #upsert: string;
  #closed = false;

  constructor(
    pools: { main: Pool; leases: Pool; relaxed: Pool },
    names: TableNames,
    secret: string | undefined,
  ) {
    this.#main = pools.main;
    this.#leases = pools.leases;
    this.#relaxed = pools.relaxed;
    this.#n = names;
    this.#secret = secret;
    const t = names.data;
    this.#upsert = `INSERT INTO ${t} AS t (key, value) SELECT $1, $2 %FROM%
      WHERE NOT EXISTS (SELECT 1 FROM ${t} WHERE key = ANY($3::text[]))
        AND NOT EXISTS (SELECT 1 FROM ${t} WHERE key LIKE $4)
      ON CONFLICT (key) DO UPDATE
        SET value = EXCLUDED.value, version = nextval('${names.sequence.replaceAll('"', '')}'), updated_at = now()
      RETURNING version::text AS version`;
    this.cas = this.#casCapability();
    this.lease = leaseCapability(
      (key, sql, args) => this.#query(key, sql, args, this.#leases),
      (key, sql, args) => this.#query(key, sql, args),
      names.leases,
      (key, options) => this.#check(key, options),
    );
    this.fence = this.#fenceCapability();
    this.scan = scanCapability(
      (key, sql, args) => this.#query(key, sql, args),
      names.data,
      (prefix, options) => this.#open(prefix, options),
    );
  }

  /** The value at `key`, or undefined. */
  async get(key: string, options?: StoreOptions): Promise<string | undefined> {
    this.#check(key, options);
    const rows = await this.#query<{ value: string }>(
      key,
      `SELECT value FROM ${this.#n.data} WHERE key = $1`,
      [key],
    );
    return rows[0]?.value;
  }

  /** Upserts `value` at `key`. @throws StoreError `STORE_KEY_CONFLICT` for a parent/child key. */
  async put(key: string, value: string, options?: StoreOptions): Promise<void> {
    this.#check(key, options);
    validateValue(key, value);
    const rows = await this.#query(
      key,
      this.#upsert.replace('%FROM%', ''),
      this.#keyArgs(key, value),
    );
    if (rows.length === 0) conflict(key);
  }

  /** Removes `key`; absent keys are a no-op. Every commit is durable, so `durable` is moot. */
  async delete(key: string, options?: DeleteOptions): Promise<void> {
    this.#check(key, options);
    await this.#query(key, `DELETE FROM ${this.#n.data} WHERE key = $1`, [key]);
  }

  /** Every key starting with `prefix`, ascending as JavaScript sorts strings. */
  async list(prefix: string, options?: StoreOptions): Promise<string[]> {
    this.#open(prefix, options);
    validatePrefix(prefix);
    const rows = await this.#query<{ key: string }>(
      prefix,
      `SELECT key FROM ${this.#n.data} WHERE key LIKE $1`,
      [likePrefix(prefix)],
    );
    return rows.map((r) => r.key).sort();
  }

  /** Ends both pools. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([this.#main.end(), this.#leases.end(), this.#relaxed.end()]);
  }

  /** A `StoreError` for a failed operation: the driver's words, the password scrubbed. */
  fault(key: string, what: string, error: unknown): StoreError {
    if (error instanceof StoreError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: unknown }).code;
    const detail = scrub(message, this.#secret) + (typeof code === 'string' ? ` (${code})` : '');
    return new StoreError(STORE_ERROR_CODES.IO, key, `PostgreSQL: ${what}: ${detail}`);
  }

  #keyArgs(key: string, value: string): unknown[] {
    return [key, value, ancestors(key), likePrefix(`${key}/`)];
  }

  async #query<R extends QueryResultRow = QueryResultRow>(
    key: string,
    sql: string,
    args: unknown[],
    pool: Pool | PoolClient = this.#main,
  ): Promise<R[]> {
    try {
      return (await pool.query<R>(sql, args)).rows;
    } catch (error) {
      throw this.fault(key, 'query failed', error);
    }
  }

  #open(key: string, options: StoreOptions | undefined): void {
    options?.signal?.throwIfAborted();
    if (this.#closed) throw new StoreError(STORE_ERROR_CODES.CLOSED, key, 'store is closed');
  }

  #check(key: string, options: StoreOptions | undefined): void {
    this.#open(key, options);
    validateKey(key);
  }

  #casCapability(): CasCapability {
    const t = this.#n.data;
    return {
      getVersioned: async (key, options) => {
        this.#check(key, options);
        const rows = await this.#query<{ value: string; version: string }>(
          key,
          `SELECT value, version::text AS version FROM ${t} WHERE key = $1`,
          [key],
        );
        return rows[0];
      },
      putIfAbsent: async (key, value, options) => {
        this.#check(key, options);
        validateValue(key, value);
        const sql = this.#upsert
          .replace('%FROM%', '')
          .replace(/ON CONFLICT[\s\S]*RETURNING/, 'ON CONFLICT (key) DO NOTHING RETURNING');
        const rows = await this.#query<{ version: string }>(key, sql, this.#keyArgs(key, value));
        return rows[0]?.version;
      },
      compareAndSwap: async (key, expected, value, options) => {
        this.#check(key, options);
        validateValue(key, value);
        if (!/^\d{1,19}$/.test(expected)) return undefined;
        const rows = await this.#query<{ version: string }>(
          key,
          `UPDATE ${t} SET value = $3, version = nextval('${this.#n.sequence.replaceAll('"', '')}'),
             updated_at = now() WHERE key = $1 AND version = $2::bigint
           RETURNING version::text AS version`,
          [key, expected, value],
        );
        return rows[0]?.version;
      },
    };
  }

  /** The CTE every fenced statement starts with: the lease row, share-locked, if still ours. */
  #held(runArg: string, tokenArg: string): string {
    return `WITH lease AS (SELECT 1 FROM ${this.#n.leases}
      WHERE run_id = ${runArg} AND token = ${tokenArg} AND expires_at > now() FOR SHARE)`;
  }

  /** Whether `fence` still holds its lease live. */
  async #holds(fence: Fence): Promise<boolean> {
    const rows = await this.#query(
      fence.runId,
      `SELECT 1 FROM ${this.#n.leases} WHERE run_id = $1 AND token = $2 AND expires_at > now()`,
      [fence.runId, fence.token],
    );
    return rows.length > 0;
  }

  #fenceCapability(): FenceCapability {
    const t = this.#n.data;
    return {
      putFenced: async (key, value, fence, options) => {
        this.#check(key, options);
        validateValue(key, value);
        const sql = `${this.#held('$5', '$6')} ${this.#upsert.replace('%FROM%', 'FROM lease')}`;
        const rows = await this.#query(
          key,
          sql,
          [...this.#keyArgs(key, value), fence.runId, fence.token],
          options?.durable === false ? this.#relaxed : this.#main,
        );
        if (rows.length > 0) return true;
        // Nothing written: the lease is gone, or the key clashes with another.
        if (!(await this.#holds(fence))) return false;
        return conflict(key);
      },
      deleteFenced: async (key, fence, options) => {
        this.#check(key, options);
        const rows = await this.#query<{ held: boolean }>(
          key,
          `${this.#held('$2', '$3')}, gone AS (
             DELETE FROM ${t} WHERE key = $1 AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
           SELECT EXISTS (SELECT 1 FROM lease) AS held`,
          [key, fence.runId, fence.token],
        );
        return rows[0]?.held === true;
      },
      writeFenced: (writes, fence, options) => {
        const [only] = writes;
        return writes.length === 1 && only?.value !== undefined
          ? this.#putFencedReleasing(only.key, only.value, fence, options)
          : this.#writeFenced(writes, fence, options);
      },
    };
  }

  /**
   * One key written under the lease, the lease given up too when asked: a run's last record
   * and the end of its lease in one statement (one round trip, not a transaction's five).
   */
  async #putFencedReleasing(
    key: string,
    value: string,
    fence: Fence,
    options: FencedWriteOptions | undefined,
  ): Promise<boolean> {
    this.#check(key, options);
    validateValue(key, value);
    const upsert = this.#upsert.replace('%FROM%', 'FROM lease');
    const release = options?.release
      ? `, freed AS (DELETE FROM ${this.#n.leases} WHERE run_id = $5 AND token = $6
           AND EXISTS (SELECT 1 FROM written))`
      : '';
    const sql = `${this.#held('$5', '$6')}, written AS (${upsert})${release}
      SELECT count(*)::int AS n FROM written`;
    const rows = await this.#query<{ n: number }>(key, sql, [
      ...this.#keyArgs(key, value),
      fence.runId,
      fence.token,
    ]);
    if ((rows[0]?.n ?? 0) > 0) return true;
    if (!(await this.#holds(fence))) return false;
    return conflict(key);
  }

  /** A transaction that holds the lease row share-locked while it writes every key. */
  async #writeFenced(
    writes: readonly BatchWrite[],
    fence: Fence,
    options: FencedWriteOptions | undefined,
  ): Promise<boolean> {
    for (const write of writes) {
      this.#check(write.key, options);
      if (write.value !== undefined) validateValue(write.key, write.value);
    }
    const key = writes[0]?.key ?? fence.runId;
    let client: PoolClient;
    try {
      client = await this.#main.connect();
    } catch (error) {
      throw this.fault(key, 'could not connect', error);
    }
    try {
      await this.#query(key, 'BEGIN', [], client);
      const held = await this.#query(
        key,
        `SELECT 1 FROM ${this.#n.leases}
         WHERE run_id = $1 AND token = $2 AND expires_at > now() FOR SHARE`,
        [fence.runId, fence.token],
        client,
      );
      if (held.length === 0) {
        await this.#query(key, 'ROLLBACK', [], client);
        return false;
      }
      for (const write of writes) {
        if (write.value === undefined) {
          await this.#query(
            write.key,
            `DELETE FROM ${this.#n.data} WHERE key = $1`,
            [write.key],
            client,
          );
        } else {
          const sql = this.#upsert.replace('%FROM%', '');
          const rows = await this.#query(
            write.key,
            sql,
            this.#keyArgs(write.key, write.value),
            client,
          );
          if (rows.length === 0) conflict(write.key);
        }
      }
      if (options?.release) {
        await this.#query(
          key,
          `DELETE FROM ${this.#n.leases} WHERE run_id = $1 AND token = $2`,
          [fence.runId, fence.token],
          client,
        );
      }
      await this.#query(key, 'COMMIT', [], client);
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

function conflict(key: string): never {
  throw new StoreError(
    STORE_ERROR_CODES.KEY_CONFLICT,
    key,
    'store key conflict: a parent or child of this key is stored',
  );
}

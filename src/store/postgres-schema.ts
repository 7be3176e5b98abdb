/**
 * The PostgreSQL store's schema: its table names, and the versioned migrations that make them,
 * applied in order under a transaction-scoped advisory lock so replicas starting at the same
 * moment never race to create a table (the first applies, the rest wait and find it done).
 * Pure SQL text and one function that runs it; knows nothing of runs.
 *
 * Tables, for a configured name T (optionally `schema.table`):
 *   T             key (C collation, so ranges and prefixes use the index) → value text, a
 *                 version from one sequence (never reused, so a compare-and-swap cannot be
 *                 fooled by a key deleted and written again), updated_at on the database
 *                 clock, and `doc`: the value as jsonb when it is a JSON object, which the
 *                 `state` and `owner` indexes (and `scan`) read.
 *   T_leases      one row per run id: holder, token, expires_at.
 *   T_migrations  the versions applied.
 */
import type { PoolClient } from 'pg';

/** `name` or `schema.name`: lower-case identifiers, so no quoting rule can be got wrong. */
const TABLE_NAME = /^(?:[a-z_][a-z0-9_]{0,40}\.)?[a-z_][a-z0-9_]{0,40}$/;

/** Whether `table` can name the store's table (see `TABLE_NAME`). */
export function isTableName(table: string): boolean {
  return TABLE_NAME.test(table);
}

/** The SQL names of one store's objects, each already safe to splice into a statement. */
export interface TableNames {
  readonly schema: string | undefined;
  /** The data table, schema-qualified when configured so. */
  readonly data: string;
  readonly leases: string;
  readonly migrations: string;
  readonly sequence: string;
  readonly docFunction: string;
  /** Unqualified base name, for index names (an index lives in its table's schema). */
  readonly base: string;
}

/** The names for `table`, which must pass `isTableName`. */
export function tableNames(table: string): TableNames {
  const dot = table.indexOf('.');
  const schema = dot < 0 ? undefined : table.slice(0, dot);
  const base = dot < 0 ? table : table.slice(dot + 1);
  const q = (name: string) => (schema === undefined ? `"${name}"` : `"${schema}"."${name}"`);
  return {
    schema,
    data: q(base),
    leases: q(`${base}_leases`),
    migrations: q(`${base}_migrations`),
    sequence: q(`${base}_version`),
    docFunction: q(`${base}_doc`),
    base,
  };
}

/** Each migration's statements, by version (index + 1). Never edit one that shipped. */
function migrations(n: TableNames): readonly (readonly string[])[] {
  return [
    [
      `CREATE SEQUENCE ${n.sequence}`,
      // IMMUTABLE so it can compute a stored column; a value that is not a JSON object is NULL.
      `CREATE FUNCTION ${n.docFunction}(value text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
       BEGIN
         IF left(value, 1) <> '{' THEN RETURN NULL; END IF;
         RETURN value::jsonb;
       EXCEPTION WHEN others THEN RETURN NULL;
       END $$`,
      `CREATE TABLE ${n.data} (
         key text COLLATE "C" PRIMARY KEY,
         value text NOT NULL,
         version bigint NOT NULL DEFAULT nextval('${n.sequence.replaceAll('"', '')}'),
         updated_at timestamptz NOT NULL DEFAULT now(),
         doc jsonb GENERATED ALWAYS AS (${n.docFunction}(value)) STORED
       )`,
      `CREATE INDEX "${n.base}_state_idx" ON ${n.data} ((doc ->> 'state'), updated_at)
         WHERE doc IS NOT NULL`,
      `CREATE INDEX "${n.base}_owner_idx" ON ${n.data} ((doc ->> 'owner')) WHERE doc IS NOT NULL`,
      `CREATE TABLE ${n.leases} (
         run_id text PRIMARY KEY,
         holder text NOT NULL,
         token text NOT NULL,
         expires_at timestamptz NOT NULL
       )`,
    ],
  ];
}

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = 1;

/**
 * Brings the schema of `n` up to `SCHEMA_VERSION` in one transaction under an advisory lock
 * keyed on the table name. Resolves to the versions it applied (none when already current).
 * @throws the driver's error; a schema newer than this build is refused (an older replica
 * must not write a layout it does not know).
 */
export async function migrate(client: PoolClient, n: TableNames): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mhl-store:${n.data}`]);
    if (n.schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS "${n.schema}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${n.migrations} (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const found = await client.query<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${n.migrations}`,
    );
    const current = found.rows[0]?.v ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `the store's schema is version ${current}, newer than this mhl knows (${SCHEMA_VERSION}); upgrade mhl`,
      );
    }
    const applied: number[] = [];
    const all = migrations(n);
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      for (const sql of all[version - 1] ?? []) await client.query(sql);
      await client.query(`INSERT INTO ${n.migrations} (version) VALUES ($1)`, [version]);
      applied.push(version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

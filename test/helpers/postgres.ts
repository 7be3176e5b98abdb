/**
 * PostgreSQL for tests: the URL (`MHL_TEST_PG_URL`, else the machine's own 127.0.0.1:5432 db
 * `test`), whether it answers, and a schema of its own per test file so concurrent test files
 * never share a table. Under CI (`CI=true`) an unreachable database fails the test; elsewhere
 * the test skips with the reason printed.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import type { Client, ClientConfig } from 'pg';

/** The database tests use. */
export const PG_URL = process.env['MHL_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

const require = createRequire(import.meta.url);
const { Client: PgClient } = require('pg') as { Client: new (c: ClientConfig) => Client };

let reachable: Promise<string | undefined> | undefined;

/** Undefined when the database answers, else why not. */
export function pgProblem(): Promise<string | undefined> {
  reachable ??= sql('SELECT 1').then(
    () => undefined,
    (error: unknown) => `PostgreSQL at ${PG_URL} is unreachable: ${String(error)}`,
  );
  return reachable;
}

/**
 * True when the test may go on; otherwise it is skipped (outside CI) or failed (under CI).
 * Call first in every test that needs the database.
 */
export async function needPg(t: TestContext): Promise<boolean> {
  const problem = await pgProblem();
  if (problem === undefined) return true;
  if (process.env['CI'] === 'true') throw new Error(`${problem} (required under CI=true)`);
  t.skip(problem);
  return false;
}

/** Runs one statement on a fresh connection. */
export async function sql(text: string, args: unknown[] = []): Promise<unknown[]> {
  const client = new PgClient({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(text, args)).rows;
  } finally {
    await client.end();
  }
}

/** A connection of the test's own, for a transaction held across several steps; `end()` it. */
export async function connectPg(): Promise<Client> {
  const client = new PgClient({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  return client;
}

/** A fresh schema name for one test file (dropped by `dropSchema`). */
export function freshSchema(tag: string): string {
  return `mhl_t_${tag}_${randomBytes(4).toString('hex')}`;
}

/** Drops `schema` and everything in it; errors are ignored (the database may be gone). */
export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
}

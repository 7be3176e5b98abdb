/**
 * The PostgreSQL store's `scan` capability: indexed queries over run records by prefix, suffix
 * and top-level JSON fields (the `state` and `owner` fields have expression indexes, see
 * postgres-schema.ts), a count from the same index, and a bounded purge that skips rows another
 * replica is deleting (`FOR UPDATE SKIP LOCKED`). Every value travels as a parameter; a field
 * name is spliced as a literal only after it is checked, so the planner can match the indexes.
 */
import {
  type ScanCapability,
  type ScanQuery,
  STORE_ERROR_CODES,
  StoreError,
  type StoreOptions,
  validatePrefix,
} from './store.js';

/** Runs one statement for `key` and resolves to its rows. */
type Run = <R extends Record<string, unknown>>(
  key: string,
  sql: string,
  args: unknown[],
) => Promise<R[]>;

const DEFAULT_PURGE_LIMIT = 100;
const MAX_SCAN_LIMIT = 10_000;

/** A LIKE pattern matching every key that starts with `prefix` (keys hold no backslash). */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[%_]/g, (c) => `\\${c}`)}%`;
}

/** The `scan` capability over table `t` (already quoted). */
export function scanCapability(
  run: Run,
  t: string,
  open: (prefix: string, options: StoreOptions | undefined) => void,
): ScanCapability {
  const clauseOf = (query: ScanQuery, options: StoreOptions | undefined) => {
    open(query.prefix, options);
    return whereOf(query);
  };
  return {
    scan: async (query, options) => {
      const { where, args } = clauseOf(query, options);
      const limit = Math.min(Math.max(1, query.limit ?? 1000), MAX_SCAN_LIMIT);
      const rows = await run<{ key: string; value: string }>(
        query.prefix,
        `SELECT key, value FROM ${t} WHERE ${where} ORDER BY key LIMIT ${limit + 1}`,
        args,
      );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return rows.length > limit && last ? { entries: page, next: last.key } : { entries: page };
    },
    count: async (query, options) => {
      const { where, args } = clauseOf(withoutAfter(query), options);
      const rows = await run<{ n: number }>(
        query.prefix,
        `SELECT count(*)::int AS n FROM ${t} WHERE ${where}`,
        args,
      );
      return rows[0]?.n ?? 0;
    },
    purge: async (query, options) => {
      const { where, args } = clauseOf(withoutAfter(query), options);
      const limit = Math.min(Math.max(1, query.limit ?? DEFAULT_PURGE_LIMIT), MAX_SCAN_LIMIT);
      const rows = await run<{ key: string }>(
        query.prefix,
        `WITH victims AS (
             SELECT key FROM ${t} WHERE ${where} ORDER BY key LIMIT ${limit}
             FOR UPDATE SKIP LOCKED),
           parents AS (SELECT key, regexp_replace(key, '/[^/]*$', '/') AS dir,
             regexp_replace(key, '/[^/]*$', '0') AS dir_end FROM victims),
           gone AS (DELETE FROM ${t} WHERE key IN (
             SELECT x.key FROM ${t} x JOIN parents p ON x.key >= p.dir AND x.key < p.dir_end
             UNION SELECT key FROM parents))
           SELECT key FROM parents`,
        args,
      );
      return rows.map((r) => r.key).sort();
    },
  };
}

/** The WHERE clause of a scan query and its arguments; every value travels as a parameter. */
function whereOf(query: ScanQuery): { where: string; args: unknown[] } {
  validatePrefix(query.prefix);
  const args: unknown[] = [likePrefix(query.prefix)];
  const clauses = ['key LIKE $1'];
  const arg = (value: unknown) => {
    args.push(value);
    return `$${args.length}`;
  };
  if (query.suffix !== undefined) {
    clauses.push(`right(key, ${arg(query.suffix.length)}::int) = ${arg(query.suffix)}`);
  }
  for (const [field, value] of Object.entries(query.where ?? {})) {
    // A literal, so the planner matches the `state` and `owner` expression indexes.
    if (!/^[a-z_][a-z0-9_]{0,62}$/i.test(field)) {
      throw new StoreError(STORE_ERROR_CODES.INVALID_KEY, field, 'invalid scan field name');
    }
    const path = `'${field}'`;
    if (Array.isArray(value)) clauses.push(`doc ->> ${path} = ANY(${arg(value)}::text[])`);
    else if (typeof value === 'string') clauses.push(`doc ->> ${path} = ${arg(value)}`);
    else clauses.push(`doc -> ${path} = ${arg(JSON.stringify(value))}::jsonb`);
  }
  if (query.where !== undefined && Object.keys(query.where).length > 0) {
    clauses.push('doc IS NOT NULL');
  }
  if (query.updatedBefore !== undefined) {
    clauses.push(`updated_at < to_timestamp(${arg(query.updatedBefore)}::float8 / 1000)`);
  }
  if (query.after !== undefined) clauses.push(`key > ${arg(query.after)}`);
  return { where: clauses.join(' AND '), args };
}

function withoutAfter(query: ScanQuery): ScanQuery {
  const { after: _after, ...rest } = query;
  return rest;
}

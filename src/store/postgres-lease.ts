/**
 * The PostgreSQL store's `lease` capability: one row per run id in the leases table, every
 * expiry judged by the database's `now()`, a fresh random token per acquisition. Acquiring is
 * one upsert that replaces a row only once it has expired, so of two replicas racing for one
 * run exactly one gets it. Runs on the store's small lease pool.
 */
import { randomBytes } from 'node:crypto';
import type { Lease, LeaseCapability, StoreOptions } from './store.js';

/** Runs one statement for `key` and resolves to its rows. */
type Run = <R extends Record<string, unknown>>(
  key: string,
  sql: string,
  args: unknown[],
) => Promise<R[]>;

/** Milliseconds since the epoch of a timestamptz, as SQL. */
const EPOCH_MS = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;

/**
 * The `lease` capability over leases table `l` (already quoted): acquire, renew and release run
 * through `run` (the lease pool); `read`, which clients' status and list polls call, through
 * `read`, so however many polls arrive they never queue a heartbeat.
 */
export function leaseCapability(
  run: Run,
  readRun: Run,
  l: string,
  check: (key: string, options: StoreOptions | undefined) => void,
): LeaseCapability {
  const ttl = `now() + make_interval(secs => $TTL::float8 / 1000)`;
  type Row = { holder: string; expires: number };
  const lease = (runId: string, token: string, row: Row): Lease => ({
    runId,
    holder: row.holder,
    token,
    expiresAt: Math.round(row.expires),
  });
  return {
    acquire: async (runId, holder, ttlMs, options) => {
      check(runId, options);
      const token = randomBytes(16).toString('hex');
      const rows = await run<Row>(
        runId,
        `INSERT INTO ${l} AS l (run_id, holder, token, expires_at)
             VALUES ($1, $2, $3, ${ttl.replace('$TTL', '$4')})
           ON CONFLICT (run_id) DO UPDATE
             SET holder = EXCLUDED.holder, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
             WHERE l.expires_at <= now()
           RETURNING holder, ${EPOCH_MS('expires_at')} AS expires`,
        [runId, holder, token, ttlMs],
      );
      return rows[0] && lease(runId, token, rows[0]);
    },
    renew: async (fence, ttlMs, options) => {
      check(fence.runId, options);
      const rows = await run<Row>(
        fence.runId,
        `UPDATE ${l} SET expires_at = ${ttl.replace('$TTL', '$3')}
           WHERE run_id = $1 AND token = $2 AND expires_at > now()
           RETURNING holder, ${EPOCH_MS('expires_at')} AS expires`,
        [fence.runId, fence.token, ttlMs],
      );
      return rows[0] && lease(fence.runId, fence.token, rows[0]);
    },
    release: async (fence, options) => {
      check(fence.runId, options);
      const rows = await run(
        fence.runId,
        `DELETE FROM ${l} WHERE run_id = $1 AND token = $2 RETURNING 1`,
        [fence.runId, fence.token],
      );
      return rows.length > 0;
    },
    read: async (runId, options) => {
      check(runId, options);
      const rows = await readRun<Row & { live: boolean }>(
        runId,
        `SELECT holder, ${EPOCH_MS('expires_at')} AS expires, expires_at > now() AS live
           FROM ${l} WHERE run_id = $1`,
        [runId],
      );
      const row = rows[0];
      return row && { holder: row.holder, expiresAt: Math.round(row.expires), live: row.live };
    },
    lapsed: async (ageMs, limit, options) => {
      check('leases', options);
      const rows = await readRun<{ run_id: string }>(
        'leases',
        `SELECT run_id FROM ${l}
           WHERE expires_at < now() - make_interval(secs => $1::float8 / 1000)
           ORDER BY run_id LIMIT $2`,
        [ageMs, Math.max(1, Math.min(1000, Math.floor(limit)))],
      );
      return rows.map((r) => r.run_id);
    },
  };
}

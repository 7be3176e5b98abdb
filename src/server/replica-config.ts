/**
 * The replica settings of `mhl serve mcp`: `--store` / `MHL_SERVE_STORE` (its scheme checked,
 * the URL never repeated, since it may hold a password), `--single-replica` /
 * `MHL_SERVE_SINGLE_REPLICA`, `MHL_SERVE_RUN_LOCK_TTL` and `MHL_SERVE_REPLICA_ID`.
 */
import { z } from 'zod/mini';
import type { ServeFlags } from './config.js';
import { optional } from './config-schema.js';
import { nonEmpty, parseDuration } from './config-values.js';

/** The replica fields of `ServeConfigSchema`. */
export const REPLICA_FIELDS = {
  store: optional(
    z.string(),
    'store URL (--store, MHL_SERVE_STORE): postgres://… or file:///dir; never logged',
  ),
  singleReplica: z
    .boolean()
    .check(
      z.describe('acknowledges one writer, so a store without cas may be used (--single-replica)'),
    ),
  runLockTtlMs: z
    .int()
    .check(
      z.gte(100),
      z.describe('run lease TTL on a shared store (MHL_SERVE_RUN_LOCK_TTL, default 45 s)'),
    ),
  replicaId: optional(
    z.string().check(z.minLength(1), z.maxLength(128)),
    'this replica in lease rows and logs (MHL_SERVE_REPLICA_ID); random by default',
  ),
} as const;

/** The default run lease TTL (seed 000): a slow renew on a busy host is not a dead replica. */
export const DEFAULT_RUN_LOCK_TTL_MS = 45_000;

/** `--store`, `--single-replica` and the lease settings. */
export function readReplicas(
  flags: Pick<ServeFlags, 'store' | 'singleReplica'>,
  env: Readonly<Record<string, string | undefined>>,
  refuse: (message: string) => Error,
) {
  const store = nonEmpty(flags.store) ?? nonEmpty(env['MHL_SERVE_STORE']);
  if (store !== undefined && !/^(postgres(ql)?|file):\/\//i.test(store)) {
    // The URL may hold a password: only its scheme is repeated.
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(store)?.[1];
    throw refuse(
      `--store takes a postgres://… or file:///… URL${scheme ? `, not ${scheme}:` : ''}`,
    );
  }
  const single = flags.singleReplica === true || truthy(env['MHL_SERVE_SINGLE_REPLICA']);
  const ttlText = nonEmpty(env['MHL_SERVE_RUN_LOCK_TTL']);
  // A bare number is seconds, as in the Go server; else a duration such as 45s or 1500ms.
  const ttl =
    ttlText === undefined
      ? DEFAULT_RUN_LOCK_TTL_MS
      : /^\d{1,6}$/.test(ttlText)
        ? Number(ttlText) * 1000
        : parseDuration(ttlText);
  if (ttl === undefined || ttl < 100) {
    throw refuse('MHL_SERVE_RUN_LOCK_TTL takes seconds or a duration such as 45s (at least 100ms)');
  }
  const replicaId = nonEmpty(env['MHL_SERVE_REPLICA_ID']);
  if (replicaId !== undefined && !/^[\x21-\x7e]{1,128}$/.test(replicaId)) {
    throw refuse('MHL_SERVE_REPLICA_ID takes 1 to 128 visible ASCII characters');
  }
  return {
    ...(store !== undefined ? { store } : {}),
    singleReplica: single,
    runLockTtlMs: ttl,
    ...(replicaId !== undefined ? { replicaId } : {}),
  };
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/**
 * Which store a server keeps runs (and, on a shared store, sessions) in, opened before anything
 * is served: `--store postgres://…` / `MHL_SERVE_STORE` or an `extension store` declaration (a
 * PostgreSQL store shared by replicas), `--store file:///dir` (a dir store), or nothing (the
 * runs surface then uses `--state-dir` or a temporary directory, as always). The policy lives
 * here too: a store without `cas` cannot keep two replicas from running one run twice, so it
 * is refused unless `--single-replica` acknowledges a one-writer deployment. The PostgreSQL
 * driver is imported only when a PostgreSQL store is asked for.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../log/index.js';
import { DirStore, type Store, storeCan } from '../store/index.js';

/** Where the store's settings came from, for messages (never the DSN itself). */
export interface StoreSource {
  readonly url: string;
  /** `mhl_store` unless the declaration names another. */
  readonly table?: string;
  /** `--store` or `extension store Name (file:line)`. */
  readonly origin: string;
}

/** An opened store, with what the run layer needs to share it with other replicas. */
export interface ServeStore {
  readonly store: Store;
  /** Printable: the URL without its password. */
  readonly description: string;
  /** This replica's id in lease rows and logs. */
  readonly replicaId: string;
  readonly leaseTtlMs: number;
}

export type OpenStoreResult =
  | { readonly ok: true; readonly opened: ServeStore }
  | { readonly ok: false; readonly problem: string };

/** Opens the store `source` names and applies the store policy. */
export async function openServeStore(
  source: StoreSource,
  settings: {
    readonly singleReplica: boolean;
    readonly leaseTtlMs: number;
    readonly replicaId?: string;
  },
  logger: Logger,
): Promise<OpenStoreResult> {
  const replicaId = settings.replicaId ?? `replica-${randomBytes(6).toString('hex')}`;
  let store: Store;
  let description: string;
  if (/^file:\/\//i.test(source.url)) {
    let dir: string;
    try {
      dir = fileURLToPath(source.url);
    } catch {
      return { ok: false, problem: `${source.origin}: not a usable file:// URL` };
    }
    store = new DirStore(join(dir, '.mhl'));
    description = source.url;
  } else {
    const pg = await import('../store/postgres.js');
    const { dsn, table } = splitTable(source.url, source.table);
    description = `${pg.describeDsn(dsn)}#${table ?? 'mhl_store'}`;
    try {
      store = await pg.openPostgresStore({
        dsn,
        ...(table !== undefined ? { table } : {}),
        onPoolError: (message) =>
          logger.warn({ store: description, err: { message } }, 'store connection lost'),
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return {
        ok: false,
        problem: `${source.origin}: could not open the store ${description}: ${why}`,
      };
    }
  }
  if (!storeCan(store, 'cas') && !settings.singleReplica) {
    await store.close();
    return {
      ok: false,
      problem: `${source.origin}: the store ${description} has no compare-and-swap (cas), so two replicas could run one run at once; pass --single-replica (or set MHL_SERVE_SINGLE_REPLICA=1) if this is the only server writing to it`,
    };
  }
  logger.info(
    { store: description, replica: replicaId, capabilities: [...store.capabilities] },
    'state store opened',
  );
  return { ok: true, opened: { store, description, replicaId, leaseTtlMs: settings.leaseTtlMs } };
}

/**
 * The DSN without mhl's own `table` query parameter (`postgres://…/db?table=schema.runs`), so
 * one database can hold several deployments' tables; a declared table wins over it.
 */
function splitTable(url: string, declared: string | undefined): { dsn: string; table?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { dsn: url, ...(declared !== undefined ? { table: declared } : {}) };
  }
  const fromUrl = parsed.searchParams.get('table') ?? undefined;
  parsed.searchParams.delete('table');
  const table = declared ?? fromUrl;
  return { dsn: parsed.toString(), ...(table !== undefined ? { table } : {}) };
}

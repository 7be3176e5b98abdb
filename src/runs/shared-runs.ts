/**
 * What the run registry reads of a shared store (one with `lease`) beyond a single record:
 * the view of a run another replica executes (or executed until it died), every run of one
 * owner for `run/list`, the cross-replica cancel flags of the runs executing here, and the
 * housekeeping scans: terminal runs past their TTL deleted in bounded batches and the count
 * of runs waiting to execute. With `scan` each of these is one indexed query; without it, a
 * list and a read per run.
 */
import type { Workflow } from '../catalog/index.js';
import { type Store, storeCan } from '../store/index.js';
import type { SharedStore } from './run-lease.js';
import { resumableAfter } from './run-policy.js';
import { cancelKey, parseRecord, type RunRecord, readRecord } from './run-records.js';
import type { RunView } from './types.js';

/** Runs per purge batch, and batches per housekeeping pass (the rest waits a minute). */
export const PURGE_BATCH = 100;
const PURGE_BATCHES = 20;
const RECORD_SUFFIX = '/mhl-run.json';
const TERMINAL = ['completed', 'failed', 'canceled'];
const WAITING = ['pending', 'claimed', 'queued'];

/** A run record's shared fields: owner, and state and resumability where the index reads them. */
export function sharedFields(
  owner: string | null,
  view: RunView,
): Pick<RunRecord, 'owner' | 'state' | 'resumable'> {
  return {
    ...(owner !== null ? { owner } : {}),
    state: view.state,
    resumable: view.resumable === true,
  };
}

/**
 * The view of a run no leg of this replica executes: as recorded, except that a run recorded
 * in flight whose lease is not live (its replica died or stalled past the TTL) is `failed`
 * and, when its workflow checkpoints, resumable. `live` is undefined when the lock state
 * could not be read: the record is then reported as it is.
 */
export function remoteView(
  record: RunRecord,
  workflow: Workflow,
  live: boolean | undefined,
): RunView {
  const { view } = record;
  const inFlight = view.state === 'working' || view.state === 'queued' || view.state === 'pending';
  if (!inFlight || live !== false) return view;
  const { vars: _v, reason: _r, resumable: _s, ...rest } = view;
  return {
    ...rest,
    state: 'failed',
    error: 'the replica executing this run stopped (its lease lapsed); resume it with run/resume',
    ...(resumableAfter(workflow, 'failed', true) ? { resumable: true as const } : {}),
  };
}

/**
 * A run's record with whether its lease is live, read consistently: the record is read again
 * after the lease, and the pair retried when it changed between them (a leg ending writes its
 * last record and frees its lease at once; a resume takes the lease before its first write),
 * so a run that just finished or just resumed is never mistaken for one whose replica died.
 * `live` is undefined when the run is not in flight or the lease could not be read.
 */
export async function readWithLease(
  store: SharedStore,
  runId: string,
): Promise<{ record: RunRecord | undefined; live: boolean | undefined }> {
  let record = await readRecord(store, runId);
  for (let attempt = 0; attempt < 3 && record !== undefined; attempt++) {
    const state = record.view.state;
    if (state !== 'working' && state !== 'queued' && state !== 'pending') break;
    const live = await store.lease
      .read(runId)
      .then((lease) => lease?.live === true)
      .catch(() => undefined);
    const again = await readRecord(store, runId);
    if (again?.view.updatedAt === record.view.updatedAt) return { record, live };
    record = again;
  }
  return { record, live: undefined };
}

/** Every record of `owner`, from the owner index when the store can scan. */
export async function ownedRecords(store: Store, owner: string): Promise<RunRecord[]> {
  const out: RunRecord[] = [];
  if (storeCan(store, 'scan')) {
    let after: string | undefined;
    do {
      const page = await store.scan.scan({
        prefix: 'state/',
        suffix: RECORD_SUFFIX,
        where: { owner },
        limit: 1000,
        ...(after !== undefined ? { after } : {}),
      });
      for (const entry of page.entries) {
        const record = parseRecord(entry.value);
        if (record) out.push(record);
      }
      after = page.next;
    } while (after !== undefined);
    return out;
  }
  for (const key of await store.list('state/')) {
    const runId = /^state\/([0-9a-f]{32})\/mhl-run\.json$/.exec(key)?.[1];
    if (runId === undefined) continue;
    const record = await readRecord(store, runId).catch(() => undefined);
    if (record?.owner === owner) out.push(record);
  }
  return out;
}

/** Whether `run/cancel` on another replica flagged `runId`. */
export async function cancelFlagged(store: Store, runId: string): Promise<boolean> {
  return (await store.get(cancelKey(runId))) !== undefined;
}

/**
 * Deletes the runs that reached a terminal state before `cutoff` (store clock: the record's
 * last write), their checkpoints with them, in batches of `PURGE_BATCH`; runs another replica
 * deletes at the same moment are skipped. Needs `scan`. Resolves to the run ids deleted.
 */
export async function purgeTerminal(store: Store, cutoff: number): Promise<string[]> {
  if (!storeCan(store, 'scan')) return [];
  const gone: string[] = [];
  for (let batch = 0; batch < PURGE_BATCHES; batch++) {
    const keys = await store.scan.purge({
      prefix: 'state/',
      suffix: RECORD_SUFFIX,
      where: { state: TERMINAL },
      updatedBefore: cutoff,
      limit: PURGE_BATCH,
    });
    for (const key of keys) gone.push(key.split('/')[1] as string);
    if (keys.length < PURGE_BATCH) break;
  }
  return gone;
}

/**
 * Runs whose replica died and that nobody resumed: their lease lapsed more than `ttlMs` ago
 * (MHL_SERVE_TERMINAL_RUN_TTL) and their record still says in flight. Recovery is explicit, so
 * until then they stay, failed + resumable; past it they are deleted with their checkpoints, as
 * finished runs are. A lapsed lease row whose run is not in flight (paused, finished, gone) is
 * deleted on its own. Each is done under a lease taken for the purpose, which only an expired
 * lease yields, so a resume racing the sweep either wins the lease or finds the run gone.
 * Resolves to the run ids deleted; `lapsed` unsupported means nothing to do.
 */
export async function purgeAbandoned(
  store: SharedStore,
  ttlMs: number,
  holder: string,
): Promise<string[]> {
  const lapsed = store.lease.lapsed;
  if (lapsed === undefined) return [];
  const gone: string[] = [];
  for (const runId of await lapsed.call(store.lease, ttlMs, PURGE_BATCH)) {
    if (!/^[0-9a-f]{32}$/.test(runId)) continue;
    const lease = await store.lease.acquire(runId, holder, 60_000);
    if (lease === undefined) continue;
    const record = await readRecord(store, runId).catch(() => undefined);
    const state = record?.view.state;
    if (state === 'working' || state === 'queued' || state === 'pending') {
      const keys = await store.list(`state/${runId}/`);
      const writes = keys.map((key) => ({ key, value: undefined }));
      if (await store.fence.writeFenced(writes, lease, { release: true })) gone.push(runId);
    } else {
      await store.lease.release(lease);
    }
  }
  return gone;
}

/** How many runs wait to execute on any replica (`mhl_serve_runs_pending`); needs `scan`. */
export async function countPending(store: Store): Promise<number | undefined> {
  if (!storeCan(store, 'scan')) return undefined;
  return store.scan.count({ prefix: 'state/', suffix: RECORD_SUFFIX, where: { state: WAITING } });
}

/**
 * How an async run is kept in the store, beside the checkpoint files the runner writes for the
 * same session (the runId doubles as the session id, spec/mhl-serve.md §5.1):
 *
 *   state/<runId>/mhl-run.json   the run record: workflow, arguments, owner, last known view
 *   state/<runId>/<Pipeline>.json, result.json, …   the runner's own state
 *
 * The record is written when the run starts or resumes, when it gets its slot and when a leg
 * ends (not at every step: step progress lives in the checkpoints), so a later process can answer `run/status` and
 * `run/resume` for a run it never started. Only a principal's ownership is persisted: a
 * session-owned run is claimed by the first caller to name its unguessable id after a restart.
 */
import { z } from 'zod';
import { checkSession } from '../runtime/index.js';
import type { Fence, Store, StoreWith } from '../store/index.js';
import { type RunState, type RunView, TERMINAL_STATES } from './types.js';

const RECORD_VERSION = 1;

export interface RunRecord {
  readonly version: typeof RECORD_VERSION;
  readonly workflow: string;
  /** The original arguments (with `context`), as the caller sent them. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The owner hash, only for runs a principal started. */
  readonly principalOwner?: string;
  /** `pipelineDigest` of the workflow when the run started. */
  readonly digest: string;
  readonly view: RunView;
  /**
   * On a shared store only: the owner (session or principal hash), so every replica answers
   * for the same caller; and the state and resumability at the top, where the store's `state`
   * index and the housekeeping scans read them.
   */
  readonly owner?: string;
  readonly state?: RunState;
  readonly resumable?: boolean;
}

/** The key of a run's record. */
export function recordKey(runId: string): string {
  return `state/${checkSession(runId)}/mhl-run.json`;
}

/** The key of a run's cross-replica cancel flag (`run/cancel` on a replica not running it). */
export function cancelKey(runId: string): string {
  return `state/${checkSession(runId)}/mhl-cancel.json`;
}

export async function writeRecord(store: Store, record: RunRecord): Promise<void> {
  await store.put(recordKey(record.view.runId), JSON.stringify(record));
}

/** Writes the record only while `fence` holds the run's lease; false when it does not. */
export function writeRecordFenced(
  store: StoreWith<'fence'>,
  record: RunRecord,
  fence: Fence,
  durable = true,
): Promise<boolean> {
  return store.fence.putFenced(recordKey(record.view.runId), JSON.stringify(record), fence, {
    durable,
  });
}

const STATE_NAMES = [
  'pending',
  'claimed',
  'queued',
  'working',
  'completed',
  'failed',
  'canceled',
  'paused',
] as const;

/**
 * A run record as read back: loose beyond the fields the run layer relies on (newer writers).
 * Built on first parse, not at import: a server that reads no stored run never needs it.
 */
function buildRecordSchema() {
  return z.looseObject({
    version: z.literal(RECORD_VERSION),
    workflow: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    principalOwner: z.string().optional(),
    digest: z.string(),
    owner: z.string().optional(),
    state: z.enum(STATE_NAMES).optional(),
    resumable: z.boolean().optional(),
    view: z.looseObject({
      runId: z.string().regex(/^[0-9a-f]{32}$/),
      tool: z.string(),
      state: z.enum(STATE_NAMES),
      startedAt: z.string(),
      updatedAt: z.string(),
    }),
  });
}
let recordSchema: ReturnType<typeof buildRecordSchema> | undefined;

/** The record in `text`, or undefined when it is not one this version wrote. */
export function parseRecord(text: string): RunRecord | undefined {
  try {
    recordSchema ??= buildRecordSchema();
    const parsed = recordSchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data as unknown as RunRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** The record of `runId`, or undefined when there is none or it is not one this version wrote. */
export async function readRecord(store: Store, runId: string): Promise<RunRecord | undefined> {
  const text = await store.get(recordKey(runId));
  return text === undefined ? undefined : parseRecord(text);
}

/** Removes every key of the run: its record, checkpoints and result. */
export async function deleteRun(store: Store, runId: string): Promise<void> {
  const prefix = `state/${checkSession(runId)}/`;
  for (const key of await store.list(prefix)) await store.delete(key);
}

/**
 * Tells `found` of every run record in the store, with the principal owner persisted with it
 * (null when there is none: the first caller to name the run claims it), for the owner index.
 * Run once at start-up, so that later lookups never read a record to learn whose it is; a
 * record that could not be read (the store failed, not a bad record) goes to `unreadable`, to
 * be read again when named.
 */
export async function scanStoredRuns(
  store: Store,
  found: (runId: string, principalOwner: string | null) => void,
  unreadable: (runId: string, error: unknown) => void,
): Promise<void> {
  for (const key of await store.list('state/')) {
    const runId = /^state\/([0-9a-f]{32})\/mhl-run\.json$/.exec(key)?.[1];
    if (runId === undefined) continue;
    let record: RunRecord | undefined;
    try {
      record = await readRecord(store, runId);
    } catch (error) {
      unreadable(runId, error);
      continue;
    }
    if (record !== undefined) found(runId, record.principalOwner ?? null);
  }
}

/**
 * Deletes the finished (completed, failed, cancelled) runs an earlier process left in the
 * store once they are past `cutoff`, as the in-memory sweep does; `live` runs are this
 * process's to sweep. Paused runs, and runs that were in flight when their process died
 * (their record still says so), stay until resumed. Resolves to how many it deleted.
 */
export async function sweepStoredRuns(
  store: Store,
  cutoff: number,
  live: (runId: string) => boolean,
  report: {
    /** Told each run just before its state is deleted. */
    readonly forget: (runId: string) => void;
    readonly warn: (runId: string, error: unknown) => void;
  },
): Promise<number> {
  let swept = 0;
  const keys = await store.list('state/').catch(() => []);
  for (const key of keys) {
    const runId = /^state\/([0-9a-f]{32})\/mhl-run\.json$/.exec(key)?.[1];
    if (runId === undefined || live(runId)) continue;
    const view = (await readRecord(store, runId).catch(() => undefined))?.view;
    if (!view || Date.parse(view.updatedAt) > cutoff) continue;
    const over = view.state === 'completed' || (TERMINAL_STATES.has(view.state) && !view.resumable);
    if (!over || live(runId)) continue;
    report.forget(runId);
    await deleteRun(store, runId).catch((error: unknown) => report.warn(runId, error));
    swept++;
  }
  return swept;
}

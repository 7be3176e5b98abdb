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
import { checkSession } from '../runtime/index.js';
import type { Store } from '../store/index.js';
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
}

function recordKey(runId: string): string {
  return `state/${checkSession(runId)}/mhl-run.json`;
}

export async function writeRecord(store: Store, record: RunRecord): Promise<void> {
  await store.put(recordKey(record.view.runId), JSON.stringify(record));
}

/** The record of `runId`, or undefined when there is none or it is not one this version wrote. */
export async function readRecord(store: Store, runId: string): Promise<RunRecord | undefined> {
  const text = await store.get(recordKey(runId));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<RunRecord> | null;
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Removes every key of the run: its record, checkpoints and result. */
export async function deleteRun(store: Store, runId: string): Promise<void> {
  const prefix = `state/${checkSession(runId)}/`;
  for (const key of await store.list(prefix)) await store.delete(key);
}

const STATES: ReadonlySet<string> = new Set<RunState>([
  'pending',
  'claimed',
  'queued',
  'working',
  'completed',
  'failed',
  'canceled',
  'paused',
]);

function isRecord(value: Partial<RunRecord> | null): value is RunRecord {
  return (
    value !== null &&
    typeof value === 'object' &&
    value.version === RECORD_VERSION &&
    typeof value.workflow === 'string' &&
    typeof value.digest === 'string' &&
    typeof value.arguments === 'object' &&
    value.arguments !== null &&
    typeof value.view === 'object' &&
    value.view !== null &&
    typeof value.view.runId === 'string' &&
    STATES.has(value.view.state)
  );
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

/**
 * Run state over a `Store` (spec: mhl-language.md §11, §6.6, §6.10): per-step checkpoints,
 * loop progress, the `latest` session pointer, completed results, TTL expiry and the sweep of
 * abandoned sessions, under the key layout of `checkpoint-keys.ts` (the dir store is rooted at
 * `.mhl/`, so keys land at `.mhl/state/…`). Everything written is redacted; everything read is
 * validated. This module decides nothing about resuming (digest checks, `--force`, merging
 * inputs): the interpreter does.
 */
import type { z } from 'zod';
import { type Store, storeCan } from '../../store/index.js';
import { fromJson } from '../interpreter/values.js';
import type { Redactor } from '../services/redact.js';
import {
  CHECKPOINT_ERROR_CODES,
  CheckpointEncoder,
  CheckpointError,
  decodeRecord,
  encodeRecord,
  plainValue,
  plainVariables,
  toVariables,
} from './checkpoint-codec.js';
import {
  checkName,
  checkpointPipelines,
  checkSession,
  groupBySession,
  isExpired,
  isSessionId,
  isStateName,
  newSessionId,
  stateKeys,
} from './checkpoint-keys.js';
import {
  type CheckpointRecord,
  type LoopRecord,
  type ResultRecord,
  recordSchemas,
  STATE_VERSION,
} from './checkpoint-records.schema.js';
import type {
  Checkpoint,
  CheckpointDraft,
  CheckpointStoreOptions,
  LoopDraft,
  ReadOptions,
  ResultDraft,
  RunResult,
  SweepReport,
  WriteOptions,
} from './checkpoint-types.js';

export {
  CHECKPOINT_ERROR_CODES,
  CheckpointError,
  type CheckpointErrorCode,
  type CheckpointErrorKind,
} from './checkpoint-codec.js';
export { isSessionId, isStateName, newSessionId, stateKeys } from './checkpoint-keys.js';
export {
  type CheckpointRecord,
  type LoopRecord,
  type ResultRecord,
  STATE_VERSION,
  TERMINAL_REASONS,
  type TerminalReason,
} from './checkpoint-records.schema.js';
export type {
  Checkpoint,
  CheckpointDraft,
  CheckpointStoreOptions,
  LoopDraft,
  ReadOptions,
  ResultDraft,
  RunResult,
  SweepReport,
  WriteOptions,
} from './checkpoint-types.js';

/**
 * The run-state layer. Every method validates names (`STATE_INVALID_NAME`), honours `signal`,
 * and passes through `StoreError`s from the store.
 */
export class CheckpointStore {
  readonly #store: Store;
  readonly #redactor: Redactor;
  readonly #runtimeVersion: string | undefined;
  readonly #now: () => Date;
  readonly #latestPointer: boolean;
  readonly #encoder = new CheckpointEncoder();

  /** Run state in `store`; every record passes through `redactor` before it is written. */
  constructor(store: Store, redactor: Redactor, options: CheckpointStoreOptions = {}) {
    this.#store = store;
    this.#redactor = redactor;
    this.#runtimeVersion = options.runtimeVersion;
    this.#now = options.now ?? (() => new Date());
    this.#latestPointer = options.latestPointer !== false;
  }

  /** A fresh session id (see `newSessionId`). */
  newSessionId(): string {
    return newSessionId();
  }

  /**
   * Writes the checkpoint of `pipeline` in `session`, replacing the previous one atomically.
   * @throws CheckpointError `STATE_NOT_PERSISTABLE` (a variable is not JSON data), `STATE_LEASE_LOST`.
   */
  async save(
    session: string,
    pipeline: string,
    draft: CheckpointDraft,
    options?: WriteOptions,
  ): Promise<void> {
    const key = stateKeys.checkpoint(session, pipeline);
    const record: CheckpointRecord = {
      pipeline,
      last_step: draft.last_step,
      next_step: draft.next_step,
      // Not copied: encoded before this returns, never kept.
      completed_steps: draft.completed_steps as string[],
      variables: plainVariables(draft.variables, key),
      saved_at: this.#now().toISOString(),
      ttl_seconds: draft.ttl_seconds,
      ...(draft.digest !== undefined && { digest: draft.digest }),
      ...(this.#runtimeVersion !== undefined && { runtime_version: this.#runtimeVersion }),
      state_version: STATE_VERSION,
      ...(draft.paused && { paused: { reason: draft.paused.reason } }),
    };
    await this.#putText(key, this.#encoder.encode(key, record, this.#redactor), options);
  }

  /**
   * The checkpoint of `pipeline` in `session`; undefined when there is none or it expired (an
   * expired one is deleted).
   * @throws CheckpointError `STATE_CORRUPT`, `STATE_SCHEMA_TOO_NEW`.
   */
  async load(
    session: string,
    pipeline: string,
    options?: WriteOptions,
  ): Promise<Checkpoint | undefined> {
    const key = stateKeys.checkpoint(session, pipeline);
    const record = await this.#read(key, recordSchemas().checkpoint, options);
    if (record === undefined) return undefined;
    if (record.pipeline !== pipeline) {
      throw new CheckpointError(
        CHECKPOINT_ERROR_CODES.CORRUPT,
        key,
        `state file names pipeline "${record.pipeline}", not "${pipeline}"`,
      );
    }
    if (isExpired(record, this.#now())) {
      await this.#delete(key, options);
      return undefined;
    }
    return { ...record, variables: toVariables(record.variables) };
  }

  /** The session most recently started for `pipeline`, or undefined. @throws CheckpointError `STATE_CORRUPT`. */
  async latest(pipeline: string, options?: ReadOptions): Promise<string | undefined> {
    const key = stateKeys.latest(pipeline);
    const text = await this.#store.get(key, options);
    if (text === undefined) return undefined;
    const session = text.trim();
    if (!isSessionId(session)) {
      throw new CheckpointError(
        CHECKPOINT_ERROR_CODES.CORRUPT,
        key,
        'latest pointer does not hold a session id',
      );
    }
    return session;
  }

  /** Points `state/<Pipeline>.latest` at `session` (unless made with `latestPointer: false`). */
  async setLatest(pipeline: string, session: string, options?: WriteOptions): Promise<void> {
    const key = stateKeys.latest(pipeline);
    const text = `${checkSession(session)}\n`;
    if (this.#latestPointer) await this.#putText(key, text, options);
  }

  /** Writes the loop progress of loop pipeline `pipeline` in `session`. */
  async saveLoop(
    session: string,
    pipeline: string,
    draft: LoopDraft,
    options?: WriteOptions,
  ): Promise<void> {
    const record: LoopRecord = {
      loop: pipeline,
      next_iteration: draft.next_iteration,
      terminal_reason: draft.terminal_reason,
      saved_at: this.#now().toISOString(),
      instance_id: draft.instance_id,
      state_version: STATE_VERSION,
    };
    await this.#write(stateKeys.loop(session, pipeline), record, options);
  }

  /** The loop progress, or undefined. @throws CheckpointError `STATE_CORRUPT`, `STATE_SCHEMA_TOO_NEW`. */
  async loadLoop(
    session: string,
    pipeline: string,
    options?: ReadOptions,
  ): Promise<LoopRecord | undefined> {
    return this.#read(stateKeys.loop(session, pipeline), recordSchemas().loop, options);
  }

  /**
   * Records a completed run: writes `result.json`, then deletes the checkpoint (the dir store
   * then removes the session directory if nothing else is in it). Loop progress is kept: its
   * `terminal_reason` tells a later `--resume` the loop finished. The delete is not made durable
   * (one fsync fewer): `result.json` is, and a checkpoint that reappears after a power loss is
   * the run's last one, from which a resume re-runs no step and completes again. On a store
   * with `batch` (a served run's store on PostgreSQL, fenced on its lease) both are one
   * transaction.
   * @throws CheckpointError `STATE_NOT_PERSISTABLE`, `STATE_LEASE_LOST`.
   */
  async complete(
    session: string,
    pipeline: string,
    result: ResultDraft,
    options?: WriteOptions,
  ): Promise<void> {
    const key = stateKeys.result(session);
    const record: ResultRecord = {
      pipeline,
      variables: plainVariables(result.variables, key),
      ...(result.output !== undefined && { output: plainValue(result.output, key, 'output') }),
      completed_at: this.#now().toISOString(),
      ...(result.digest !== undefined && { digest: result.digest }),
      ...(this.#runtimeVersion !== undefined && { runtime_version: this.#runtimeVersion }),
      state_version: STATE_VERSION,
    };
    const checkpoint = stateKeys.checkpoint(session, pipeline);
    this.#encoder.forget(checkpoint);
    if (options?.fence === undefined && storeCan(this.#store, 'batch')) {
      // One transaction: no reader sees the result with the checkpoint still there, or neither.
      const text = encodeRecord(record, this.#redactor);
      await this.#store.batch.write(
        [
          { key, value: text },
          { key: checkpoint, value: undefined },
        ],
        options,
      );
      return;
    }
    await this.#write(key, record, options);
    await this.#delete(checkpoint, { ...options, durable: false });
  }

  /** The result of the completed run `session`, or undefined. @throws CheckpointError `STATE_CORRUPT`, `STATE_SCHEMA_TOO_NEW`. */
  async readResult(session: string, options?: ReadOptions): Promise<RunResult | undefined> {
    const record = await this.#read(stateKeys.result(session), recordSchemas().result, options);
    if (record === undefined) return undefined;
    const { output, ...rest } = record;
    return {
      ...rest,
      variables: toVariables(record.variables),
      ...(output !== undefined && { output: fromJson(output) }),
    };
  }

  /**
   * The session of the most recently completed run of `pipeline` (latest `completed_at`), what
   * `context: {source: "latest"}` reads. Reads every `result.json` under `state/`; unreadable
   * ones are skipped. Undefined when no run of `pipeline` completed.
   */
  async latestCompleted(pipeline: string, options?: ReadOptions): Promise<string | undefined> {
    checkName(pipeline);
    let best: { session: string; at: number } | undefined;
    for (const key of await this.#store.list('state/', options)) {
      const m = /^state\/([^/]+)\/result\.json$/.exec(key);
      if (!m || !isSessionId(m[1] as string)) continue;
      const record = await this.#read(key, recordSchemas().result, options).catch(
        (err: unknown) => {
          if (err instanceof CheckpointError) return undefined;
          throw err;
        },
      );
      if (record?.pipeline !== pipeline) continue;
      const at = Date.parse(record.completed_at);
      if (best === undefined || at > best.at) best = { session: m[1] as string, at };
    }
    return best?.session;
  }

  /**
   * Deletes checkpoints whose TTL passed by `now` (with their loop files) and the `latest`
   * pointers of sessions that leaves empty. Unreadable files are reported, never deleted.
   */
  async sweepExpired(now: Date = this.#now(), options?: ReadOptions): Promise<SweepReport> {
    const report: SweepReport = { expired: [], sessions: [], unreadable: [] };
    const keys = await this.#store.list('state/', options);
    const bySession = groupBySession(keys);
    for (const [session, files] of bySession) {
      options?.signal?.throwIfAborted();
      for (const pipeline of checkpointPipelines(files)) {
        const key = stateKeys.checkpoint(session, pipeline);
        const record = await this.#read(key, recordSchemas().checkpoint, options).catch(
          (err: unknown) => {
            if (!(err instanceof CheckpointError)) throw err;
            report.unreadable.push(key);
            return undefined;
          },
        );
        if (record === undefined || !isExpired(record, now)) continue;
        await this.#delete(key, options);
        report.expired.push(key);
        files.delete(`${pipeline}.json`);
        if (files.delete(`loop-${pipeline}.json`)) {
          await this.#delete(stateKeys.loop(session, pipeline), options);
        }
      }
      if (files.size === 0 && report.expired.some((k) => k.startsWith(`state/${session}/`))) {
        report.sessions.push(session);
      }
    }
    await this.#dropPointers(keys, new Set(report.sessions), options);
    return report;
  }

  async #dropPointers(
    keys: readonly string[],
    gone: ReadonlySet<string>,
    options?: ReadOptions,
  ): Promise<void> {
    if (gone.size === 0) return;
    for (const key of keys) {
      const m = /^state\/([^/]+)\.latest$/.exec(key);
      if (!m || !isStateName(m[1] as string)) continue;
      const session = await this.latest(m[1] as string, options).catch((err: unknown) => {
        if (err instanceof CheckpointError) return undefined;
        throw err;
      });
      if (session !== undefined && gone.has(session)) await this.#delete(key, options);
    }
  }

  async #read<T>(key: string, schema: z.ZodType<T>, options?: ReadOptions): Promise<T | undefined> {
    const text = await this.#store.get(key, options);
    return text === undefined ? undefined : decodeRecord(text, key, schema);
  }

  async #write(key: string, record: object, options?: WriteOptions): Promise<void> {
    await this.#putText(key, encodeRecord(record, this.#redactor), options);
  }

  async #putText(key: string, text: string, options?: WriteOptions): Promise<void> {
    const fence = options?.fence;
    if (fence !== undefined && storeCan(this.#store, 'fence')) {
      if (!(await this.#store.fence.putFenced(key, text, fence, options))) throw leaseLost(key);
      return;
    }
    await this.#store.put(key, text, options);
  }

  async #delete(key: string, options?: WriteOptions & { durable?: boolean }): Promise<void> {
    const fence = options?.fence;
    if (fence !== undefined && storeCan(this.#store, 'fence')) {
      if (!(await this.#store.fence.deleteFenced(key, fence, options))) throw leaseLost(key);
      return;
    }
    await this.#store.delete(key, options);
  }
}

function leaseLost(key: string): CheckpointError {
  return new CheckpointError(
    CHECKPOINT_ERROR_CODES.LEASE_LOST,
    key,
    'write refused: the run lease is held elsewhere',
  );
}

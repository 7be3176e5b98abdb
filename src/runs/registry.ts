// Over 500 lines: the registry is the one owner of the run table, and its shared-store paths (lease, refresh, cancel flags) are each a few lines of the same methods.
/**
 * The async run registry (`run/*`, `mhl_run_*`): starts runs detached from the request that
 * asked, answers their status from memory, resumes, cancels, lists and serves their logs, and
 * only ever for the caller that owns them. Everything a later process needs to continue a run
 * is persisted through the `Store` (see `run-records.ts`); a run this process never started is
 * rebuilt from its record the first time its owner names it.
 *
 * Ownership is an opaque owner string (`owner.ts`); a run that belongs to someone else is
 * answered exactly like a run that does not exist, decided from the owner index of
 * `run-table.ts` before anything of the run is read. Each caller holds and queues at most its
 * quota (`run-quota.ts`), counted by quota key rather than owner, so no client can fill the
 * table for the others; a session's runs outlive it, claimable by whoever names them next
 * (`release`), and count against the key that started them until then.
 *
 * On a shared store (`replica` set, a store with `lease` and `fence`) the store is the truth:
 * every record carries its owner, each leg runs under a lease (`run-lease.ts`) with every
 * write fenced on it, the status is published at every step boundary, a run this replica does
 * not execute is read afresh from the store at each look (`shared-runs.ts`), and `run/cancel`
 * of such a run sets the flag its executing replica polls four times a second.
 */
import { randomBytes } from 'node:crypto';
import type { Workflow } from '../catalog/index.js';
import { storeCan } from '../store/index.js';
import { ArgumentError } from './argument-error.js';
import { RunChangeFeed, type RunChangeKind } from './change-feed.js';
import { claimRun, releaseShared } from './run-claim.js';
import {
  acquireLease,
  fencedStore,
  heldElsewhere,
  LEASE_LOST_MESSAGE,
  RunLease,
  type SharedStore,
} from './run-lease.js';
import { type LegHost, type LiveRun, launch, reclaimedRun } from './run-leg.js';
import { RunLog } from './run-log.js';
import { peekOf, type RunPeek } from './run-peek.js';
import {
  busy,
  checkArgumentsSize,
  DEFAULT_TERMINAL_TTL_MS,
  draining,
  type Limits,
  limitsOf,
  resumableAfter,
} from './run-policy.js';
import { checkQueue, roomFor } from './run-quota.js';
import {
  cancelKey,
  deleteRun,
  type RunRecord,
  readRecord,
  recordKey,
  scanStoredRuns,
  sweepStoredRuns,
  writeRecord,
  writeRecordFenced,
} from './run-records.js';
import { RunTable } from './run-table.js';
import {
  cancelFlagged,
  countPending,
  ownedRecords,
  purgeAbandoned,
  purgeTerminal,
  readWithLease,
  remoteView,
  sharedFields,
} from './shared-runs.js';
import { refusalOf } from './state-fault.js';
import { StepTimeline } from './step-timeline.js';
import {
  type Caller,
  type CheckedCall,
  RunError,
  type RunRegistryOptions,
  type RunState,
  type RunView,
  TERMINAL_STATES,
  unknownRun,
} from './types.js';

/**
 * How often the cancel flags of runs executing here are read: a quarter of the second the seed
 * allows, so a flag set just after a read still stops the run within it (one indexed read per
 * run executing here per tick).
 */
const CANCEL_POLL_MS = 250;

function elsewhere(runId: string): RunError {
  return new RunError(
    'RUN_ACTIVE',
    `run ${runId} is executing on another replica; wait for it or cancel it`,
  );
}

export class RunRegistry {
  readonly #options: RunRegistryOptions;
  /** Every change to a held run's view or log, published once (`change-feed.ts`). */
  readonly changes: RunChangeFeed;
  /** Held runs, by id and owner, and the owners of runs only in the store. */
  readonly #table = new RunTable<LiveRun>();
  readonly #limits: Limits;
  /** Settles once the runs an earlier process left in the store are in the owner index. */
  readonly #indexed: Promise<void>;
  /** The start-up scan failed: a run not in the index may still be in the store. */
  #scanFailed = false;
  readonly #now: () => number;
  #draining = false;
  /** What the legs of its runs reach the registry through. */
  readonly #host: LegHost;
  /** The shared store, when runs are shared with other replicas; see the module header. */
  readonly #shared: SharedStore | undefined;
  /** Polls the cancel flags of the runs executing here, while there are any. */
  #cancelPoll: NodeJS.Timeout | undefined;
  /** Runs waiting to execute on every replica, as of the last housekeeping pass. */
  #pending: number | undefined;
  /** Each run's last record write on a shared store, so the next waits for it. */
  readonly #writes = new WeakMap<LiveRun, Promise<void>>();
  /** Runs with a step publish queued and not yet started. */
  readonly #stepQueued = new WeakSet<LiveRun>();

  constructor(options: RunRegistryOptions) {
    this.#options = options;
    this.changes =
      options.changes ??
      new RunChangeFeed((error) =>
        options.logger.error({ err: error }, 'run change listener threw'),
      );
    const { store } = options;
    this.#shared =
      options.replica !== undefined && storeCan(store, 'lease') && storeCan(store, 'fence')
        ? (store as SharedStore)
        : undefined;
    this.#host = {
      options,
      endedBy: { completed: 0, failed: 0, canceled: 0, paused: 0 },
      set: (run, fields) => this.#set(run, fields),
      changed: (run) => this.#changed(run.runId, 'view'),
      persist: (run, final) => this.#persist(run, final),
      storeFor: (run) =>
        this.#shared && run.lease ? fencedStore(this.#shared, run.lease) : options.store,
      stepped: (run) => this.#publishStep(run),
      ended: (run) => this.#endLease(run),
      now: () => this.#now(),
      iso: () => this.#iso(),
    };
    this.#now = options.now ?? Date.now;
    this.#limits = limitsOf(options.limits);
    // On a shared store other replicas add runs all the time: each id is looked up when named.
    this.#indexed = this.#shared ? Promise.resolve() : this.#scanStored(options);
  }

  #scanStored(options: RunRegistryOptions): Promise<void> {
    return scanStoredRuns(
      options.store,
      (runId, principalOwner) => this.#table.addStored(runId, principalOwner),
      (runId, error) => {
        options.logger.warn({ err: error, runId }, 'could not read a run record; read when named');
        this.#table.addUnread(runId);
      },
    ).catch((error: unknown) => {
      options.logger.warn({ err: error }, 'could not list the runs kept in the store');
      this.#scanFailed = true;
    });
  }

  /** Runs waiting to execute on every replica sharing the store, if it can count them. */
  get pendingEverywhere(): number | undefined {
    return this.#pending;
  }

  /** Runs waiting for a slot and runs working, for `/metrics`. */
  get counts(): { held: number; queued: number; working: number } {
    let queued = 0;
    let working = 0;
    for (const run of this.#table.values()) {
      if (run.view.state === 'queued') queued++;
      else if (run.view.state === 'working') working++;
    }
    return { held: this.#table.size, queued, working };
  }

  /**
   * Owners with a run under way (pending, queued or working): a legacy session that owns one is
   * kept, since nobody else can reach it. A paused run waits for its owner and pins nothing.
   */
  activeOwners(): Set<string> {
    const owners = new Set<string>();
    for (const run of this.#table.values()) {
      // A released run (owner null) has no session left to keep.
      if (run.owner !== null && !TERMINAL_STATES.has(run.view.state) && run.view.state !== 'paused')
        owners.add(run.owner);
    }
    return owners;
  }

  /** Legs ended by state since start-up, for `/metrics`. */
  get ended(): Readonly<Record<string, number>> {
    return { ...this.#host.endedBy };
  }

  /** Starts a run; answers once its record is persisted, `working` or `queued`. */
  async start(
    name: string,
    args: Readonly<Record<string, unknown>>,
    caller: Caller,
  ): Promise<RunView> {
    if (this.#draining) throw draining();
    const workflow = this.#options.catalog.workflows.get(name);
    if (!workflow) throw new ArgumentError('name', `unknown workflow ${JSON.stringify(name)}`);
    checkArgumentsSize(args);
    const checked = this.#check(workflow, args);
    const runId = randomBytes(16).toString('hex');
    const at = this.#iso();
    const run: LiveRun = {
      runId,
      workflow,
      owner: caller.owner,
      quota: caller.quota,
      principalOwner: caller.principal !== undefined ? caller.owner : undefined,
      arguments: args,
      digest: workflow.definition.digest,
      view: { runId, tool: name, state: 'pending', startedAt: at, updatedAt: at },
      log: this.#newLog(runId),
      timeline: new StepTimeline(),
      leg: undefined,
      finishedAt: undefined,
    };
    // The finished runs that make room are chosen now but forgotten only once every refusal
    // has been checked (`#begin`), and put back if the record cannot be written: a refused
    // start costs the caller none of its results.
    const victims = roomFor(this.#table, caller.quota, this.#limits);
    let evicted = false;
    this.#table.add(run);
    try {
      await this.#begin(run, checked, false, caller, () => {
        evicted = true;
        for (const victim of victims) this.#table.remove(victim);
      });
    } catch (error) {
      this.#table.remove(run);
      if (evicted) for (const victim of victims) this.#table.add(victim);
      throw error;
    }
    for (const victim of victims) {
      this.#options.logger.info(
        { runId: victim.runId, owner: victim.owner },
        'run forgotten early: its caller reached --max-runs-per-caller',
      );
      void this.#deleteState(victim.runId);
    }
    this.#options.logger.info({ runId, owner: caller.owner, workflow: name }, 'run started');
    return run.view;
  }

  async status(runId: string, caller: Caller): Promise<RunView> {
    return (await this.#find(runId, caller)).view;
  }

  /** Continues a paused, failed or cancelled run, `args` merged over the original arguments. */
  async resume(
    runId: string,
    args: Readonly<Record<string, unknown>>,
    caller: Caller,
  ): Promise<RunView> {
    if (this.#draining) throw draining();
    checkArgumentsSize(args);
    const run = await this.#find(runId, caller);
    // A cancelled leg says `canceled` at once but may still be stopping: let it finish first.
    if (run.leg && run.view.state === 'canceled') await run.leg.done;
    const { state } = run.view;
    if (state === 'working' || state === 'queued') {
      throw new RunError('RUN_ACTIVE', `run ${runId} is still ${state}; wait for it or cancel it`);
    }
    if (state === 'completed')
      throw new RunError('RUN_NOT_RESUMABLE', `run ${runId} already completed`);
    if (!run.view.resumable) {
      const why = run.workflow.definition.checkpoints
        ? 'it failed in a way a resume cannot fix (invalid inputs or a changed definition); start a new run'
        : 'its workflow keeps no checkpoints (checkpoint: {enabled: false})';
      throw new RunError('RUN_NOT_RESUMABLE', `run ${runId} cannot be resumed: ${why}`);
    }
    if (run.digest !== run.workflow.definition.digest) {
      throw new RunError(
        'RUN_NOT_RESUMABLE',
        `${run.workflow.name} changed since run ${runId} started; start a new run instead`,
      );
    }
    const merged = { ...run.arguments, ...args };
    const checked = this.#check(run.workflow, merged);
    if (this.#shared && (await heldElsewhere(this.#shared, runId))) throw elsewhere(runId);
    const before = { view: run.view, arguments: run.arguments, finishedAt: run.finishedAt };
    run.before = run.view;
    const { error: _e, errorCode: _c, reason: _r, vars: _v, resumable: _s, ...rest } = run.view;
    run.view = { ...rest, state: 'pending', updatedAt: this.#iso() };
    run.arguments = merged;
    run.finishedAt = undefined;
    try {
      await this.#begin(run, checked, true, caller, () => {});
    } catch (error) {
      Object.assign(run, before);
      throw error;
    }
    this.#options.logger.info({ runId, owner: caller.owner }, 'run resumed');
    return run.view;
  }

  /** The surface's check of a run's `arguments`, its refusals named from the params' side. */
  #check(workflow: Workflow, args: Readonly<Record<string, unknown>>): CheckedCall {
    try {
      return this.#options.check(workflow, args);
    } catch (error) {
      throw error instanceof ArgumentError ? error.within('arguments') : error;
    }
  }

  /**
   * Takes a slot if one is free (else the run waits `queued`; until then it is `pending`, which
   * no caller sees), persists the record and starts
   * the leg. The leg exists before the record is written, so a cancel or a shutdown that comes
   * while it is written reaches it; it runs nothing until the write succeeded. Throws when the
   * run cannot begin: draining, too many runs queued, or the record could not be written.
   * `admitted` is called once every refusal but the write's is past, before the write.
   */
  async #begin(
    run: LiveRun,
    checked: CheckedCall,
    resume: boolean,
    caller: Caller,
    admitted: () => void,
  ): Promise<void> {
    if (this.#shared) await this.#takeLease(run, resume);
    let slot: ReturnType<RunRegistryOptions['admission']['tryAcquire']>;
    try {
      slot = this.#options.admission.tryAcquire();
      if (slot === 'closed') throw draining();
      if (slot === 'full') checkQueue(this.#table, run.quota, this.#limits, this.counts.queued);
    } catch (error) {
      await this.#endLease(run);
      throw error;
    }
    admitted();
    this.#set(run, { state: slot === 'full' ? 'queued' : 'working' });
    const persisted = this.#persist(run);
    launch(this.#host, run, checked, resume, caller, slot === 'full' ? undefined : slot, persisted);
    await persisted.catch((error: unknown) => this.#refuse(run, error));
  }

  /**
   * Takes the run's execution lease before anything of the leg happens; a run another replica
   * holds is `RUN_ACTIVE`. A resume then checks that nobody changed the run between the read
   * that allowed it and the lease (a race another replica won, ran and finished).
   */
  async #takeLease(run: LiveRun, resume: boolean): Promise<void> {
    const shared = this.#shared as SharedStore;
    const replica = this.#options.replica as { id: string; leaseTtlMs: number };
    const lease = await acquireLease(shared, run.runId, replica);
    if (lease === undefined) throw elsewhere(run.runId);
    run.lease = new RunLease(shared, lease, replica.leaseTtlMs, this.#options.logger, (why) =>
      this.#stop(run, why),
    );
    if (resume) {
      try {
        const now = await readRecord(shared, run.runId);
        if (now?.view.updatedAt !== run.before?.updatedAt) throw elsewhere(run.runId);
        await shared.delete(cancelKey(run.runId));
      } catch (error) {
        await this.#endLease(run);
        throw error instanceof RunError ? error : refusalOf(error);
      }
    }
    this.#startCancelPoll();
  }

  /** Stops the leg of `run` for `why`: the view says so at once, as a local cancel does. */
  #stop(run: LiveRun, why: string): void {
    if (!run.leg || run.leg.controller.signal.aborted) return;
    run.leg.controller.abort(new Error(why));
    const resumable = resumableAfter(run.workflow, 'canceled', true);
    this.#set(run, {
      state: 'canceled',
      error: why,
      ...(resumable ? { resumable: true as const } : {}),
    });
  }

  /** Checks, every `CANCEL_POLL_MS`, whether another replica flagged a run executing here as cancelled. */
  #startCancelPoll(): void {
    if (this.#cancelPoll !== undefined || !this.#shared) return;
    const shared = this.#shared;
    this.#cancelPoll = setInterval(() => {
      // A leg whose lease is lost no longer answers for the run: its successor reads the flag.
      const leased = [...this.#table.values()].filter(
        (run) => run.leg && run.lease && !run.lease.lost,
      );
      if (leased.length === 0) {
        clearInterval(this.#cancelPoll);
        this.#cancelPoll = undefined;
        return;
      }
      for (const run of leased) {
        cancelFlagged(shared, run.runId)
          .then(async (flagged) => {
            const lease = run.lease;
            if (!flagged || lease === undefined || lease.lost) return;
            // The flag is consumed only under this leg's lease: a replica that stalled and was
            // taken over finds its delete refused, leaves the flag to the successor, and stops.
            if (!(await shared.fence.deleteFenced(cancelKey(run.runId), lease.fence))) {
              lease.lose();
              return;
            }
            this.#options.logger.info({ runId: run.runId }, 'run cancelled from another replica');
            this.#stop(run, 'canceled by run/cancel');
          })
          .catch((error: unknown) =>
            this.#options.logger.warn({ err: error, runId: run.runId }, 'cancel flag unread'),
          );
      }
    }, CANCEL_POLL_MS);
    this.#cancelPoll.unref();
  }

  /** Gives the run's lease up once its writes are done. */
  async #endLease(run: LiveRun): Promise<void> {
    const lease = run.lease;
    if (lease === undefined) return;
    await this.#writes.get(run);
    // A resume may have taken a fresh lease meanwhile: that one is not this leg's to end.
    if (run.lease === lease) run.lease = undefined;
    await lease.release();
  }

  /** On a shared store, the status at a step boundary is published, after earlier writes. */
  #publishStep(run: LiveRun): void {
    if (!this.#shared || !run.lease) return;
    // One publish waiting is enough: it writes the view as it is when its turn comes, so quick
    // steps coalesce into fewer writes and the record is never behind the last boundary.
    if (this.#stepQueued.has(run)) return;
    this.#stepQueued.add(run);
    const write = (this.#writes.get(run) ?? Promise.resolve()).then(() => {
      this.#stepQueued.delete(run);
    });
    this.#writes.set(run, write);
    this.#persist(run, false, true).catch((error: unknown) =>
      this.#options.logger.warn({ err: error, runId: run.runId }, 'step status not published'),
    );
  }

  /** A record that could not be written: logged in full, and the caller told (`refusalOf`). */
  #refuse(run: LiveRun, error: unknown): never {
    this.#options.logger.error(
      { err: error, runId: run.runId },
      'could not persist the run record',
    );
    throw refusalOf(error);
  }

  /** Cancels a queued or working run; the view says `canceled` at once. */
  async cancel(runId: string, caller: Caller): Promise<RunView> {
    const run = await this.#find(runId, caller);
    const { state } = run.view;
    if (this.#shared && !run.leg && (state === 'working' || state === 'queued')) {
      // Executing on another replica (its lease is live, else the view says failed): it polls
      // this flag every 250 ms and stops at its next step boundary or blocking call.
      await this.#shared
        .put(cancelKey(runId), JSON.stringify({ by: this.#options.replica?.id, at: this.#iso() }))
        .catch((error: unknown) => this.#refuse(run, error));
      return {
        ...run.view,
        state: 'canceled',
        error: 'canceled by run/cancel',
        updatedAt: this.#iso(),
      };
    }
    if (run.leg) {
      run.leg.controller.abort(new Error('canceled by run/cancel'));
      run.timeline.end(this.#now(), 'canceled');
      const resumable = resumableAfter(run.workflow, 'canceled', true);
      this.#set(run, {
        state: 'canceled',
        error: 'canceled by run/cancel',
        ...(resumable ? { resumable: true as const } : {}),
      });
    } else if (run.view.state === 'paused' && this.#shared) {
      await this.#cancelPausedShared(this.#shared, run);
    } else if (run.view.state === 'paused') {
      const paused = run.view;
      this.#set(run, { state: 'canceled', error: 'canceled by run/cancel', resumable: true });
      run.finishedAt = this.#now();
      await this.#persist(run).catch((error: unknown) => {
        // Not recorded, so not cancelled: the run stays paused, as a restart would find it.
        run.view = paused;
        run.finishedAt = undefined;
        this.#changed(run.runId, 'view');
        this.#refuse(run, error);
      });
    }
    return run.view;
  }

  /**
   * Cancels a paused run on a shared store under its lease: a resume elsewhere takes the same
   * lease first, so either this write lands (and that resume then finds the record changed) or
   * the cancel reports `RUN_ACTIVE`; the record is also rechecked under the lease, so a run
   * resumed and paused again since it was read is not cancelled blind.
   */
  async #cancelPausedShared(shared: SharedStore, run: LiveRun): Promise<void> {
    const replica = this.#options.replica as { id: string; leaseTtlMs: number };
    const lease = await acquireLease(shared, run.runId, replica);
    if (lease === undefined) throw elsewhere(run.runId);
    const paused = run.view;
    try {
      const now = await readRecord(shared, run.runId);
      if (now?.view.state !== 'paused' || now.view.updatedAt !== paused.updatedAt)
        throw elsewhere(run.runId);
      this.#set(run, { state: 'canceled', error: 'canceled by run/cancel', resumable: true });
      run.finishedAt = this.#now();
      const record = { key: recordKey(run.runId), value: JSON.stringify(this.#record(run)) };
      if (!(await shared.fence.writeFenced([record], lease, { release: true })))
        throw elsewhere(run.runId);
    } catch (error) {
      if (run.view !== paused) {
        run.view = paused;
        run.finishedAt = undefined;
        this.#changed(run.runId, 'view');
      }
      await shared.lease.release(lease).catch(() => {
        // It lapses after the TTL anyway.
      });
      if (error instanceof RunError) throw error;
      this.#refuse(run, error);
    }
  }

  /** The caller's runs, sorted by id. */
  list(caller: Caller): RunView[] {
    return this.#table
      .owned(caller.owner)
      .map((run) => run.view)
      .sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  }

  /** The caller's runs on every replica sharing the store (else `list`), sorted by id. */
  async listAll(caller: Caller): Promise<RunView[]> {
    const local = this.list(caller);
    if (!this.#shared) return local;
    let records: RunRecord[];
    try {
      records = await ownedRecords(this.#shared, caller.owner);
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'could not list the runs in the store');
      return local;
    }
    const views = new Map(local.map((view) => [view.runId, view]));
    for (const record of records) {
      const id = record.view.runId;
      if (this.#table.get(id)?.leg) continue;
      const workflow = this.#options.catalog.workflows.get(record.workflow);
      if (!workflow) continue;
      const inFlight = record.view.state === 'working' || record.view.state === 'queued';
      const read = inFlight
        ? await readWithLease(this.#shared, id).catch(() => undefined)
        : { record, live: undefined };
      if (read?.record) views.set(id, remoteView(read.record, workflow, read.live));
    }
    return [...views.values()].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  }

  /**
   * One of the caller's held runs, for a viewer, or undefined: decided exactly as `list`
   * decides (the owner index), so a viewer sees the runs `list` lists and no others, and
   * never claims a released run by looking at it.
   */
  peek(runId: string, caller: Caller): RunPeek | undefined {
    const run = this.#table.get(runId);
    return run !== undefined && run.owner === caller.owner ? peekOf(run) : undefined;
  }

  async logs(
    runId: string,
    since: number,
    caller: Caller,
  ): Promise<{ runId: string; text: string; nextSince: number; dropped?: true }> {
    const run = await this.#find(runId, caller);
    const slice = run.log.read(since);
    return {
      runId,
      text: slice.text,
      nextSince: slice.nextSince,
      ...(slice.dropped ? { dropped: true as const } : {}),
    };
  }

  /**
   * First half of shutdown: refuses new starts and resumes from now on (one whose record is
   * being written still begins, and `cancelAll` stops it), then lets working runs finish for up
   * to `drainMs` (`--drain-timeout`).
   */
  async drain(drainMs: number): Promise<void> {
    this.#draining = true;
    const legs = this.#legs();
    if (drainMs <= 0 || legs.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(legs.map((leg) => leg.done)),
      new Promise((done) => {
        timer = setTimeout(done, drainMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Second half: cancels every run still in flight and waits for each to stop (and persist). */
  async cancelAll(): Promise<void> {
    this.#draining = true;
    const legs = this.#legs();
    for (const leg of legs) leg.controller.abort(new Error('the server is shutting down'));
    await Promise.all(legs.map((leg) => leg.done));
    clearInterval(this.#cancelPoll);
    this.#cancelPoll = undefined;
  }

  #legs(): NonNullable<LiveRun['leg']>[] {
    return [...this.#table.values()].flatMap((run) => (run.leg ? [run.leg] : []));
  }

  /**
   * Forgets finished runs older than the terminal TTL and deletes their state, and deletes the
   * finished runs earlier processes left in the store.
   */
  async sweep(): Promise<number> {
    const ttl = this.#options.terminalTtlMs ?? DEFAULT_TERMINAL_TTL_MS;
    const cutoff = this.#now() - ttl;
    let swept = 0;
    if (this.#shared) return this.#sweepShared(cutoff, ttl);
    for (const run of [...this.#table.values()]) {
      if (run.finishedAt === undefined || run.finishedAt > cutoff || run.leg) continue;
      if (!TERMINAL_STATES.has(run.view.state)) continue;
      if (await this.#forget(run)) swept++;
    }
    await this.#indexed;
    const held = (id: string) => this.#table.get(id) !== undefined;
    const stored = await sweepStoredRuns(this.#options.store, cutoff, held, {
      forget: (runId) => this.#table.removeStored(runId),
      warn: (runId, error) =>
        this.#options.logger.warn({ err: error, runId }, 'could not delete run state'),
    });
    return swept + stored;
  }

  /**
   * Housekeeping on a shared store: finished runs are only forgotten here (another replica may
   * have resumed one since), and the store's terminal runs past the TTL are purged in bounded
   * batches by whichever replica gets to them first; the pending gauge is refreshed.
   */
  async #sweepShared(cutoff: number, ttl: number): Promise<number> {
    const shared = this.#shared as SharedStore;
    for (const run of [...this.#table.values()]) {
      if (run.finishedAt === undefined || run.finishedAt > cutoff || run.leg) continue;
      if (TERMINAL_STATES.has(run.view.state)) this.#table.remove(run);
    }
    const holder = `${this.#options.replica?.id ?? 'replica'}/housekeeping`;
    const abandoned = await purgeAbandoned(shared, ttl, holder).catch((error: unknown) => {
      this.#options.logger.warn({ err: error }, 'could not purge abandoned runs');
      return [] as string[];
    });
    if (abandoned.length > 0)
      this.#options.logger.info({ runs: abandoned.length }, 'abandoned runs purged');
    const terminal = await purgeTerminal(shared, cutoff);
    const gone = [...terminal, ...abandoned];
    for (const runId of gone) {
      const held = this.#table.get(runId);
      if (held && !held.leg) this.#table.remove(held);
    }
    this.#pending = await countPending(shared);
    if (terminal.length > 0)
      this.#options.logger.info({ runs: terminal.length }, 'finished runs purged');
    return gone.length;
  }

  /**
   * Makes the runs of `owner` claimable: its session ended, and nobody can present that owner
   * again. They keep running and stay retained as before; the first caller to name one claims
   * it, as after a restart. Resolves to how many runs it released.
   */
  release(owner: string): number {
    if (this.#shared) {
      // On a shared store the claim key decides (`run-claim.ts`); memory keeps the owner, so
      // every record write still names it and nothing else makes the run reachable.
      const shared = this.#shared;
      releaseShared(shared, owner)
        .then((runs) => {
          if (runs > 0) this.#options.logger.info({ owner, runs }, 'runs released');
        })
        .catch((error: unknown) =>
          this.#options.logger.warn(
            { err: error, owner },
            'could not release the runs of a session',
          ),
        );
      return this.#table.owned(owner).length;
    }
    const released = this.#table.orphan(owner);
    if (released > 0) this.#options.logger.info({ owner, runs: released }, 'runs released');
    return released;
  }

  /**
   * Forgets a finished run and deletes its state: unknown to everyone from the first line on.
   * False when it was already forgotten.
   */
  async #forget(run: LiveRun): Promise<boolean> {
    if (!this.#table.remove(run)) return false;
    await this.#deleteState(run.runId);
    return true;
  }

  #deleteState(runId: string): Promise<void> {
    return deleteRun(this.#options.store, runId).catch((error: unknown) =>
      this.#options.logger.warn({ err: error, runId }, 'could not delete run state'),
    );
  }

  /**
   * The caller's run, live or rebuilt from the store; anyone else's is `unknownRun`. Whether
   * the caller may reach the run is decided from the owner index alone, before anything of the
   * run is touched: a foreign id and an unknown one take the same steps to the same error.
   * Only when the start-up scan failed, or could not read this id's record, is a run missing
   * from the index looked for in the store (its record then says whose it is).
   */
  async #find(runId: string, caller: Caller): Promise<LiveRun> {
    if (typeof runId !== 'string' || !/^[0-9a-f]{32}$/.test(runId)) throw unknownRun();
    if (this.#shared) return this.#findShared(this.#shared, runId, caller);
    await this.#indexed;
    const reach = this.#table.reach(runId, caller.owner) ?? this.#unindexed(runId);
    if (reach === undefined) throw unknownRun();
    if (reach === 'live') return this.#claim(runId, caller);
    const record = await readRecord(this.#options.store, runId).catch(() => undefined);
    // While it was read, another caller may have claimed it, or the sweep deleted it.
    const now = this.#table.reach(runId, caller.owner) ?? this.#unindexed(runId);
    if (now === undefined) throw unknownRun();
    if (now === 'live') return this.#claim(runId, caller);
    const workflow = record && this.#options.catalog.workflows.get(record.workflow);
    if (!record || !workflow) throw unknownRun();
    if (record.principalOwner !== undefined && record.principalOwner !== caller.owner)
      throw unknownRun();
    // A read may take its key over the quota (the next start makes room), never the table.
    if (this.#table.size >= this.#limits.runs) throw busy('runs are held in memory');
    const run = reclaimedRun(this.#host, record, workflow, caller, this.#newLog(runId));
    this.#table.add(run);
    return run;
  }

  /**
   * On a shared store: a run executing here is answered from memory; any other is read afresh
   * from the store (its owner recorded there decides who may reach it), its view rebuilt, and
   * held (refreshed at each look) so its logs and resources resolve like a local run's.
   */
  async #findShared(shared: SharedStore, runId: string, caller: Caller): Promise<LiveRun> {
    const local = this.#table.get(runId);
    if (local?.leg) {
      if (!(await this.#reachable(shared, local, local.owner ?? undefined, caller)))
        throw unknownRun();
      return local;
    }
    const { record, live } = await readWithLease(shared, runId).catch((error: unknown) =>
      this.#refuse({ runId } as LiveRun, error),
    );
    const workflow = record && this.#options.catalog.workflows.get(record.workflow);
    if (!record || !workflow) throw unknownRun();
    const owner = record.owner ?? record.principalOwner;
    if (!(await this.#reachable(shared, { runId }, owner, caller))) throw unknownRun();
    const view = remoteView(record, workflow, live);
    const held = this.#table.get(runId);
    // A leg may have started here while the record was read: memory is then the truth.
    if (held?.leg) return this.#findShared(shared, runId, caller);
    if (held) {
      if (held.owner !== caller.owner) this.#table.setOwner(held, caller.owner, caller.quota);
      held.view = view;
      held.arguments = record.arguments;
      held.finishedAt = TERMINAL_STATES.has(view.state)
        ? (held.finishedAt ?? this.#now())
        : undefined;
      return held;
    }
    if (this.#table.size >= this.#limits.runs) throw busy('runs are held in memory');
    const run = reclaimedRun(this.#host, record, workflow, caller, this.#newLog(runId));
    run.view = view;
    run.finishedAt = TERMINAL_STATES.has(view.state) ? this.#now() : undefined;
    this.#table.add(run);
    return run;
  }

  /**
   * On a shared store: whether `caller` may reach the run `owner` owns; a released run is
   * reachable only through its claim, one compare-and-swap in the store (`run-claim.ts`), so
   * of callers on several replicas exactly one gets it. A held copy takes the claimant as owner.
   */
  async #reachable(
    shared: SharedStore,
    run: Pick<LiveRun, 'runId'>,
    owner: string | undefined,
    caller: Caller,
  ): Promise<boolean> {
    if (owner !== undefined && owner === caller.owner) return true;
    const claimed = await claimRun(shared, run.runId, owner, caller.owner).catch((error: unknown) =>
      this.#refuse(run as LiveRun, error),
    );
    if (claimed === 'foreign') return false;
    const held = this.#table.get(run.runId);
    if (held && held.owner !== caller.owner) this.#table.setOwner(held, caller.owner, caller.quota);
    if (claimed === 'claimed')
      this.#options.logger.info({ runId: run.runId, owner: caller.owner }, 'run claimed');
    return true;
  }

  /** 'stored' for an id the index cannot vouch for: the scan failed, or could not read it. */
  #unindexed(runId: string): 'stored' | undefined {
    if (!this.#scanFailed && !this.#table.unread(runId)) return undefined;
    if (this.#table.has(runId)) return undefined;
    this.#options.logger.info({ runId }, 'run not in the index; looking for its record');
    return 'stored';
  }

  /**
   * A held run the caller may reach: its own, or one whose session ended, which it claims now,
   * over its quota if need be: a read never forgets the caller's runs nor is refused for them.
   */
  #claim(runId: string, caller: Caller): LiveRun {
    const run = this.#table.get(runId) as LiveRun;
    if (run.owner !== null) return run;
    this.#table.setOwner(run, caller.owner, caller.quota);
    this.#options.logger.info({ runId, owner: caller.owner }, 'run claimed');
    return run;
  }

  #set(
    run: LiveRun,
    fields: Partial<Omit<RunView, 'runId' | 'tool' | 'startedAt'>> & { state?: RunState },
  ): void {
    run.view = { ...run.view, ...fields, updatedAt: this.#iso() };
    this.#changed(run.runId, 'view');
  }

  #changed(runId: string, kind: RunChangeKind): void {
    this.changes.publish({ runId, kind });
  }

  #newLog(runId: string): RunLog {
    return new RunLog(undefined, () => this.#changed(runId, 'log'));
  }

  /**
   * `final`: the leg's last record, which ends its lease too; `advisory`: a step boundary's
   * status, which the store may commit without waiting for its log flush (the step's
   * checkpoint, written durably, is what a resume reads).
   */
  #persist(run: LiveRun, final = false, advisory = false): Promise<void> {
    if (!this.#shared) return writeRecord(this.#options.store, this.#record(run));
    // One after another per run, so a step's status can never land after the terminal one.
    const write = (this.#writes.get(run) ?? Promise.resolve())
      .catch(() => {})
      .then(() => this.#writeShared(this.#shared as SharedStore, run, final, advisory));
    this.#writes.set(
      run,
      write.catch(() => {}),
    );
    return write;
  }

  async #writeShared(
    shared: SharedStore,
    run: LiveRun,
    final: boolean,
    advisory: boolean,
  ): Promise<void> {
    const record = this.#record(run);
    const lease = run.lease;
    if (lease === undefined) return writeRecord(shared, record);
    const written =
      !lease.lost &&
      (final
        ? await shared.fence.writeFenced(
            [{ key: recordKey(run.runId), value: JSON.stringify(record) }],
            lease.fence,
            { release: true },
          )
        : await writeRecordFenced(shared, record, lease.fence, !advisory));
    if (!written) {
      lease.lose();
      throw new Error(LEASE_LOST_MESSAGE);
    }
    if (final) lease.released();
  }

  #record(run: LiveRun): RunRecord {
    return {
      version: 1,
      workflow: run.workflow.name,
      arguments: run.arguments,
      ...(run.principalOwner !== undefined ? { principalOwner: run.principalOwner } : {}),
      digest: run.digest,
      view: run.view,
      ...(this.#shared ? sharedFields(run.owner, run.view) : {}),
    };
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

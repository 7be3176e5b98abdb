/**
 * One leg of an async run, apart from the registry's bookkeeping: once its record is written it
 * waits for a slot if it has none, executes the workflow, and ends the run in the state the leg
 * reached, persisted. The registry owns the run table; a leg only changes its own run, through
 * the `LegHost` the registry hands it.
 */
import type { Workflow } from '../catalog/index.js';
import type { Store } from '../store/index.js';
import { AdmissionClosedError, type Slot } from './admission.js';
import { type LegUpdate, runLeg } from './executor.js';
import type { RunLease } from './run-lease.js';
import type { RunLog } from './run-log.js';
import { reclaimedView, resumableAfter } from './run-policy.js';
import type { RunRecord } from './run-records.js';
import { type SpanOutcome, StepTimeline } from './step-timeline.js';
import {
  type Caller,
  type CheckedCall,
  messageOf,
  type RunRegistryOptions,
  type RunState,
  type RunView,
} from './types.js';

/** A run the registry holds (see `HeldRun` in `run-table.ts` for what the table reads). */
export interface LiveRun {
  readonly runId: string;
  readonly workflow: Workflow;
  /** Null once the owning session ended: the first caller to name the run claims it. */
  owner: string | null;
  /** Who it counts against for the quotas (`Caller.quota`): its starter's, then its claimer's. */
  quota: string;
  readonly principalOwner: string | undefined;
  arguments: Readonly<Record<string, unknown>>;
  readonly digest: string;
  view: RunView;
  readonly log: RunLog;
  /** The steps it entered and when, across its legs. */
  readonly timeline: StepTimeline;
  /** The leg in flight, with the controller that cancels it. */
  leg: { readonly controller: AbortController; readonly done: Promise<void> } | undefined;
  /** When it last reached a terminal state (for the sweep). */
  finishedAt: number | undefined;
  /** On a shared store, the execution lease its leg holds. */
  lease?: RunLease | undefined;
  /** The view a resume found, to check nobody changed the run before its lease was taken. */
  before?: RunView | undefined;
}

/** What a leg needs of the registry that holds its run. */
export interface LegHost {
  readonly options: RunRegistryOptions;
  /** Legs ended by state since start-up, counted by `finish`. */
  readonly endedBy: Record<'completed' | 'failed' | 'canceled' | 'paused', number>;
  set(
    run: LiveRun,
    fields: Partial<Omit<RunView, 'runId' | 'tool' | 'startedAt'>> & { state?: RunState },
  ): void;
  /** Publishes a change to the run's view made in place (its final state). */
  changed(run: LiveRun): void;
  /** `final`: the leg's last record, which gives its lease up in the same transaction. */
  persist(run: LiveRun, final?: boolean): Promise<void>;
  /** The store the leg's checkpoints go to (fenced on its lease on a shared store). */
  storeFor(run: LiveRun): Store;
  /** A step started: on a shared store its status is published (in the background). */
  stepped(run: LiveRun): void;
  /** The leg is over: its lease, if any, is released. */
  ended(run: LiveRun): Promise<void>;
  now(): number;
  iso(): string;
}

/**
 * Starts one leg in the background once `persisted` (the run's record) is written: it waits
 * for a slot if it has none, then executes. A leg never rejects: whatever goes wrong ends the
 * run `failed` (resumable), so shutdown, which awaits every leg, cannot stop halfway.
 */
export function launch(
  host: LegHost,
  run: LiveRun,
  checked: CheckedCall,
  resume: boolean,
  caller: Caller,
  slot: Slot | undefined,
  persisted: Promise<void>,
): void {
  const controller = new AbortController();
  const leg = { controller, done: Promise.resolve() };
  leg.done = persisted
    .then(
      () => runOneLeg(host, run, checked, resume, caller, slot, controller.signal),
      // Not written, so the run does not exist (or its resume never happened): the caller is
      // told, and nothing is finished or persisted here.
      () => slot?.release(),
    )
    .catch((error: unknown) => {
      host.options.logger.error({ err: error, runId: run.runId }, 'run leg failed');
      return finish(host, run, { state: 'failed', error: messageOf(error), resumable: true });
    })
    .then(() => host.ended(run))
    .finally(() => {
      if (run.leg === leg) run.leg = undefined;
    });
  run.leg = leg;
}

async function runOneLeg(
  host: LegHost,
  run: LiveRun,
  checked: CheckedCall,
  resume: boolean,
  caller: Caller,
  held: Slot | undefined,
  signal: AbortSignal,
): Promise<void> {
  let slot = held;
  if (!slot) {
    try {
      slot = await host.options.admission.acquire(signal);
    } catch (error) {
      const why =
        error instanceof AdmissionClosedError ? 'the server is shutting down' : messageOf(error);
      await finish(host, run, { state: 'canceled', error: why, resumable: true }, false);
      return;
    }
    host.set(run, { state: 'working' });
    await host.persist(run).catch(() => {});
  }
  try {
    if (signal.aborted) {
      // Cancelled (or shut down) while its record was written: nothing ran.
      await finish(
        host,
        run,
        { state: 'canceled', error: messageOf(signal.reason), resumable: true },
        false,
      );
      return;
    }
    const running = runLeg({
      workflow: run.workflow,
      runId: run.runId,
      inputs: checked.inputs,
      cwd: checked.cwd,
      ...(checked.timeoutMs !== undefined ? { timeoutMs: checked.timeoutMs } : {}),
      ...(checked.credentials !== undefined ? { credentials: checked.credentials } : {}),
      resume,
      ...(caller.principal !== undefined ? { principal: caller.principal } : {}),
      signal,
      store: host.storeFor(run),
      services: host.options.services,
      log: run.log,
      logger: host.options.logger.child({ runId: run.runId }),
      onStep: (step, index, total) => {
        run.timeline.enter(step, index, host.now());
        const reached = run.view.reached ?? [];
        host.set(run, {
          step,
          stepIndex: index,
          stepTotal: total,
          reached: reached.includes(step) ? reached : [...reached, step],
        });
        host.stepped(run);
      },
    });
    // The slot bounds execution: free it before the terminal state is published, so a
    // caller that sees the run end also sees its slot free (release is idempotent).
    const update = await running.finally(() => slot.release());
    await finish(host, run, update);
  } finally {
    slot.release();
  }
}

/**
 * A run rebuilt from its record for `caller`, who now holds it: one that was in flight when its
 * process died is now `failed` (`reclaimedView`).
 */
export function reclaimedRun(
  host: LegHost,
  record: RunRecord,
  workflow: Workflow,
  caller: Caller,
  log: RunLog,
): LiveRun {
  const view = reclaimedView(record.view, workflow, host.iso());
  const run: LiveRun = {
    runId: record.view.runId,
    workflow,
    owner: caller.owner,
    quota: caller.quota,
    principalOwner: record.principalOwner,
    arguments: record.arguments,
    digest: record.digest,
    view,
    log,
    timeline: new StepTimeline(),
    leg: undefined,
    finishedAt: host.now(),
  };
  host.options.logger.info(
    { runId: run.runId, owner: caller.owner, state: view.state },
    'run reclaimed',
  );
  return run;
}

/** How the step a leg stopped in ended, by the state the leg ended in. */
const SPAN_OUTCOMES: Partial<Record<RunState, SpanOutcome>> = {
  completed: 'done',
  failed: 'failed',
  canceled: 'canceled',
  paused: 'paused',
};

/** Ends a leg; `ran` is false when the leg stopped before running anything. */
export async function finish(
  host: LegHost,
  run: LiveRun,
  update: LegUpdate,
  ran = true,
): Promise<void> {
  const { resumable, ...fields } = update;
  // The step a run stopped in started too, though the runner counts only finished ones.
  const current = run.view.step;
  if (
    fields.reached &&
    current !== undefined &&
    fields.state !== 'completed' &&
    !fields.reached.includes(current)
  )
    fields.reached = [...fields.reached, current];
  const { error: _e, errorCode: _c, reason: _r, vars: _v, resumable: _s, ...rest } = run.view;
  const canResume =
    resumable === true && (!ran || resumableAfter(run.workflow, fields.state, true));
  run.view = {
    ...rest,
    ...fields,
    ...(canResume ? { resumable: true as const } : {}),
    updatedAt: host.iso(),
  };
  const outcome = SPAN_OUTCOMES[run.view.state];
  if (outcome !== undefined) run.timeline.end(host.now(), outcome);
  host.changed(run);
  if (run.view.state !== 'paused') run.finishedAt = host.now();
  const ended = run.view.state;
  if (ended === 'completed' || ended === 'failed' || ended === 'canceled' || ended === 'paused')
    host.endedBy[ended]++;
  host.options.logger.info(
    { runId: run.runId, owner: run.owner, state: run.view.state },
    'run ended',
  );
  await host
    .persist(run, true)
    .catch((error: unknown) =>
      host.options.logger.error(
        { err: error, runId: run.runId },
        'could not persist the run record',
      ),
    );
}

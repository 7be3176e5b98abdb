/**
 * `advanceSession`: the one way a session changes (seed 004 §5–§6). The mutator edits the
 * session in place and appends history events; `seq` goes up by one, `ts` refreshes, a child
 * reaching `completed` marks its entry in the parent (the file holds both), and the root file
 * is written and resealed. History events are built here, from the closed list only.
 */

import { setOwn } from './safe-keys.js';
import type { HistoryEntry, HistoryType, SessionFile } from './session.schema.js';
import type { SessionHandle, SessionStore } from './session-store.js';

/** The clock sessions are stamped with (injected in tests). */
export interface Clock {
  now(): Date;
}

export const SYSTEM_CLOCK: Clock = { now: () => new Date() };

/** One history event of `type`, stamped now. */
export function historyEvent(
  clock: Clock,
  type: HistoryType,
  fields: Omit<HistoryEntry, 'timestamp' | 'type'> = {},
): HistoryEntry {
  return { timestamp: clock.now().toISOString(), type, ...fields };
}

/**
 * Applies `mutate` to the session of `handle` and persists the root file, resealed.
 * Resolves once both files are on disk.
 */
export async function advanceSession(
  store: SessionStore,
  handle: SessionHandle,
  clock: Clock,
  mutate: (state: SessionFile) => void,
): Promise<void> {
  const { state } = handle;
  const wasCompleted = state.status === 'completed';
  mutate(state);
  state.seq += 1;
  state.ts = Math.floor(clock.now().getTime() / 1000);
  if (!wasCompleted && state.status === 'completed' && handle.parent !== undefined) {
    notifyParent(handle.parent, state, clock);
  }
  await store.save(handle.folder, handle.root);
}

/** Best effort: the parent's entry for this child becomes completed, with `workflow_returned`. */
function notifyParent(parent: SessionFile, child: SessionFile, clock: Clock): void {
  const entry = parent.triggeredWorkflows.find((t) => t.sessionIndex === child.sessionIndex);
  if (entry === undefined) return;
  entry.status = 'completed';
  entry.completedAt = clock.now().toISOString();
  parent.history.push(
    historyEvent(clock, 'workflow_returned', {
      data: { sessionIndex: child.sessionIndex, workflowId: child.workflowId },
    }),
  );
}

/** A variable's JSON type, as warnings name it. */
export function valueType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}

/**
 * Writes `values` into the bag with one `variable_set` event each, returning the type warnings
 * (declared types are advice: the value is stored as written either way).
 */
export function writeVariables(
  state: SessionFile,
  values: Readonly<Record<string, unknown>>,
  declared: ReadonlyMap<string, string>,
  source: 'setVariable' | 'variables_changed',
  clock: Clock,
  activity: string | undefined,
): string[] {
  const warnings: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    setOwn(state.variables, name, value);
    const declaredType = declared.get(name);
    const actual = valueType(value);
    const template = typeof value === 'string' && /^\{[^{}]+\}$/.test(value);
    const mismatch = declaredType !== undefined && !template && actual !== declaredType;
    const data: Record<string, unknown> = { name, value, source };
    if (declaredType !== undefined) {
      data['declaredType'] = declaredType;
      data['valueType'] = actual;
    }
    if (mismatch) {
      data['typeMismatch'] = true;
      warnings.push(
        `${source} '${name}': value is ${actual} but the variable is declared ${declaredType}; stored as written.`,
      );
    }
    state.history.push(
      historyEvent(
        clock,
        'variable_set',
        activity === undefined || activity === '' ? { data } : { activity, data },
      ),
    );
  }
  return warnings;
}

/**
 * Appends `step_started` for (activity, step, agent) unless the history already has it: the
 * spec allows at most one per triple (§2.6), however often the step's technique is fetched.
 */
export function startStep(
  state: SessionFile,
  clock: Clock,
  activity: string,
  stepId: string,
  agentId: string,
): void {
  const seen = state.history.some(
    (e) =>
      e.type === 'step_started' &&
      e.activity === activity &&
      e.data?.['stepId'] === stepId &&
      e.data['agentId'] === agentId,
  );
  if (!seen)
    state.history.push(
      historyEvent(clock, 'step_started', { activity, data: { stepId, agentId } }),
    );
}

/**
 * Records a fresh `activity_dispatched` for `scope` when it has none: an out-of-band dispatch
 * may never call get_activity, so its first content fetch under its own agent id is what
 * announces it (without `chars`, so the batch counts nothing for it).
 */
export function recordFirstArrival(state: SessionFile, clock: Clock, scope: string): void {
  const seen = state.history.some(
    (e) => e.type === 'activity_dispatched' && e.data?.['agentId'] === scope,
  );
  if (seen) return;
  state.history.push(
    historyEvent(clock, 'activity_dispatched', {
      ...(state.currentActivity ? { activity: state.currentActivity } : {}),
      data: { agentId: scope, dispatch: 'fresh' },
    }),
  );
}

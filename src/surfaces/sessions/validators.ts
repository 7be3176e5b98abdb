/**
 * The fidelity checks of `next_activity` (seed 004 §4): only the transition check can block (an
 * activity that does not exist); every other finding is a warning carried in `_meta.validation`
 * and the trace. The warning texts are the public server's, so agents read the same advice.
 * Pure over the definition and the session's history.
 */
import { conditionText } from './definition/condition.js';
import type { Activity } from './definition/definition.schema.js';
import {
  checkpointSteps,
  findActivity,
  flattenSteps,
  TERMINAL,
  techniqueRef,
  type Workflow,
} from './definition/loader.js';
import type { HistoryEntry, SessionFile } from './store/session.schema.js';

export interface Validation {
  status: 'valid' | 'warning';
  warnings: string[];
}

/** `{status, warnings}` of a list of findings. */
export function validation(warnings: readonly (string | null | undefined)[]): Validation {
  const list = warnings.filter((w): w is string => typeof w === 'string' && w !== '');
  return { status: list.length > 0 ? 'warning' : 'valid', warnings: list };
}

/** Targets an activity may move to: transitions, decision branches, checkpoint effects. */
export function legalTargets(activity: Activity): string[] {
  const out: string[] = [];
  for (const t of activity.transitions ?? []) out.push(t.to);
  for (const d of activity.decisions ?? [])
    for (const b of d.branches) if (b.transitionTo) out.push(b.transitionTo);
  for (const c of checkpointSteps(activity)) {
    for (const o of c.options ?? []) if (o.effect?.transitionTo) out.push(o.effect.transitionTo);
  }
  return [...new Set(out)];
}

interface TransitionEntry {
  to: string;
  condition?: string | undefined;
  isDefault?: boolean | undefined;
}

/** The transitions of an activity with their condition texts (§1.10). */
export function transitionList(activity: Activity): TransitionEntry[] {
  const out: TransitionEntry[] = [];
  const seen = new Set<string>();
  for (const t of activity.transitions ?? []) {
    out.push({
      to: t.to,
      condition: t.condition ? conditionText(t.condition) : undefined,
      isDefault: t.isDefault || undefined,
    });
    seen.add(t.to);
  }
  for (const d of activity.decisions ?? []) {
    for (const b of d.branches) {
      if (!b.transitionTo || seen.has(b.transitionTo)) continue;
      out.push({
        to: b.transitionTo,
        condition: b.condition ? conditionText(b.condition) : undefined,
        isDefault: b.isDefault || undefined,
      });
      seen.add(b.transitionTo);
    }
  }
  for (const c of checkpointSteps(activity)) {
    for (const o of c.options ?? []) {
      const to = o.effect?.transitionTo;
      if (!to || seen.has(to)) continue;
      out.push({ to, condition: `checkpoint:${c.id}:${o.id}` });
      seen.add(to);
    }
  }
  return out;
}

/** Warns when the target is not a declared move from the current activity. */
export function checkTransition(state: SessionFile, wf: Workflow, target: string): string | null {
  if (!state.currentActivity) {
    if (wf.initialActivity && target !== wf.initialActivity) {
      return `First activity must be '${wf.initialActivity}' but '${target}' was requested. Start with the workflow's initialActivity.`;
    }
    return null;
  }
  if (state.currentActivity === target || target === TERMINAL) return null;
  const current = findActivity(wf, state.currentActivity);
  const valid = current === undefined ? [] : legalTargets(current);
  if (valid.length === 0 || valid.includes(target)) return null;
  return `Activity '${target}' is not a direct transition from '${state.currentActivity}'. Valid transitions: [${valid.join(', ')}]`;
}

/** Warns when the definition's version moved since the session started. */
export function checkVersion(state: SessionFile, wf: Workflow): string | null {
  if (state.workflowVersion && wf.version && state.workflowVersion !== wf.version) {
    return `Workflow version drift: session started with v${state.workflowVersion} but current definition is v${wf.version}. Workflow may have changed mid-session.`;
  }
  return null;
}

export interface StepReport {
  step_id: string;
  output: string;
}

/** Warns about a step manifest that misses, invents or reorders steps, or has empty outputs. */
export function checkStepManifest(
  manifest: readonly StepReport[],
  wf: Workflow,
  activityId: string,
): string[] {
  const activity = findActivity(wf, activityId);
  if (activity === undefined)
    return [`Cannot validate manifest: activity '${activityId}' not found`];
  const steps = activity.steps ?? [];
  if (steps.length === 0) return [];
  const top = steps.map((s) => s.id).filter((id): id is string => id !== undefined);
  const required = steps
    .filter((s) => s.when === undefined && s.condition === undefined)
    .map((s) => s.id);
  const known = new Set(flattenSteps(steps).map((s) => s.id));
  const ids = manifest.map((m) => m.step_id);
  const given = new Set(ids);
  const warnings: string[] = [];
  const missing = required.filter((id): id is string => id !== undefined && !given.has(id));
  if (missing.length > 0) warnings.push(`Missing steps in manifest: [${missing.join(', ')}]`);
  const unexpected = ids.filter((id) => !known.has(id));
  if (unexpected.length > 0)
    warnings.push(`Unexpected steps in manifest: [${unexpected.join(', ')}]`);
  const order = new Map(top.map((id, i) => [id, i] as const));
  let prev: string | undefined;
  let prevAt = -1;
  for (const id of ids) {
    const at = order.get(id);
    if (at === undefined) continue;
    if (prev !== undefined && at < prevAt) {
      warnings.push(`Step order mismatch: '${id}' reported after '${prev}' but declared before it`);
    }
    prev = id;
    prevAt = at;
  }
  for (const m of manifest)
    if (!m.output || m.output.trim() === '') warnings.push(`Step '${m.step_id}' has empty output`);
  return warnings;
}

/** Warns about technique steps reported done with no fetch or bundling in this visit. */
export function checkTechniqueFetches(
  manifest: readonly StepReport[],
  wf: Workflow,
  activityId: string,
  history: readonly HistoryEntry[],
  agentId?: string,
): string[] {
  const activity = findActivity(wf, activityId);
  if (activity === undefined) return [];
  const claimed = new Set(manifest.map((m) => m.step_id));
  const steps = flattenSteps(activity.steps).filter(
    (s) => s.kind === 'technique' && s.id !== undefined && claimed.has(s.id),
  );
  if (steps.length === 0) return [];
  let start = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const e = history[i];
    if (e?.type === 'activity_entered' && e.activity === activityId) {
      start = i + 1;
      break;
    }
  }
  const stepIds = new Set<string>();
  const techIds = new Set<string>();
  for (const e of history.slice(start)) {
    if (
      (e.type !== 'technique_fetched' && e.type !== 'technique_bundled') ||
      e.activity !== activityId
    )
      continue;
    const d = e.data as { stepId?: unknown; techniqueId?: unknown; agentId?: unknown } | undefined;
    if (agentId !== undefined && d?.agentId !== agentId) continue;
    if (typeof d?.stepId === 'string') stepIds.add(d.stepId);
    if (typeof d?.techniqueId === 'string') techIds.add(d.techniqueId);
  }
  const unfetched = steps
    .filter((s) => {
      if (stepIds.has(s.id as string)) return false;
      const ref = techniqueRef(s);
      return !(ref && (techIds.has(ref) || techIds.has(`${activityId}::${ref}`)));
    })
    .map((s) => s.id as string);
  if (unfetched.length === 0) return [];
  return [
    `Technique steps reported complete without an in-session technique fetch: [${unfetched.join(', ')}]. ` +
      `No get_technique call for these steps was recorded during this activity — fetch each step's technique with get_technique { step_id } before executing it, so the step runs against its composed technique content.`,
  ];
}

/** Warns when the claimed transition condition does not match the definition's. */
export function checkCondition(
  state: SessionFile,
  wf: Workflow,
  target: string,
  claimed: string | undefined,
): string | null {
  if (!state.currentActivity || state.currentActivity === target) return null;
  const current = findActivity(wf, state.currentActivity);
  const list = current === undefined ? [] : transitionList(current);
  const match = list.find((t) => t.to === target);
  if (match === undefined) return null;
  const empty = claimed === undefined || claimed === '';
  if (empty || claimed === 'default') {
    if (match.isDefault || !match.condition) return null;
    return `Transition to '${target}' requires condition '${match.condition}' but agent claimed ${claimed === 'default' ? "'default'" : 'no condition'}.`;
  }
  if (match.isDefault && !match.condition) {
    return `Transition to '${target}' is the default (no condition) but agent claimed condition '${claimed}'.`;
  }
  if (match.condition && match.condition !== claimed) {
    return `Condition mismatch for transition to '${target}': workflow defines '${match.condition}' but agent claimed '${claimed}'.`;
  }
  return null;
}

export interface ActivityReport {
  activity_id: string;
  outcome: string;
  transition_condition?: string | undefined;
}

/** Warns about an activity manifest that names unknown activities or conditions. */
export function checkActivityManifest(manifest: readonly ActivityReport[], wf: Workflow): string[] {
  const warnings: string[] = [];
  for (const m of manifest) {
    const activity = findActivity(wf, m.activity_id);
    if (activity === undefined)
      warnings.push(`Activity manifest references unknown activity '${m.activity_id}'`);
    if (!m.outcome || m.outcome.trim() === '')
      warnings.push(`Activity '${m.activity_id}' has empty outcome`);
    if (activity !== undefined && m.transition_condition) {
      const list = transitionList(activity);
      const ok = list.some(
        (t) =>
          t.condition === m.transition_condition ||
          (t.isDefault && m.transition_condition === 'default'),
      );
      if (!ok && list.length > 0) {
        warnings.push(
          `Activity '${m.activity_id}' claims transition condition '${m.transition_condition}' not found in workflow transitions`,
        );
      }
    }
  }
  return warnings;
}

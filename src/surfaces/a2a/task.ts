/**
 * Tasks are runs: the version-neutral view of one run as an A2A task (its lifecycle state, the
 * status text, the result), which each wire codec then spells its own way. A2A reports the
 * lifecycle only, never the current step: for steps and logs, the run's owner uses `run/*`.
 */
import type { RunState, RunView } from '../../runs/index.js';

/** The A2A task states a run can be in (lowercase, the 0.3 spelling). */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'input-required';

/** One run as a task, before encoding. */
export interface TaskSnapshot {
  /** The run id: a task id is a run id, and the task's context id too. */
  readonly id: string;
  /** The workflow (the skill id). */
  readonly skill: string;
  readonly state: TaskState;
  /** When the run last changed (ISO 8601). */
  readonly timestamp: string;
  /** The agent's status text: the error of a failed or canceled run, a pause's reason. */
  readonly text?: string;
  /** The output projection of a completed run (redacted). */
  readonly result?: Readonly<Record<string, unknown>>;
}

const STATE_OF: Readonly<Record<RunState, TaskState>> = {
  pending: 'submitted',
  claimed: 'submitted',
  queued: 'submitted',
  working: 'working',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  // A paused workflow waits for its caller's inputs: a follow-up message resumes it.
  paused: 'input-required',
};

/** The task a run view is. */
export function taskOf(view: RunView): TaskSnapshot {
  const state = STATE_OF[view.state];
  const text = state === 'input-required' ? (view.reason ?? 'paused') : view.error;
  return {
    id: view.runId,
    skill: view.tool,
    state,
    timestamp: view.updatedAt,
    ...(text !== undefined ? { text } : {}),
    ...(state === 'completed' && view.vars !== undefined ? { result: view.vars } : {}),
  };
}

/** True for the states a task never leaves by itself. */
export function isTerminal(state: TaskState): boolean {
  return state === 'completed' || state === 'failed' || state === 'canceled';
}

/** True once a blocking send may answer: terminal, or interrupted (waiting for input). */
export function isSettled(state: TaskState): boolean {
  return isTerminal(state) || state === 'input-required';
}

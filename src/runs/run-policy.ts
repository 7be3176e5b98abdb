/**
 * The run registry's rules, apart from its bookkeeping: the limits on runs and arguments, when a
 * finished run can be resumed, and the errors a refused request gets. Pure: no state, no I/O.
 */

import type { Workflow } from '../catalog/index.js';
import { ArgumentError } from './argument-error.js';
import { RunError, type RunState, type RunView, TERMINAL_STATES } from './types.js';

/** Arguments are persisted with the run, so they are capped (seed 000). */
export const MAX_RUN_ARGUMENTS_BYTES = 256 * 1024;
/** How long a finished run stays pollable. */
export const DEFAULT_TERMINAL_TTL_MS = 60 * 60 * 1000;
/**
 * Runs held in memory at most (each up to 256 KiB of arguments and a 64 KiB log, kept an hour
 * after it ends), and runs waiting for a slot at most: past either, a start is refused as busy.
 */
export const MAX_RUNS = 10_000;
export const MAX_QUEUED_RUNS = 1_000;
/**
 * What one caller may hold of those (`--max-runs-per-caller`, `--max-queued-per-caller`): a tenth
 * of the table and a quarter of the queue (room for one client's burst of a few hundred), so
 * no caller can fill either for the others (issue 18). A caller is its quota key
 * (`quotaKeyOf`): its principal, else over HTTP its address block (all its sessions and
 * stateless requests together), else its owner.
 */
export const DEFAULT_RUNS_PER_CALLER = 1_000;
export const DEFAULT_QUEUED_PER_CALLER = 250;

/** The run limits in force: server-wide and per caller. */
export interface Limits {
  readonly runs: number;
  readonly queued: number;
  readonly runsPerCaller: number;
  readonly queuedPerCaller: number;
}

/** The limits `options` asks for, the defaults for the rest. */
export function limitsOf(options: Partial<Limits> | undefined): Limits {
  return {
    runs: options?.runs ?? MAX_RUNS,
    queued: options?.queued ?? MAX_QUEUED_RUNS,
    runsPerCaller: options?.runsPerCaller ?? DEFAULT_RUNS_PER_CALLER,
    queuedPerCaller: options?.queuedPerCaller ?? DEFAULT_QUEUED_PER_CALLER,
  };
}

/**
 * Whether a run that ended in `state` can be resumed: a paused run always (the pause wrote its
 * own checkpoint); a failed or cancelled one when its workflow checkpoints and the failure is
 * one a resume can fix (`fixable`: not invalid inputs, not a changed definition).
 */
export function resumableAfter(workflow: Workflow, state: RunState, fixable: boolean): boolean {
  if (state === 'paused') return true;
  if (state !== 'failed' && state !== 'canceled') return false;
  return fixable && workflow.definition.checkpoints;
}

export function busy(what: string): RunError {
  return new RunError('CAPACITY_FULL', `too many ${what} (a server-wide limit); retry later`);
}

/**
 * The caller's own quota is used up (not the server's): `runs` held that are all still queued,
 * working or paused, or `queued` waiting for a slot. Says what frees room.
 */
export function overQuota(what: 'runs' | 'queued', max: number, quota: string): RunError {
  const flag = what === 'runs' ? '--max-runs-per-caller' : '--max-queued-per-caller';
  const held =
    what === 'runs'
      ? `${max} runs held, none of them finished (queued, working or paused); cancel or resume some, or wait for them to finish`
      : `${max} runs waiting for an execution slot; wait for them to start or cancel some`;
  // A key from the address: every session and stateless request from it counts together.
  const shared = quota.startsWith('client:')
    ? ' (counted for all your sessions and requests from your address together; a principal, see --principal-header, gets its own)'
    : '';
  return new RunError('QUOTA_EXCEEDED', `your quota is used up: ${held}, then retry${shared}`, {
    limit: flag,
    max,
  });
}

export function draining(): RunError {
  return new RunError('SHUTTING_DOWN', 'the server is shutting down and starts no new runs');
}

export function checkArgumentsSize(args: Readonly<Record<string, unknown>>): void {
  let text: string;
  try {
    text = JSON.stringify(args);
  } catch {
    throw new ArgumentError('arguments', 'arguments must be JSON-serialisable');
  }
  if (Buffer.byteLength(text) > MAX_RUN_ARGUMENTS_BYTES) {
    throw new ArgumentError(
      'arguments',
      `arguments are larger than ${MAX_RUN_ARGUMENTS_BYTES / 1024} KiB; they are persisted with the run, so pass large payloads by reference (a URL, a file path, a blob key)`,
    );
  }
}

/**
 * The view of a run rebuilt from its record: one that was in flight when its process died is
 * now `failed`, as resumable as any run that stopped mid-step; any other is as recorded.
 */
export function reclaimedView(view: RunView, workflow: Workflow, at: string): RunView {
  if (TERMINAL_STATES.has(view.state) || view.state === 'paused') return view;
  const { vars: _v, reason: _r, resumable: _s, ...rest } = view;
  return {
    ...rest,
    state: 'failed',
    error: 'the server stopped while this run was in progress',
    ...(resumableAfter(workflow, 'failed', true) ? { resumable: true as const } : {}),
    updatedAt: at,
  };
}

/**
 * A run's steps: from a start index in order or by `goto`, until the end or a `break`; a loop
 * pipeline's iterations (`repeat`, `stop_when`, `max_iterations`); and one step's execution
 * between its `step_start` and `step_end` hooks, under its `timeout:`, with a checkpoint after
 * each completed step.
 */
import type { ParallelGroup, Step } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { onlyPlainCopies } from '../interpreter/interpreter.js';
import { CompleteSignal, PauseSignal } from '../interpreter/signals.js';
import type { Value } from '../interpreter/values.js';
import { formatDuration } from '../natives/args.js';
import { signalOf } from '../services/cancellation.js';
import { deadline } from '../services/deadline.js';
import { HookFailure, type StepStatus } from './hooks.js';
import { runGroup } from './parallel.js';
import { checkpoint } from './run-checkpoint.js';
import { RunFailure, stepFailure } from './run-failure.js';
import { initVars } from './run-start.js';
import { emit, env, indexOf, initMemFor, type RunState, setting } from './run-state.js';
import { numberSetting, repeatStopWhen } from './settings.js';

/** How many times one step may be entered in a run (a `goto` loop guard). */
export const MAX_STEP_VISITS = 10_000;

interface StepResult {
  readonly next: number | 'break';
  /** False when `step_start` called `complete()`: the step's body never ran. */
  readonly ran?: false;
}

export async function runLoop(run: RunState, start: number): Promise<void> {
  const max =
    run.decl.maxIterations ??
    numberSetting(setting(run, 'repeat'), 'max_iterations') ??
    Number.POSITIVE_INFINITY;
  const stopWhen = repeatStopWhen(run.decl);
  let first = start;
  for (;;) {
    if (run.iteration >= max) {
      run.terminalReason = 'max_iterations';
      return;
    }
    run.current = run.iteration + 1;
    emit(run, 'iteration', String(run.iteration + 1), run.iteration);
    if ((await runSteps(run, first)) === 'break') {
      run.broke = true;
      run.terminalReason = 'break';
      return;
    }
    run.iteration++;
    if (stopWhen) {
      await initMemFor(run, stopWhen);
      const stop = await run.scope.interpreter.evaluate(
        stopWhen,
        env(run),
        signalOf(run.options.signal),
      );
      if (stop === true) {
        run.terminalReason = 'stop_when';
        return;
      }
      if (stop !== false)
        throw new LangError('TYPE', 'repeat.stop_when must be a bool', stopWhen.span);
    }
    if (run.iteration >= max) continue;
    // A new iteration: fresh pipeline variables, the same mem and inputs.
    run.completed = [];
    run.mem.save(env(run));
    const declaring = initVars(run, currentInputs(run));
    if (declaring !== undefined) await declaring;
    await checkpoint(run, run.entry);
    first = run.entry;
  }
}

function currentInputs(run: RunState): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const input of run.decl.inputs) out[input.name] = env(run).lookup(input.name) ?? null;
  return out;
}

/**
 * Runs steps from `start` until the end or a `break`. Not async: the steps of an ephemeral run
 * that have nothing to wait for (see `waitsFor`) run here, one after the other, and the first
 * one that may wait hands the rest over to `stepsFrom`; a run made only of such steps (a
 * one-step `out = text`) ends with no promise and no microtask.
 */
export function runSteps(run: RunState, start: number): 'end' | 'break' | Promise<'end' | 'break'> {
  const steps = run.steps;
  let i = start;
  // What the checks of the full loop would see: no step hooks, no checkpoint to write.
  const plain = run.options.ephemeral === true && !run.hooks.has('step_start');
  while (plain && i < steps.length) {
    const step = steps[i] as Step | ParallelGroup;
    if (step.kind !== 'Step' || waitsFor(run, step)) break;
    run.options.signal.throwIfAborted();
    emit(run, 'step_start', step.name, i);
    try {
      // Cannot wait, goto, break or complete(): its statements are plain copies.
      run.scope.interpreter.execCopies(step.body, env(run).child(), run.options.signal);
    } catch (e) {
      // What stepBody and runStep make of a raise, for a step that pauses, spawns and
      // completes nothing and has no `timeout:` and no `step_end` hook.
      run.failedStep = step.name;
      if (run.options.signal.aborted) throw e;
      throw stepFailure(step.name, step.nameSpan, e);
    }
    run.executed.push(step.name);
    run.completed.push(step.name);
    emit(run, 'step_end', step.name, i);
    i = indexAfter(run, step);
  }
  if (i >= steps.length) return 'end';
  // Each step run above was entered once (no goto among them): the visits so far.
  const visits = new Map<string, number>();
  for (let k = start; k < i; k++) {
    const name = (steps[k] as Step | ParallelGroup).name;
    visits.set(name, (visits.get(name) ?? 0) + 1);
  }
  return stepsFrom(run, i, visits);
}

/**
 * Whether a step (not a parallel group) may have to wait or do more than copy variables: all
 * but a step without `timeout:` or a `step_end` hook, of plain copies, with every `mem` variable
 * ready and no task pending.
 */
function waitsFor(run: RunState, step: Step): boolean {
  return (
    step.timeoutMs !== undefined ||
    run.hooks.has('step_end') ||
    run.mem.uninitialised ||
    run.scope.pending.length > 0 ||
    !onlyPlainCopies(step.body)
  );
}

/** The step loop from step `i`, with each step's visits so far. */
async function stepsFrom(
  run: RunState,
  start: number,
  visits: Map<string, number>,
): Promise<'end' | 'break'> {
  let i = start;
  while (i < run.steps.length) {
    run.options.signal.throwIfAborted();
    const step = run.steps[i] as Step | ParallelGroup;
    const count = (visits.get(step.name) ?? 0) + 1;
    if (count > MAX_STEP_VISITS) {
      throw new RunFailure(
        'step_failed',
        'LIMIT_EXCEEDED',
        `step "${step.name}" revisited more than ${MAX_STEP_VISITS} times`,
        { step: step.name, span: step.nameSpan },
      );
    }
    visits.set(step.name, count);
    // Awaited only when there is work: each await is a turn of the microtask queue.
    if (run.mem.uninitialised) await initMemFor(run, step);
    emit(run, 'step_start', step.name, i);
    const result = await runStep(run, step);
    if (result.ran === false) {
      await checkpoint(run, run.steps.length, run.completed.at(-1) ?? '');
      return 'break';
    }
    run.executed.push(step.name);
    run.completed.push(step.name);
    emit(run, 'step_end', step.name, i);
    // An ephemeral run writes no step checkpoint (see checkpoint()): nothing to wait for.
    const persist = !run.options.ephemeral;
    if (result.next === 'break') {
      if (persist) await checkpoint(run, run.steps.length, step.name);
      return 'break';
    }
    if (persist) await checkpoint(run, result.next, step.name);
    i = result.next;
  }
  return 'end';
}

/**
 * One step with its `step_start`/`step_end` hooks (a group's hooks run per branch). Both run
 * before the step's checkpoint, so a step re-run on resume gets them again, a restored one not.
 */
async function runStep(run: RunState, step: Step | ParallelGroup): Promise<StepResult> {
  if (step.kind === 'Parallel') return stepBody(run, step);
  if ((await run.hooks.stepStart(step.name, undefined)) === 'complete')
    return { next: 'break', ran: false };
  const began = Date.now();
  let result: StepResult;
  try {
    result = await stepBody(run, step);
  } catch (e) {
    if (run.options.signal.aborted || e instanceof HookFailure) throw e;
    const answer = await run.hooks.stepEnd(step.name, undefined, statusOf(e), e, began);
    if (answer !== 'complete') throw e;
    run.failedStep = undefined;
    return { next: 'break' };
  }
  const answer = await run.hooks.stepEnd(step.name, undefined, 'completed', undefined, began);
  return answer === 'complete' ? { next: 'break' } : result;
}

async function stepBody(run: RunState, step: Step | ParallelGroup): Promise<StepResult> {
  const runSignal = signalOf(run.options.signal);
  // A step without `timeout:` runs on the run's signal: no deadline, not even its name text.
  const limit =
    step.timeoutMs === undefined
      ? undefined
      : deadline(runSignal, step.timeoutMs, `step "${step.name}"`);
  const signal = limit === undefined ? runSignal : limit.signal;
  try {
    if (step.kind === 'Parallel') {
      const group = { scope: run.scope, root: run.program.root, hooks: run.hooks };
      const completed = await runGroup(group, step, env(run), signal, runSignal);
      return { next: completed ? 'break' : indexAfter(run, step) };
    }
    const done = await run.scope.interpreter.execIn(step.body, env(run).child(), signal);
    if (run.scope.pending.length > 0) await run.scope.joinPending();
    if (done?.kind === 'goto') return { next: indexOf(run, done.target, step.name) };
    if (done?.kind === 'break') {
      run.breakReason = done.value;
      return { next: 'break' };
    }
    return { next: indexAfter(run, step) };
  } catch (e) {
    if (e instanceof CompleteSignal && !runSignal.aborted) {
      await run.scope.joinPending();
      return { next: 'break' };
    }
    run.failedStep = step.name;
    for (const h of run.scope.pending.splice(0)) h.controller.abort();
    if (e instanceof PauseSignal || e instanceof HookFailure || runSignal.aborted) throw e;
    if (signal.aborted) {
      throw new RunFailure(
        'step_timeout',
        RUN_ERROR_CODES.STEP_TIMEOUT,
        `step "${step.name}" timed out after ${formatDuration(step.timeoutMs ?? 0)}`,
        { step: step.name, span: step.nameSpan },
      );
    }
    throw stepFailure(step.name, step.nameSpan, e);
  } finally {
    limit?.dispose();
  }
}

function indexAfter(run: RunState, step: Step | ParallelGroup): number {
  return run.steps.indexOf(step) + 1;
}

/** How a step's raise reads in `step_end`: paused, timed out or failed. */
function statusOf(e: unknown, stepSignal?: AbortSignal): StepStatus {
  if (e instanceof PauseSignal) return 'paused';
  if ((e instanceof RunFailure && e.kind === 'step_timeout') || stepSignal?.aborted)
    return 'timed_out';
  return 'failed';
}

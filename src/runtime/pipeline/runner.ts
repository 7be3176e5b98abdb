/**
 * Runs one pipeline or workflow: inputs (and signature parameters), variables, steps from the
 * entry step in order or by `goto`, `break`, `complete()`, `pause()`, step timeouts, parallel
 * groups (parallel.ts), loop pipelines, lifecycle hooks (hooks.ts) at their moments, a
 * checkpoint after every completed step, resume from the last checkpoint, the final `output:`
 * projection and its check against the signature's return type.
 *
 * The runner owns the step loop and persistence; the interpreter owns the language. One
 * `AbortSignal` cancels the run anywhere; a cancelled or failed run keeps its last checkpoint.
 */
import type { LoadedProgram, PipelineDecl } from '../../lang/index.js';
import { failure, finish, hasOutput, outcome, publicVars } from './run-finish.js';
import { begin } from './run-start.js';
import { createRun, type RunState, sessionEnd } from './run-state.js';
import type { RunOptions, RunOutcome } from './run-types.js';
import { runLoop, runSteps } from './step-loop.js';

export type { FailureKind, RunEvent, RunOptions, RunOutcome, RunStatus } from './run-types.js';
export { MAX_STEP_VISITS } from './step-loop.js';

/** Runs `pipeline` (declared in `program.root`). Never throws for program errors: see `status`. */
export function runPipeline(
  program: LoadedProgram,
  pipeline: PipelineDecl,
  options: RunOptions,
): Promise<RunOutcome> {
  try {
    const outcome = startPipeline(program, pipeline, options);
    return outcome instanceof Promise ? outcome : Promise.resolve(outcome);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `runPipeline` for callers that await only a promise: a run with nothing to wait for (an
 * ephemeral run of steps that only copy variables, no hooks, no `output:`) answers its outcome
 * at once, with no promise and no microtask. May throw what `runPipeline` would reject with.
 */
export function startPipeline(
  program: LoadedProgram,
  pipeline: PipelineDecl,
  options: RunOptions,
): RunOutcome | Promise<RunOutcome> {
  return runState(createRun(program, pipeline, options));
}

/**
 * The run from its start (run-start.ts) through its steps (step-loop.ts) to its finish. Not
 * async: each phase that answers synchronously is not awaited, and the first one that answers
 * a promise hands the rest over to `runStateFrom`.
 */
function runState(run: RunState): RunOutcome | Promise<RunOutcome> {
  try {
    // A fresh run of literal variables, with no `session_start` hook, begins synchronously.
    const begun = begin(run);
    if (typeof begun !== 'number') return runStateFrom(run, begun, 'begin');
    // `session_start` may have called complete(): then no step runs.
    if (!run.broke) {
      if (run.decl.loop) return runStateFrom(run, runLoop(run, begun), 'steps');
      const ran = runSteps(run, begun);
      if (typeof ran !== 'string') return runStateFrom(run, ran, 'steps');
      if (ran === 'break') run.broke = true;
    }
    return ending(run);
  } catch (e) {
    return failure(run, e);
  }
}

/** `session_end`, then the outcome: synchronously when there is nothing to wait for. */
function ending(run: RunState): RunOutcome | Promise<RunOutcome> {
  const ended = sessionEnd(run, undefined);
  if (ended !== undefined) return runStateFrom(run, ended, 'end');
  // An ephemeral run without `output:` or a declared return type finishes synchronously.
  if (run.options.ephemeral && !hasOutput(run) && !run.decl.signature?.returns) {
    return outcome(run, 'completed', publicVars(run));
  }
  return finishing(run);
}

/** `finish`, whose failure is the run's failure as any phase's is. */
async function finishing(run: RunState): Promise<RunOutcome> {
  try {
    return await finish(run);
  } catch (e) {
    return failure(run, e);
  }
}

/** What `runState` had under way when a phase answered a promise. */
type Phase = 'begin' | 'steps' | 'end';

/** The rest of `runState` once `pending` (the promise of phase `phase`) settles. */
async function runStateFrom(
  run: RunState,
  pending: Promise<unknown>,
  phase: Phase,
): Promise<RunOutcome> {
  try {
    const settled = await pending;
    if (phase === 'begin') {
      const start = settled as number;
      if (!run.broke) {
        if (run.decl.loop) await runLoop(run, start);
        else if ((await runSteps(run, start)) === 'break') run.broke = true;
      }
    } else if (phase === 'steps') {
      if (settled === 'break') run.broke = true;
    }
    if (phase !== 'end') await sessionEnd(run, undefined);
    if (run.options.ephemeral && !hasOutput(run) && !run.decl.signature?.returns) {
      return outcome(run, 'completed', publicVars(run));
    }
    return await finish(run);
  } catch (e) {
    return failure(run, e);
  }
}

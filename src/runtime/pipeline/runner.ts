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
// Not async (one promise and one microtask less per run); a throw still arrives as a rejection.
export function runPipeline(
  program: LoadedProgram,
  pipeline: PipelineDecl,
  options: RunOptions,
): Promise<RunOutcome> {
  let run: RunState;
  try {
    run = createRun(program, pipeline, options);
  } catch (error) {
    return Promise.reject(error);
  }
  return runState(run);
}

/** The run from its start (run-start.ts) through its steps (step-loop.ts) to its finish. */
async function runState(run: RunState): Promise<RunOutcome> {
  try {
    // Awaited only when it is a promise: a fresh run of literal variables, with no
    // `session_start` hook, begins synchronously.
    const begun = begin(run);
    const start = typeof begun === 'number' ? begun : await begun;
    // `session_start` may have called complete(): then no step runs.
    if (!run.broke) {
      if (run.decl.loop) await runLoop(run, start);
      else if ((await runSteps(run, start)) === 'break') run.broke = true;
    }
    await sessionEnd(run, undefined);
    // An ephemeral run without `output:` or a declared return type finishes synchronously.
    if (run.options.ephemeral && !hasOutput(run) && !run.decl.signature?.returns) {
      return outcome(run, 'completed', publicVars(run));
    }
    return await finish(run);
  } catch (e) {
    return failure(run, e);
  }
}

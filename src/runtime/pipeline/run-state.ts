/**
 * The private state of one pipeline run, which its start, step loop, hooks, checkpoints and
 * finish all share, and the small helpers they all use. A plain object passed to module
 * functions, so each phase of a run can live in its own module.
 */
import type { LoadedProgram, ParallelGroup, PipelineDecl, Step } from '../../lang/index.js';
import { type PipelineDefinition, pipelineDefinition } from '../../lang/index.js';
import { RunScope } from '../interpreter/declarations.js';
import type { Environment } from '../interpreter/environment.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { SpawnLimiter } from '../interpreter/tasks.js';
import { isObject, type MhlObject, newObject, type Value } from '../interpreter/values.js';
import { signalOf } from '../services/cancellation.js';
import { clientPathsFor } from '../services/client-paths.js';
import { PipelineHooks } from './hooks.js';
import { MemVariables } from './mem.js';
import { RunFailure } from './run-failure.js';
import type { RunEvent, RunOptions } from './run-types.js';
import { literalValue } from './settings.js';

export interface RunState {
  readonly program: LoadedProgram;
  readonly decl: PipelineDecl;
  readonly options: RunOptions;
  readonly steps: readonly (Step | ParallelGroup)[];
  readonly definition: PipelineDefinition;
  session: string;
  resumed: boolean;
  readonly executed: string[];
  readonly skipped: string[];
  completed: string[];
  iteration: number;
  vars: Environment | undefined;
  readonly mem: MemVariables;
  readonly scope: RunScope;
  readonly hooks: PipelineHooks;
  /** Where a fresh run (and each loop iteration) starts: the `entry step`, else the first. */
  readonly entry: number;
  /** The 1-based loop iteration running now (1 for a plain pipeline). */
  current: number;
  failureHandled: boolean;
  /** When the run started; formatted only if the program reads `context.started_at`. */
  readonly startedAt: number;
  /** Makes server paths in what a client sees relative to the served folder. */
  readonly shown: (text: string) => string;
  contextVars: MhlObject;
  broke: boolean;
  breakReason: Value;
  latestSet: boolean;
  terminalReason: string;
  failedStep: string | undefined;
}

/** The state of a run of `decl` not yet begun: its scope, its hooks, its entry step. */
export function createRun(
  program: LoadedProgram,
  decl: PipelineDecl,
  options: RunOptions,
): RunState {
  const startedAt = Date.now();
  const definition = options.definition ?? pipelineDefinition(program, decl);
  const mem = new MemVariables(decl);
  const spawn = literalSetting(decl, 'spawn');
  const limit =
    isObject(spawn) && typeof spawn['max_concurrency'] === 'number' ? spawn['max_concurrency'] : 4;
  const displayRoot = program.displayRoot;
  const shown = clientPathsFor(
    displayRoot === undefined ? undefined : { root: displayRoot, cwd: options.services.cwd },
  );
  const output = (line: string) => options.services.output(shown(line));
  // The closures below read `run` only once the run is under way, after it is assigned.
  const scope = new RunScope(
    program,
    { ...options.services, output },
    () => context(run),
    new SpawnLimiter(limit),
  );
  scope.memReset = (name, signal) =>
    run.vars && run.mem.reset(name, run.vars, run.scope.interpreter, signal);
  // Made on the first hook call: a pipeline without hooks never needs these closures.
  const hooks = new PipelineHooks(decl, () => ({
    interpreter: scope.interpreter,
    env: () => env(run),
    initMem: (node) => initMemFor(run, node),
    shown: (text) => shown(options.services.redactor.redact(text)),
    run: () => ({
      pipeline: decl.name,
      session: run.session,
      iteration: run.current,
      resumed: run.resumed,
    }),
    signal: signalOf(options.signal),
  }));
  const entry = Math.max(
    0,
    decl.steps.findIndex((s) => s.kind === 'Step' && s.entry),
  );
  const run: RunState = {
    program,
    decl,
    options,
    steps: decl.steps,
    definition,
    session: '',
    resumed: false,
    executed: [],
    skipped: [],
    completed: [],
    iteration: 0,
    vars: undefined,
    mem,
    scope,
    hooks,
    entry,
    current: 1,
    failureHandled: false,
    startedAt,
    shown,
    contextVars: newObject(),
    broke: false,
    breakReason: null,
    latestSet: false,
    terminalReason: '',
    failedStep: undefined,
  };
  return run;
}

/** A pipeline property that is a literal setting (evaluated without a scope). */
function literalSetting(decl: PipelineDecl, name: string): Value | undefined {
  const e = decl.props.find((p) => p.name === name)?.value;
  return e ? literalValue(e) : undefined;
}

/** A property of the run's pipeline that is a literal setting. */
export function setting(run: RunState, name: string): Value | undefined {
  return literalSetting(run.decl, name);
}

function context(run: RunState): MhlObject {
  return newObject([
    ['session_id', run.session],
    ['started_at', new Date(run.startedAt).toISOString()],
    ['resumed', run.resumed],
    ['principal', run.options.principal ?? ''],
    ['vars', run.contextVars],
  ]);
}

export function env(run: RunState): Environment {
  if (!run.vars) throw new Error('pipeline scope used before it was set up');
  return run.vars;
}

/** Runs the initializer of each `mem` variable `node` mentions that holds no value yet. */
export function initMemFor(run: RunState, node: object): Promise<void> {
  return run.mem.initFor(node, env(run), run.scope.interpreter, signalOf(run.options.signal));
}

/** `complete()` from a hook: the run ends as a `break` would end it. */
export function ended(run: RunState): void {
  run.broke = true;
  if (run.decl.loop) run.terminalReason = 'break';
}

/**
 * `session_end` (once), when the run's scope exists. Undefined when there is nothing to wait
 * for (no such hook): callers await only a promise.
 */
export function sessionEnd(run: RunState, error: string | undefined): Promise<void> | undefined {
  return run.vars ? run.hooks.sessionEnd(error, run.broke, run.executed) : undefined;
}

export function emit(run: RunState, type: RunEvent['type'], step: string, index: number): void {
  run.options.onEvent?.({ type, step, index, total: run.steps.length });
}

/** The index of the step named `name`; a `goto` (from step `from`) to no such step fails. */
export function indexOf(run: RunState, name: string, from?: string): number {
  const i = run.steps.findIndex((s) => s.name === name);
  if (i < 0) {
    const span = run.steps.find((s) => s.name === from)?.nameSpan;
    throw new RunFailure('step_failed', RUN_ERROR_CODES.GOTO, `goto ${name}: no such step`, {
      step: from,
      span,
    });
  }
  return i;
}

// Over 500 lines: one class holds a run's private state (vars, mem, completed steps, session), which its step loop, loops, hooks and checkpoints all share.
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
import type { Expr, ParallelGroup, PipelineDecl, Step, TypeNode } from '../../lang/index.js';
import {
  LangError,
  type LoadedProgram,
  type PipelineDefinition,
  pipelineDefinition,
} from '../../lang/index.js';
import type { TerminalReason } from '../checkpoints/checkpoint-records.schema.js';
import type { Checkpoint, CheckpointStore } from '../checkpoints/checkpoints.js';
import { RunScope, type RunServices } from '../interpreter/declarations.js';
import { Environment } from '../interpreter/environment.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { CompleteSignal, PauseSignal } from '../interpreter/signals.js';
import { SpawnLimiter } from '../interpreter/tasks.js';
import {
  DurationValue,
  formatValue,
  fromJson,
  isJsonValue,
  isObject,
  type MhlObject,
  newObject,
  toPlain,
  type Value,
} from '../interpreter/values.js';
import { formatDuration } from '../natives/args.js';
import { clientPathsFor } from '../services/client-paths.js';
import { deadline } from '../services/deadline.js';
import { HookFailure, PipelineHooks, type StepStatus } from './hooks.js';
import { checkInputs, InvalidInputsError, matchesType, typeText } from './inputs.js';
import { MemVariables } from './mem.js';
import { runGroup } from './parallel.js';
import { errorInfo, type FailureKind, RunFailure, stepFailure } from './run-failure.js';
import {
  literalValue,
  nullExpr,
  numberSetting,
  persisted,
  repeatStopWhen,
  restored,
} from './settings.js';

/** How many times one step may be entered in a run (a `goto` loop guard). */
export const MAX_STEP_VISITS = 10_000;

export type RunStatus = 'completed' | 'paused' | 'failed' | 'canceled';
export type { FailureKind };

export interface RunEvent {
  readonly type: 'run_start' | 'step_start' | 'step_end' | 'step_skipped' | 'iteration';
  readonly step: string;
  readonly index: number;
  readonly total: number;
  /** Set on `run_start`. */
  readonly session?: string;
}

export interface RunOptions {
  readonly inputs: Readonly<Record<string, Value>>;
  readonly resume?: boolean;
  readonly force?: boolean;
  /** The session to start or resume; a fresh run without one gets a random id. */
  readonly session?: string;
  readonly principal?: string;
  readonly signal: AbortSignal;
  readonly services: RunServices;
  readonly state: CheckpointStore;
  /**
   * Nothing of this run outlives it (a synchronous `tools/call`): no step checkpoint, no result
   * record is written. A `pause()` alone still writes its checkpoint (and the latest pointer)
   * to `state`, so the caller can resume the paused step; give such a run a throwaway store.
   */
  readonly ephemeral?: boolean;
  readonly onEvent?: (event: RunEvent) => void;
  /** The pipeline's digest and checkpoint policy, computed once by the catalog; else here. */
  readonly definition?: PipelineDefinition;
  /** Also report every pipeline variable (`RunOutcome.state`), beside the `output:` result. */
  readonly reportState?: boolean;
}

export interface RunOutcome {
  readonly status: RunStatus;
  readonly pipeline: string;
  readonly session: string;
  readonly resumed: boolean;
  readonly executed: readonly string[];
  readonly skipped: readonly string[];
  readonly broke: boolean;
  readonly loop: boolean;
  readonly iterations: number;
  readonly terminalReason: string;
  /** The result (`output:` projection or every non-internal variable); partial state when paused. */
  readonly vars: MhlObject;
  readonly pauseReason?: Value;
  /** Every non-internal pipeline variable, when `RunOptions.reportState` asked for it. */
  readonly state?: MhlObject;
  /** The value `break` was given (null without one), with `state`. */
  readonly breakReason?: Value;
  readonly error?: {
    readonly message: string;
    readonly kind: FailureKind;
    /** A stable code (docs/errors.md): match on it, never on the message. */
    readonly code: string;
    /** Where it failed; `file` as clients may see it (relative to a served folder). */
    readonly file: string;
    readonly line: number;
    readonly col: number;
    /** The message without a position in front. */
    readonly summary: string;
    /** What to do about it. */
    readonly hint: string;
    readonly step?: string;
    readonly missing?: readonly string[];
    readonly unknown?: readonly string[];
  };
}

interface StepResult {
  readonly next: number | 'break';
  /** False when `step_start` called `complete()`: the step's body never ran. */
  readonly ran?: false;
}

/** Runs `pipeline` (declared in `program.root`). Never throws for program errors: see `status`. */
// Not async (one promise and one microtask less per run); a throw still arrives as a rejection.
export function runPipeline(
  program: LoadedProgram,
  pipeline: PipelineDecl,
  options: RunOptions,
): Promise<RunOutcome> {
  let run: PipelineRun;
  try {
    run = new PipelineRun(program, pipeline, options);
  } catch (error) {
    return Promise.reject(error);
  }
  return run.run();
}

class PipelineRun {
  readonly #program: LoadedProgram;
  readonly #decl: PipelineDecl;
  readonly #options: RunOptions;
  readonly #steps: readonly (Step | ParallelGroup)[];
  readonly #definition: PipelineDefinition;
  #session = '';
  #resumed = false;
  readonly #executed: string[] = [];
  readonly #skipped: string[] = [];
  #completed: string[] = [];
  #iteration = 0;
  #vars: Environment | undefined;
  readonly #mem: MemVariables;
  readonly #scope: RunScope;
  readonly #hooks: PipelineHooks;
  /** Where a fresh run (and each loop iteration) starts: the `entry step`, else the first. */
  readonly #entry: number;
  /** The 1-based loop iteration running now (1 for a plain pipeline). */
  #current = 1;
  #failureHandled = false;
  /** When the run started; formatted only if the program reads `context.started_at`. */
  readonly #startedAt = Date.now();
  /** Makes server paths in what a client sees relative to the served folder. */
  readonly #shown: (text: string) => string;

  constructor(program: LoadedProgram, decl: PipelineDecl, options: RunOptions) {
    this.#program = program;
    this.#decl = decl;
    this.#options = options;
    this.#steps = decl.steps;
    this.#definition = options.definition ?? pipelineDefinition(program, decl);
    this.#mem = new MemVariables(decl);
    const spawn = this.#setting('spawn');
    const limit =
      isObject(spawn) && typeof spawn['max_concurrency'] === 'number'
        ? spawn['max_concurrency']
        : 4;
    const shown = program.displayRoot;
    this.#shown = clientPathsFor(
      shown === undefined ? undefined : { root: shown, cwd: options.services.cwd },
    );
    const output = (line: string) => options.services.output(this.#shown(line));
    this.#scope = new RunScope(
      program,
      { ...options.services, output },
      () => this.#context(),
      new SpawnLimiter(limit),
    );
    this.#scope.memReset = (name, signal) =>
      this.#vars && this.#mem.reset(name, this.#vars, this.#scope.interpreter, signal);
    this.#hooks = new PipelineHooks(decl, {
      interpreter: this.#scope.interpreter,
      env: () => this.#env(),
      initMem: (node) => this.#initMemFor(node),
      shown: (text) => this.#shown(options.services.redactor.redact(text)),
      run: () => ({
        pipeline: decl.name,
        session: this.#session,
        iteration: this.#current,
        resumed: this.#resumed,
      }),
      signal: options.signal,
    });
    this.#entry = Math.max(
      0,
      decl.steps.findIndex((s) => s.kind === 'Step' && s.entry),
    );
  }

  /** A pipeline property that is a literal setting (evaluated without a scope). */
  #setting(name: string): Value | undefined {
    const e = this.#decl.props.find((p) => p.name === name)?.value;
    return e ? literalValue(e) : undefined;
  }

  #context(): MhlObject {
    return newObject([
      ['session_id', this.#session],
      ['started_at', new Date(this.#startedAt).toISOString()],
      ['resumed', this.#resumed],
      ['principal', this.#options.principal ?? ''],
      ['vars', this.#contextVars],
    ]);
  }

  #contextVars: MhlObject = newObject();

  async run(): Promise<RunOutcome> {
    try {
      // Awaited only when it is a promise: a fresh run of literal variables, with no
      // `session_start` hook, begins synchronously.
      const begun = this.#begin();
      const start = typeof begun === 'number' ? begun : await begun;
      // `session_start` may have called complete(): then no step runs.
      if (!this.#broke) {
        if (this.#decl.loop) await this.#runLoop(start);
        else if ((await this.#runSteps(start)) === 'break') this.#broke = true;
      }
      await this.#sessionEnd(undefined);
      // An ephemeral run without `output:` or a declared return type finishes synchronously.
      if (this.#options.ephemeral && !this.#hasOutput && !this.#decl.signature?.returns) {
        return this.#outcome('completed', this.#publicVars());
      }
      return await this.#finish();
    } catch (e) {
      return this.#failure(e);
    }
  }

  #broke = false;
  #breakReason: Value = null;
  #latestSet = false;
  #terminalReason = '';
  #failedStep: string | undefined;

  /**
   * Sets up a fresh or resumed run; returns the index of the first step to run, synchronously
   * when nothing needs waiting for (a fresh run without `context:` whose variables are literals).
   */
  #begin(): number | Promise<number> {
    if (this.#options.resume) return this.#beginResumed();
    return this.#beginFresh();
  }

  /** A resumed run: its latest checkpoint's state, or a fresh start when there is none. */
  async #beginResumed(): Promise<number> {
    const { state, resume, force, inputs } = this.#options;
    const name = this.#decl.name;
    if (resume) {
      const session = this.#options.session ?? (await state.latest(name));
      const record = session ? await state.load(session, name) : undefined;
      if (session && record) {
        if (record.digest && record.digest !== this.#definition.digest && !force) {
          throw new RunFailure(
            'definition_mismatch',
            RUN_ERROR_CODES.DEFINITION_MISMATCH,
            `${name} changed since session ${session} was checkpointed; rerun without --resume, or pass --force to resume anyway`,
            { span: this.#decl.nameSpan },
          );
        }
        this.#session = session;
        this.#resumed = true;
        this.#options.onEvent?.({
          type: 'run_start',
          step: '',
          index: 0,
          total: this.#steps.length,
          session,
        });
        checkInputs(
          name,
          this.#decl.inputs.map((i) => ({ ...i, default: i.default ?? nullExpr(i) })),
          inputs,
        );
        await this.#loadContextVars();
        this.#restore(record, inputs);
        this.#skipped.push(...record.completed_steps);
        this.#completed = [...record.completed_steps];
        this.#iteration = this.#decl.loop
          ? ((await state.loadLoop(session, name))?.next_iteration ?? 0)
          : 0;
        const next = record.next_step === '' ? this.#steps.length : this.#indexOf(record.next_step);
        for (const [i, step] of this.#steps.entries())
          if (i < next) this.#emit('step_skipped', step.name, i);
        return next;
      }
    }
    const fresh = this.#beginFresh();
    return typeof fresh === 'number' ? fresh : await fresh;
  }

  /** A fresh run: its session, its inputs checked, its variables declared. */
  #beginFresh(): number | Promise<number> {
    const { state, inputs } = this.#options;
    const name = this.#decl.name;
    this.#session = this.#options.session ?? state.newSessionId();
    this.#options.onEvent?.({
      type: 'run_start',
      step: '',
      index: 0,
      total: this.#steps.length,
      session: this.#session,
    });
    checkInputs(name, this.#decl.inputs, inputs);
    // Waited for only when the pipeline reads a previous run's state (`context:`).
    const declaring =
      this.#setting('context') !== undefined
        ? this.#loadContextVars().then(() => this.#initVars(inputs))
        : this.#initVars(inputs);
    if (declaring === undefined && !this.#hooks.has('session_start')) return this.#entry;
    return this.#startSession(declaring);
  }

  /** The rest of a fresh start: variables still being declared, then `session_start`. */
  async #startSession(declaring: Promise<void> | undefined): Promise<number> {
    if (declaring !== undefined) await declaring;
    // Once per session: a resumed run continues the session it started in.
    if ((await this.#hooks.sessionStart(new Date(this.#startedAt).toISOString())) === 'complete')
      this.#ended();
    return this.#entry;
  }

  /** `complete()` from a hook: the run ends as a `break` would end it. */
  #ended(): void {
    this.#broke = true;
    if (this.#decl.loop) this.#terminalReason = 'break';
  }

  /** `session_end` (once), when the run's scope exists. */
  async #sessionEnd(error: string | undefined): Promise<void> {
    if (this.#vars) await this.#hooks.sessionEnd(error, this.#broke, this.#executed);
  }

  async #loadContextVars(): Promise<void> {
    const config = this.#setting('context');
    if (!isObject(config)) return;
    const source = typeof config['source'] === 'string' ? config['source'] : 'latest';
    const session = source.startsWith('session:')
      ? source.slice(8)
      : await this.#options.state.latestCompleted(this.#decl.name);
    const result = session ? (await this.#options.state.readResult(session))?.variables : undefined;
    if (!result && config['require'] === true) {
      throw new RunFailure(
        'other',
        RUN_ERROR_CODES.CONTEXT_REQUIRED,
        `${this.#decl.name} needs the state of a previous completed run (context.require), and there is none`,
        { span: this.#decl.props.find((p) => p.name === 'context')?.span },
      );
    }
    this.#contextVars = isObject(result) ? result : newObject();
  }

  /**
   * Declares inputs and pipeline variables in a fresh pipeline scope: synchronously (undefined)
   * while every value is given or a literal, from the first one to evaluate on in a promise.
   */
  #initVars(inputs: Readonly<Record<string, Value>>): Promise<void> | undefined {
    const env = new Environment(this.#scope.moduleEnv(this.#program.root));
    const { inputs: declared, vars } = this.#decl;
    for (let i = 0; i < declared.length; i++) {
      const input = declared[i] as (typeof declared)[number];
      const value =
        input.name in inputs
          ? (inputs[input.name] as Value)
          : input.default
            ? scalarLiteral(input.default)
            : null;
      if (value === undefined) return this.#initVarsFrom(env, inputs, i, 0);
      env.declare(input.name, value);
    }
    for (let i = 0; i < vars.length; i++) {
      const v = vars[i] as (typeof vars)[number];
      if (v.storage === 'mem') continue;
      const value = scalarLiteral(v.value);
      if (value === undefined) return this.#initVarsFrom(env, inputs, declared.length, i);
      env.declare(v.name, value, v.storage === 'const');
    }
    this.#vars = this.#mem.declareIn(env);
    return undefined;
  }

  /** `#initVars` from input `fromInput` and variable `fromVar` on, evaluating as it goes. */
  async #initVarsFrom(
    env: Environment,
    inputs: Readonly<Record<string, Value>>,
    fromInput: number,
    fromVar: number,
  ): Promise<void> {
    const signal = this.#options.signal;
    for (const input of this.#decl.inputs.slice(fromInput)) {
      const value =
        input.name in inputs
          ? (inputs[input.name] as Value)
          : input.default
            ? (scalarLiteral(input.default) ??
              (await this.#scope.interpreter.evaluate(input.default, env, signal)))
            : null;
      env.declare(input.name, value);
    }
    for (const v of this.#decl.vars.slice(fromVar)) {
      // A `mem` variable is get-or-init: its initializer runs when a step first mentions it.
      if (v.storage === 'mem') continue;
      // A scalar literal (`var out = ""`) needs no evaluation: no await, so no microtask.
      const value =
        scalarLiteral(v.value) ?? (await this.#scope.interpreter.evaluate(v.value, env, signal));
      env.declare(v.name, value, v.storage === 'const');
    }
    this.#vars = this.#mem.declareIn(env);
  }

  #restore(record: Checkpoint, inputs: Readonly<Record<string, Value>>): void {
    const env = new Environment(this.#scope.moduleEnv(this.#program.root));
    const vars = restored(record.variables) as MhlObject;
    this.#mem.restore(vars['__mem']);
    const consts = new Set(this.#decl.vars.filter((v) => v.storage === 'const').map((v) => v.name));
    for (const input of this.#decl.inputs)
      env.declare(
        input.name,
        input.name in inputs ? (inputs[input.name] as Value) : (vars[input.name] ?? null),
      );
    for (const v of this.#decl.vars)
      if (v.storage !== 'mem') env.declare(v.name, vars[v.name] ?? null, consts.has(v.name));
    this.#vars = this.#mem.declareIn(env);
  }

  async #runLoop(start: number): Promise<void> {
    const max =
      this.#decl.maxIterations ??
      numberSetting(this.#setting('repeat'), 'max_iterations') ??
      Number.POSITIVE_INFINITY;
    const stopWhen = repeatStopWhen(this.#decl);
    let first = start;
    for (;;) {
      if (this.#iteration >= max) {
        this.#terminalReason = 'max_iterations';
        return;
      }
      this.#current = this.#iteration + 1;
      this.#emit('iteration', String(this.#iteration + 1), this.#iteration);
      if ((await this.#runSteps(first)) === 'break') {
        this.#broke = true;
        this.#terminalReason = 'break';
        return;
      }
      this.#iteration++;
      if (stopWhen) {
        await this.#initMemFor(stopWhen);
        const stop = await this.#scope.interpreter.evaluate(
          stopWhen,
          this.#env(),
          this.#options.signal,
        );
        if (stop === true) {
          this.#terminalReason = 'stop_when';
          return;
        }
        if (stop !== false)
          throw new LangError('TYPE', 'repeat.stop_when must be a bool', stopWhen.span);
      }
      if (this.#iteration >= max) continue;
      // A new iteration: fresh pipeline variables, the same mem and inputs.
      this.#completed = [];
      this.#mem.save(this.#env());
      const declaring = this.#initVars(this.#currentInputs());
      if (declaring !== undefined) await declaring;
      await this.#checkpoint(this.#entry);
      first = this.#entry;
    }
  }

  #currentInputs(): Record<string, Value> {
    const out: Record<string, Value> = {};
    for (const input of this.#decl.inputs) out[input.name] = this.#env().lookup(input.name) ?? null;
    return out;
  }

  #env(): Environment {
    if (!this.#vars) throw new Error('pipeline scope used before it was set up');
    return this.#vars;
  }

  /** Runs steps from `start` until the end or a `break`. */
  async #runSteps(start: number): Promise<'end' | 'break'> {
    const visits = new Map<string, number>();
    let i = start;
    while (i < this.#steps.length) {
      this.#options.signal.throwIfAborted();
      const step = this.#steps[i] as Step | ParallelGroup;
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
      if (this.#mem.uninitialised) await this.#initMemFor(step);
      this.#emit('step_start', step.name, i);
      const result = await this.#runStep(step);
      if (result.ran === false) {
        await this.#checkpoint(this.#steps.length, this.#completed.at(-1) ?? '');
        return 'break';
      }
      this.#executed.push(step.name);
      this.#completed.push(step.name);
      this.#emit('step_end', step.name, i);
      // An ephemeral run writes no step checkpoint (see #checkpoint): nothing to wait for.
      const persist = !this.#options.ephemeral;
      if (result.next === 'break') {
        if (persist) await this.#checkpoint(this.#steps.length, step.name);
        return 'break';
      }
      if (persist) await this.#checkpoint(result.next, step.name);
      i = result.next;
    }
    return 'end';
  }

  /**
   * One step with its `step_start`/`step_end` hooks (a group's hooks run per branch). Both run
   * before the step's checkpoint, so a step re-run on resume gets them again, a restored one not.
   */
  async #runStep(step: Step | ParallelGroup): Promise<StepResult> {
    if (step.kind === 'Parallel') return this.#stepBody(step);
    if ((await this.#hooks.stepStart(step.name, undefined)) === 'complete')
      return { next: 'break', ran: false };
    const began = Date.now();
    let result: StepResult;
    try {
      result = await this.#stepBody(step);
    } catch (e) {
      if (this.#options.signal.aborted || e instanceof HookFailure) throw e;
      const answer = await this.#hooks.stepEnd(step.name, undefined, statusOf(e), e, began);
      if (answer !== 'complete') throw e;
      this.#failedStep = undefined;
      return { next: 'break' };
    }
    const answer = await this.#hooks.stepEnd(step.name, undefined, 'completed', undefined, began);
    return answer === 'complete' ? { next: 'break' } : result;
  }

  async #stepBody(step: Step | ParallelGroup): Promise<StepResult> {
    const runSignal = this.#options.signal;
    // A step without `timeout:` runs on the run's signal: no deadline, not even its name text.
    const limit =
      step.timeoutMs === undefined
        ? undefined
        : deadline(runSignal, step.timeoutMs, `step "${step.name}"`);
    const signal = limit === undefined ? runSignal : limit.signal;
    try {
      if (step.kind === 'Parallel') {
        const group = { scope: this.#scope, root: this.#program.root, hooks: this.#hooks };
        const completed = await runGroup(group, step, this.#env(), signal, runSignal);
        return { next: completed ? 'break' : this.#indexAfter(step) };
      }
      const done = await this.#scope.interpreter.execIn(step.body, this.#env().child(), signal);
      if (this.#scope.pending.length > 0) await this.#scope.joinPending();
      if (done?.kind === 'goto') return { next: this.#indexOf(done.target, step.name) };
      if (done?.kind === 'break') {
        this.#breakReason = done.value;
        return { next: 'break' };
      }
      return { next: this.#indexAfter(step) };
    } catch (e) {
      if (e instanceof CompleteSignal && !runSignal.aborted) {
        await this.#scope.joinPending();
        return { next: 'break' };
      }
      this.#failedStep = step.name;
      for (const h of this.#scope.pending.splice(0)) h.controller.abort();
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

  #indexAfter(step: Step | ParallelGroup): number {
    return this.#steps.indexOf(step) + 1;
  }

  #indexOf(name: string, from?: string): number {
    const i = this.#steps.findIndex((s) => s.name === name);
    if (i < 0) {
      const span = this.#steps.find((s) => s.name === from)?.nameSpan;
      throw new RunFailure('step_failed', RUN_ERROR_CODES.GOTO, `goto ${name}: no such step`, {
        step: from,
        span,
      });
    }
    return i;
  }

  /** Runs the initializer of each `mem` variable `node` mentions that holds no value yet. */
  #initMemFor(node: object): Promise<void> {
    return this.#mem.initFor(node, this.#env(), this.#scope.interpreter, this.#options.signal);
  }

  /**
   * The persisted variables: inputs, pipeline variables and `mem`, JSON only. `strict` refuses a
   * function or task handle (a checkpoint cannot hold it); otherwise such values are left out.
   */
  #snapshot(strict = true): MhlObject {
    const mem = this.#mem.save(this.#env());
    const out = newObject();
    for (const [k, v] of this.#env().own()) {
      if (this.#mem.has(k)) continue;
      if (!isJsonValue(v)) {
        if (!strict) continue;
        throw new RunFailure(
          'step_failed',
          RUN_ERROR_CODES.CHECKPOINT,
          `variable '${k}' holds a ${typeof v === 'object' && v ? (v as { typeName?: string }).typeName : typeof v}, which cannot be checkpointed; keep functions and task handles in step-local variables`,
          { span: this.#decl.vars.find((v) => v.name === k)?.span },
        );
      }
      out[k] = persisted(v);
    }
    out['__mem'] = persisted(mem);
    return out;
  }

  #checkpointEnabled(): boolean {
    return this.#definition.checkpoints;
  }

  async #checkpoint(next: number, lastStep = '', paused?: Value): Promise<void> {
    // A pause is written even when ephemeral: it is what the caller needs to resume the run.
    if (this.#options.ephemeral && paused === undefined) return;
    if (!this.#checkpointEnabled() && paused === undefined) return;
    const ttl = this.#setting('checkpoint');
    const ttlValue = isObject(ttl) ? ttl['ttl'] : undefined;
    const variables = this.#snapshot();
    variables['__last_step'] = lastStep;
    const draft = {
      last_step: lastStep,
      next_step: this.#steps[next]?.name ?? '',
      completed_steps: [...this.#completed],
      variables,
      ttl_seconds: ttlValue instanceof DurationValue ? Math.round(ttlValue.ms / 1000) : 0,
      digest: this.#definition.digest,
      ...(paused !== undefined ? { paused: { reason: formatValue(paused) } } : {}),
    };
    const options = { signal: this.#options.signal };
    await this.#options.state.save(this.#session, this.#decl.name, draft, options);
    if (!this.#latestSet) {
      // The pointer names the session, which does not change during a run: write it once.
      await this.#options.state.setLatest(this.#decl.name, this.#session, options);
      this.#latestSet = true;
    }
    if (this.#decl.loop) {
      const loop = {
        next_iteration: this.#iteration,
        terminal_reason: this.#terminalReason as TerminalReason,
        instance_id: this.#session,
      };
      await this.#options.state.saveLoop(this.#session, this.#decl.name, loop, options);
    }
  }

  async #finish(): Promise<RunOutcome> {
    // Without `output:` the result is the public variables, built synchronously.
    const vars = this.#hasOutput ? await this.#result() : this.#publicVars();
    const returns = this.#decl.signature?.returns;
    if (returns && !matchesType(vars, returns, (name) => this.#alias(name))) {
      throw new LangError(
        'TYPE',
        `the result of ${this.#decl.name} must be ${typeText(returns)}, as its signature declares`,
        returns.span,
      );
    }
    if (this.#options.ephemeral) return this.#outcome('completed', vars);
    const variables = this.#publicVars();
    const hasOutput = this.#decl.props.some((p) => p.name === 'output');
    await this.#options.state.complete(this.#session, this.#decl.name, {
      variables,
      digest: this.#definition.digest,
      ...(hasOutput ? { output: vars } : {}),
    });
    if (this.#decl.loop) {
      const loop = {
        next_iteration: this.#iteration,
        terminal_reason: this.#terminalReason as TerminalReason,
        instance_id: this.#session,
      };
      await this.#options.state.saveLoop(this.#session, this.#decl.name, loop);
    }
    await this.#options.state.setLatest(this.#decl.name, this.#session);
    return this.#outcome('completed', vars);
  }

  get #hasOutput(): boolean {
    return this.#decl.props.some((p) => p.name === 'output');
  }

  /** The type a type alias of the program names, for the check of the return type. */
  #alias(name: string): TypeNode | undefined {
    const b = this.#program.namespace.bindings.get(name);
    return b?.kind === 'decl' && b.decl.kind === 'TypeAlias' ? b.decl.type : undefined;
  }

  /** The `output:` projection, or every pipeline variable that is not internal. */
  async #result(): Promise<MhlObject> {
    const output = this.#decl.props.find((p) => p.name === 'output')?.value;
    if (output) {
      await this.#initMemFor(output);
      const v = await this.#scope.interpreter.evaluate(output, this.#env(), this.#options.signal);
      if (!isObject(v)) throw new LangError('TYPE', 'output: must be an object', output.span);
      return this.#options.services.redactor.redactValue(fromJson(toPlain(v))) as MhlObject;
    }
    return this.#publicVars();
  }

  /** Every pipeline variable a result shows: JSON data, not `mem`, not internal (`__…`). */
  #publicVars(): MhlObject {
    if (!this.#vars) return newObject();
    const out = newObject();
    this.#vars.forEachOwn((k, v) => {
      if (k.startsWith('__') || this.#mem.has(k) || !isJsonValue(v)) return;
      out[k] = fromJson(toPlain(v));
    });
    return this.#options.services.redactor.redactValue(out) as MhlObject;
  }

  #outcome(status: RunStatus, vars: MhlObject, extra: Partial<RunOutcome> = {}): RunOutcome {
    return {
      status,
      pipeline: this.#decl.name,
      session: this.#session,
      resumed: this.#resumed,
      executed: this.#executed,
      skipped: this.#skipped,
      broke: this.#broke,
      loop: this.#decl.loop,
      iterations: this.#iteration,
      terminalReason: this.#terminalReason,
      vars,
      ...(this.#options.reportState
        ? { state: this.#publicVars(), breakReason: this.#breakReason }
        : {}),
      ...extra,
    };
  }

  async #failure(thrown: unknown): Promise<RunOutcome> {
    let e =
      thrown instanceof CompleteSignal
        ? new LangError('INVALID', 'complete() ends a run only from a step or a lifecycle hook')
        : thrown;
    if (!(e instanceof PauseSignal) && !this.#options.signal.aborted) {
      const recovered = await this.#failureHooks(e).catch((hookError: unknown) => hookError);
      if (recovered === true) {
        try {
          await this.#sessionEnd(undefined);
          return await this.#finish();
        } catch (after) {
          e = after;
        }
      } else if (recovered !== false) e = recovered;
    }
    if (e instanceof PauseSignal && this.#failedStep) {
      const at = this.#steps.findIndex((s) => s.name === this.#failedStep);
      await this.#checkpoint(at, this.#completed.at(-1) ?? '', e.reason ?? '');
      const reason = typeof e.reason === 'string' ? this.#shown(e.reason) : (e.reason ?? null);
      return this.#outcome('paused', this.#publicVars(), { pauseReason: reason });
    }
    if (this.#options.signal.aborted) {
      const step = this.#steps.find((s) => s.name === this.#failedStep);
      const cancelled = new RunFailure('canceled', RUN_ERROR_CODES.CANCELLED, 'run canceled', {
        step: this.#failedStep,
        span: step?.nameSpan,
      });
      return this.#outcome('canceled', this.#publicVars(), {
        error: this.#reported(cancelled, 'canceled', this.#failedStep),
      });
    }
    if (e instanceof InvalidInputsError) {
      const first = this.#decl.inputs.find((i) => i.name === e.missing[0]);
      const at = first?.span ?? this.#decl.nameSpan;
      return this.#outcome('failed', newObject(), {
        error: {
          ...this.#reported(new LangError(e.code, e.summary, at), 'invalid_inputs', undefined),
          missing: e.missing,
          unknown: e.unknown,
        },
      });
    }
    if (e instanceof HookFailure)
      return this.#outcome('failed', this.#publicVars(), {
        error: this.#reported(e, 'hook_failed', e.step),
      });
    if (e instanceof RunFailure)
      return this.#outcome('failed', this.#publicVars(), {
        error: this.#reported(e, e.kind, e.step),
      });
    if (e instanceof LangError)
      return this.#outcome('failed', this.#publicVars(), {
        error: this.#reported(e, 'other', undefined),
      });
    throw e;
  }

  /** The outcome's error: redacted, with paths as clients may see them. */
  #reported(
    e: RunFailure | LangError,
    kind: FailureKind,
    step: string | undefined,
  ): NonNullable<RunOutcome['error']> {
    const redact = (text: string) => this.#shown(this.#options.services.redactor.redact(text));
    const info = errorInfo(e, this.#decl.nameSpan);
    return {
      message: redact(e instanceof LangError && kind === 'invalid_inputs' ? e.summary : e.message),
      kind,
      ...stepOf(step),
      code: info.code,
      file: this.#shown(info.span.file),
      line: info.span.line,
      col: info.span.col,
      summary: redact(info.summary),
      hint: redact(info.hint),
    };
  }

  /**
   * `stop_failure`, then `session_end`, once, for a run that failed with its scope set up (not
   * for bad inputs or a refused resume). True when `stop_failure` called `complete()`: the run
   * then ends normally. A hook's own raise rejects, and becomes the run's error.
   */
  async #failureHooks(e: unknown): Promise<boolean> {
    if (this.#failureHandled || !this.#vars) return false;
    this.#failureHandled = true;
    const message = this.#shown(this.#options.services.redactor.redact(messageOf(e)));
    const kind: FailureKind =
      e instanceof HookFailure ? 'hook_failed' : e instanceof RunFailure ? e.kind : 'other';
    const step = e instanceof HookFailure || e instanceof RunFailure ? e.step : undefined;
    if ((await this.#hooks.stopFailure(message, kind, step)) === 'complete') {
      this.#failedStep = undefined;
      this.#ended();
      return true;
    }
    await this.#sessionEnd(message);
    return false;
  }

  #emit(type: RunEvent['type'], step: string, index: number): void {
    this.#options.onEvent?.({ type, step, index, total: this.#steps.length });
  }
}

/** How a step's raise reads in `step_end`: paused, timed out or failed. */
function statusOf(e: unknown, stepSignal?: AbortSignal): StepStatus {
  if (e instanceof PauseSignal) return 'paused';
  if ((e instanceof RunFailure && e.kind === 'step_timeout') || stepSignal?.aborted)
    return 'timed_out';
  return 'failed';
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The value of a literal `null`, bool, number or plain string (no interpolation), exactly what
 * evaluating it gives; undefined for anything else, which is evaluated. `null` comes back as
 * undefined too (and is evaluated): `??` could not tell it apart.
 */
function scalarLiteral(e: Expr): Value | undefined {
  switch (e.kind) {
    case 'Bool':
    case 'Number':
      return e.value;
    case 'String':
      return e.segments.length === 1 && typeof e.segments[0] === 'string'
        ? e.segments[0]
        : e.segments.length === 0
          ? ''
          : undefined;
    default:
      return undefined;
  }
}

function stepOf(step: string | undefined): { step?: string } {
  return step === undefined ? {} : { step };
}

/**
 * The start of a pipeline run: a fresh one (its session, its inputs checked, its variables
 * declared, `session_start`) or a resumed one (its latest checkpoint's state restored). A
 * fresh run whose variables are literals, with no `context:` and no `session_start` hook,
 * begins synchronously: no promise, no await.
 */
import type { Expr } from '../../lang/index.js';
import type { Checkpoint } from '../checkpoints/checkpoints.js';
import { Environment } from '../interpreter/environment.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { isObject, type MhlObject, newObject, toPlain, type Value } from '../interpreter/values.js';
import { signalOf } from '../services/cancellation.js';
import { REDACTED } from '../services/redact.js';
import { checkInputs } from './inputs.js';
import { RunFailure } from './run-failure.js';
import { emit, ended, indexOf, type RunState, setting } from './run-state.js';
import { mentionedNames, nullExpr, restored } from './settings.js';

/**
 * Sets up a fresh or resumed run; returns the index of the first step to run, synchronously
 * when nothing needs waiting for (a fresh run without `context:` whose variables are literals).
 */
export function begin(run: RunState): number | Promise<number> {
  if (run.options.resume) return beginResumed(run);
  return beginFresh(run);
}

/** A resumed run: its latest checkpoint's state, or a fresh start when there is none. */
async function beginResumed(run: RunState): Promise<number> {
  const { state, resume, force, inputs } = run.options;
  const name = run.decl.name;
  if (resume) {
    const session = run.options.session ?? (await state.latest(name));
    const record = session ? await state.load(session, name) : undefined;
    if (session && record) {
      if (record.digest && record.digest !== run.definition.digest && !force) {
        throw new RunFailure(
          'definition_mismatch',
          RUN_ERROR_CODES.DEFINITION_MISMATCH,
          `${name} changed since session ${session} was checkpointed; rerun without --resume, or pass --force to resume anyway`,
          { span: run.decl.nameSpan },
        );
      }
      run.session = session;
      run.resumed = true;
      run.options.onEvent?.({
        type: 'run_start',
        step: '',
        index: 0,
        total: run.steps.length,
        session,
      });
      checkInputs(
        name,
        run.decl.inputs.map((i) => ({ ...i, default: i.default ?? nullExpr(i) })),
        inputs,
      );
      await loadContextVars(run);
      restore(run, record, inputs);
      const next = record.next_step === '' ? run.steps.length : indexOf(run, record.next_step);
      refuseLostSecrets(run, savedVars(record), next, session);
      run.skipped.push(...record.completed_steps);
      run.completed = [...record.completed_steps];
      run.iteration = run.decl.loop
        ? ((await state.loadLoop(session, name))?.next_iteration ?? 0)
        : 0;
      for (const [i, step] of run.steps.entries())
        if (i < next) emit(run, 'step_skipped', step.name, i);
      return next;
    }
  }
  const fresh = beginFresh(run);
  return typeof fresh === 'number' ? fresh : await fresh;
}

/** A fresh run: its session, its inputs checked, its variables declared. */
function beginFresh(run: RunState): number | Promise<number> {
  const { state, inputs } = run.options;
  const name = run.decl.name;
  run.session = run.options.session ?? state.newSessionId();
  run.options.onEvent?.({
    type: 'run_start',
    step: '',
    index: 0,
    total: run.steps.length,
    session: run.session,
  });
  checkInputs(name, run.decl.inputs, inputs);
  // Waited for only when the pipeline reads a previous run's state (`context:`).
  const declaring =
    setting(run, 'context') !== undefined
      ? loadContextVars(run).then(() => initVars(run, inputs))
      : initVars(run, inputs);
  if (declaring === undefined && !run.hooks.has('session_start')) return run.entry;
  return startSession(run, declaring);
}

/** The rest of a fresh start: variables still being declared, then `session_start`. */
async function startSession(run: RunState, declaring: Promise<void> | undefined): Promise<number> {
  if (declaring !== undefined) await declaring;
  // Once per session: a resumed run continues the session it started in.
  if ((await run.hooks.sessionStart(new Date(run.startedAt).toISOString())) === 'complete')
    ended(run);
  return run.entry;
}

async function loadContextVars(run: RunState): Promise<void> {
  const config = setting(run, 'context');
  if (!isObject(config)) return;
  const source = typeof config['source'] === 'string' ? config['source'] : 'latest';
  const session = source.startsWith('session:')
    ? source.slice(8)
    : await run.options.state.latestCompleted(run.decl.name);
  const result = session ? (await run.options.state.readResult(session))?.variables : undefined;
  if (!result && config['require'] === true) {
    throw new RunFailure(
      'other',
      RUN_ERROR_CODES.CONTEXT_REQUIRED,
      `${run.decl.name} needs the state of a previous completed run (context.require), and there is none`,
      { span: run.decl.props.find((p) => p.name === 'context')?.span },
    );
  }
  run.contextVars = isObject(result) ? result : newObject();
}

/**
 * Declares inputs and pipeline variables in a fresh pipeline scope: synchronously (undefined)
 * while every value is given or a literal, from the first one to evaluate on in a promise.
 */
export function initVars(
  run: RunState,
  inputs: Readonly<Record<string, Value>>,
): Promise<void> | undefined {
  const env = new Environment(run.scope.moduleEnv(run.program.root));
  const { inputs: declared, vars } = run.decl;
  for (let i = 0; i < declared.length; i++) {
    const input = declared[i] as (typeof declared)[number];
    const value =
      input.name in inputs
        ? (inputs[input.name] as Value)
        : input.default
          ? scalarLiteral(input.default)
          : null;
    if (value === undefined) return initVarsFrom(run, env, inputs, i, 0);
    env.declare(input.name, value);
  }
  for (let i = 0; i < vars.length; i++) {
    const v = vars[i] as (typeof vars)[number];
    if (v.storage === 'mem') continue;
    const value = scalarLiteral(v.value);
    if (value === undefined) return initVarsFrom(run, env, inputs, declared.length, i);
    env.declare(v.name, value, v.storage === 'const');
  }
  run.vars = run.mem.declareIn(env);
  return undefined;
}

/** `initVars` from input `fromInput` and variable `fromVar` on, evaluating as it goes. */
async function initVarsFrom(
  run: RunState,
  env: Environment,
  inputs: Readonly<Record<string, Value>>,
  fromInput: number,
  fromVar: number,
): Promise<void> {
  const { signal } = run.options;
  for (const input of run.decl.inputs.slice(fromInput)) {
    const value =
      input.name in inputs
        ? (inputs[input.name] as Value)
        : input.default
          ? (scalarLiteral(input.default) ??
            (await run.scope.interpreter.evaluate(input.default, env, signalOf(signal))))
          : null;
    env.declare(input.name, value);
  }
  for (const v of run.decl.vars.slice(fromVar)) {
    // A `mem` variable is get-or-init: its initializer runs when a step first mentions it.
    if (v.storage === 'mem') continue;
    // A scalar literal (`var out = ""`) needs no evaluation: no await, so no microtask.
    const value =
      scalarLiteral(v.value) ??
      (await run.scope.interpreter.evaluate(v.value, env, signalOf(signal)));
    env.declare(v.name, value, v.storage === 'const');
  }
  run.vars = run.mem.declareIn(env);
}

function savedVars(record: Checkpoint): MhlObject {
  return restored(record.variables) as MhlObject;
}

/**
 * A checkpoint holds a secret (`vault()`, a sensitive `env()`) as `[REDACTED]`, never its
 * value. A pipeline variable restored so and read by a step still to run (any step, for a loop
 * or a workflow that may `goto`) or by a property would hand that placeholder on as the
 * credential: the resume fails first, naming the variable. Re-resolving is not sound: the
 * checkpoint does not record which expression produced the value, nor, over MCP, which
 * credential record the first call chose.
 * @throws RunFailure `SECRET_NOT_RESUMABLE`
 */
function refuseLostSecrets(run: RunState, saved: MhlObject, next: number, session: string): void {
  const ahead = run.decl.loop || run.decl.flavor === 'workflow' ? run.steps : run.steps.slice(next);
  const needed = new Set<string>();
  for (const node of [...ahead, ...run.decl.props])
    for (const name of mentionedNames(node)) needed.add(name);
  for (const v of run.decl.vars) {
    const value = saved[v.name];
    if (value === undefined || !needed.has(v.name)) continue;
    if (!JSON.stringify(toPlain(value)).includes(REDACTED)) continue;
    throw new RunFailure(
      'other',
      RUN_ERROR_CODES.SECRET_NOT_RESUMABLE,
      `pipeline variable '${v.name}' held a secret when session ${session} was checkpointed; checkpoints keep it only as ${REDACTED}, so the resumed run cannot use it`,
      { span: v.span },
    );
  }
}

function restore(run: RunState, record: Checkpoint, inputs: Readonly<Record<string, Value>>): void {
  const env = new Environment(run.scope.moduleEnv(run.program.root));
  const vars = savedVars(record);
  run.mem.restore(vars['__mem']);
  const consts = new Set(run.decl.vars.filter((v) => v.storage === 'const').map((v) => v.name));
  for (const input of run.decl.inputs)
    env.declare(
      input.name,
      input.name in inputs ? (inputs[input.name] as Value) : (vars[input.name] ?? null),
    );
  for (const v of run.decl.vars)
    if (v.storage !== 'mem') env.declare(v.name, vars[v.name] ?? null, consts.has(v.name));
  run.vars = run.mem.declareIn(env);
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

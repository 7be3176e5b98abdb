/**
 * The end of a pipeline run: the `output:` projection (or the public variables) checked
 * against the signature's return type, the result record, and the `RunOutcome`; for a run
 * that raised, its failure hooks and the outcome that reports it (paused, canceled, failed).
 * An ephemeral run without `output:` builds its result synchronously.
 */
import type { TypeNode } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import type { TerminalReason } from '../checkpoints/checkpoint-records.schema.js';
import { RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { CompleteSignal, PauseSignal } from '../interpreter/signals.js';
import {
  fromJson,
  isJsonValue,
  isObject,
  type MhlObject,
  newObject,
  toPlain,
  type Value,
} from '../interpreter/values.js';
import { signalOf } from '../services/cancellation.js';
import { HookFailure } from './hooks.js';
import { InvalidInputsError, matchesType, typeText } from './inputs.js';
import { checkpoint } from './run-checkpoint.js';
import { errorInfo, type FailureKind, RunFailure } from './run-failure.js';
import { ended, env, initMemFor, type RunState, sessionEnd } from './run-state.js';
import type { RunOutcome, RunStatus } from './run-types.js';

export async function finish(run: RunState): Promise<RunOutcome> {
  // Without `output:` the result is the public variables, built synchronously.
  const vars = hasOutput(run) ? await result(run) : publicVars(run);
  const returns = run.decl.signature?.returns;
  if (returns && !matchesType(vars, returns, (name) => alias(run, name))) {
    throw new LangError(
      'TYPE',
      `the result of ${run.decl.name} must be ${typeText(returns)}, as its signature declares`,
      returns.span,
    );
  }
  if (run.options.ephemeral) return outcome(run, 'completed', vars);
  const variables = publicVars(run);
  const withOutput = run.decl.props.some((p) => p.name === 'output');
  await run.options.state.complete(run.session, run.decl.name, {
    variables,
    digest: run.definition.digest,
    ...(withOutput ? { output: vars } : {}),
  });
  if (run.decl.loop) {
    const loop = {
      next_iteration: run.iteration,
      terminal_reason: run.terminalReason as TerminalReason,
      instance_id: run.session,
    };
    await run.options.state.saveLoop(run.session, run.decl.name, loop);
  }
  await run.options.state.setLatest(run.decl.name, run.session);
  return outcome(run, 'completed', vars);
}

export function hasOutput(run: RunState): boolean {
  return run.decl.props.some((p) => p.name === 'output');
}

/** The type a type alias of the program names, for the check of the return type. */
function alias(run: RunState, name: string): TypeNode | undefined {
  const b = run.program.namespace.bindings.get(name);
  return b?.kind === 'decl' && b.decl.kind === 'TypeAlias' ? b.decl.type : undefined;
}

/** The `output:` projection, or every pipeline variable that is not internal. */
async function result(run: RunState): Promise<MhlObject> {
  const output = run.decl.props.find((p) => p.name === 'output')?.value;
  if (output) {
    await initMemFor(run, output);
    const v = await run.scope.interpreter.evaluate(output, env(run), signalOf(run.options.signal));
    if (!isObject(v)) throw new LangError('TYPE', 'output: must be an object', output.span);
    return run.options.services.redactor.redactValue(fromJson(toPlain(v))) as MhlObject;
  }
  return publicVars(run);
}

/** Every pipeline variable a result shows: JSON data, not `mem`, not internal (`__…`). */
export function publicVars(run: RunState): MhlObject {
  if (!run.vars) return newObject();
  const out = newObject();
  run.vars.forEachOwn((k, v) => {
    if (k.startsWith('__') || run.mem.has(k) || !isJsonValue(v)) return;
    out[k] = fromJson(toPlain(v));
  });
  return run.options.services.redactor.redactValue(out) as MhlObject;
}

/**
 * The one place a `RunOutcome` is built, so the one place what leaves the interpreter is made
 * safe to show: a pause or break reason may be any value a step computed, a `vault()` or
 * sensitive `env()` value included, so it is redacted (nested strings and keys too) and its
 * paths made relative here, before any surface, CLI or checkpoint sees it.
 */
export function outcome(
  run: RunState,
  status: RunStatus,
  vars: MhlObject,
  extra: Partial<RunOutcome> = {},
): RunOutcome {
  const { pauseReason, ...rest } = extra;
  return {
    status,
    pipeline: run.decl.name,
    session: run.session,
    resumed: run.resumed,
    executed: run.executed,
    skipped: run.skipped,
    broke: run.broke,
    loop: run.decl.loop,
    iterations: run.iteration,
    terminalReason: run.terminalReason,
    vars,
    ...(run.options.reportState
      ? { state: publicVars(run), breakReason: shownValue(run, run.breakReason) }
      : {}),
    ...rest,
    ...(pauseReason !== undefined ? { pauseReason: shownValue(run, pauseReason) } : {}),
  };
}

/** A value as a client may see it: every registered secret redacted, server paths relative. */
function shownValue(run: RunState, v: Value): Value {
  const redacted = run.options.services.redactor.redactValue(v);
  return typeof redacted === 'string' ? run.shown(redacted) : redacted;
}

export async function failure(run: RunState, thrown: unknown): Promise<RunOutcome> {
  let e =
    thrown instanceof CompleteSignal
      ? new LangError('INVALID', 'complete() ends a run only from a step or a lifecycle hook')
      : thrown;
  if (!(e instanceof PauseSignal) && !run.options.signal.aborted) {
    const recovered = await failureHooks(run, e).catch((hookError: unknown) => hookError);
    if (recovered === true) {
      try {
        await sessionEnd(run, undefined);
        return await finish(run);
      } catch (after) {
        e = after;
      }
    } else if (recovered !== false) e = recovered;
  }
  if (e instanceof PauseSignal && run.failedStep) {
    const at = run.steps.findIndex((s) => s.name === run.failedStep);
    await checkpoint(run, at, run.completed.at(-1) ?? '', e.reason ?? '');
    return outcome(run, 'paused', publicVars(run), { pauseReason: e.reason ?? null });
  }
  if (run.options.signal.aborted) {
    const step = run.steps.find((s) => s.name === run.failedStep);
    const cancelled = new RunFailure('canceled', RUN_ERROR_CODES.CANCELLED, 'run canceled', {
      step: run.failedStep,
      span: step?.nameSpan,
    });
    return outcome(run, 'canceled', publicVars(run), {
      error: reported(run, cancelled, 'canceled', run.failedStep),
    });
  }
  if (e instanceof InvalidInputsError) {
    const first = run.decl.inputs.find((i) => i.name === e.missing[0]);
    const at = first?.span ?? run.decl.nameSpan;
    return outcome(run, 'failed', newObject(), {
      error: {
        ...reported(run, new LangError(e.code, e.summary, at), 'invalid_inputs', undefined),
        missing: e.missing,
        unknown: e.unknown,
      },
    });
  }
  if (e instanceof HookFailure)
    return outcome(run, 'failed', publicVars(run), {
      error: reported(run, e, 'hook_failed', e.step),
    });
  if (e instanceof RunFailure)
    return outcome(run, 'failed', publicVars(run), {
      error: reported(run, e, e.kind, e.step),
    });
  if (e instanceof LangError)
    return outcome(run, 'failed', publicVars(run), {
      error: reported(run, e, 'other', undefined),
    });
  throw e;
}

/** The outcome's error: redacted, with paths as clients may see them. */
function reported(
  run: RunState,
  e: RunFailure | LangError,
  kind: FailureKind,
  step: string | undefined,
): NonNullable<RunOutcome['error']> {
  const redact = (text: string) => run.shown(run.options.services.redactor.redact(text));
  const info = errorInfo(e, run.decl.nameSpan);
  return {
    message: redact(e instanceof LangError && kind === 'invalid_inputs' ? e.summary : e.message),
    kind,
    ...stepOf(step),
    code: info.code,
    file: run.shown(info.span.file),
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
async function failureHooks(run: RunState, e: unknown): Promise<boolean> {
  if (run.failureHandled || !run.vars) return false;
  run.failureHandled = true;
  const message = run.shown(run.options.services.redactor.redact(messageOf(e)));
  const kind: FailureKind =
    e instanceof HookFailure ? 'hook_failed' : e instanceof RunFailure ? e.kind : 'other';
  const step = e instanceof HookFailure || e instanceof RunFailure ? e.step : undefined;
  if ((await run.hooks.stopFailure(message, kind, step)) === 'complete') {
    run.failedStep = undefined;
    ended(run);
    return true;
  }
  await sessionEnd(run, message);
  return false;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function stepOf(step: string | undefined): { step?: string } {
  return step === undefined ? {} : { step };
}

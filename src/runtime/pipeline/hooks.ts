/**
 * Pipeline lifecycle hooks (digest §6.2): `session_start`, `step_start`, `step_end`,
 * `stop_failure` and `session_end`, each a one-parameter lambda given an `info` object.
 * docs/language.md ("Lifecycle hooks") states when each runs; the runner decides the moments,
 * this module calls a hook and turns what it does into one of three answers: it returned,
 * it called `complete()`, or it raised (a `HookFailure` naming the hook and its position).
 */
import type { PipelineDecl, Property } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import type { Environment } from '../interpreter/environment.js';
import type { Interpreter } from '../interpreter/interpreter.js';
import { CompleteSignal, PauseSignal } from '../interpreter/signals.js';
import {
  callArgs,
  FunctionValue,
  type MhlObject,
  newObject,
  type Value,
} from '../interpreter/values.js';

export const HOOK_NAMES = [
  'session_start',
  'step_start',
  'step_end',
  'stop_failure',
  'session_end',
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** What a hook call did: nothing special, or `complete()` (end the run normally). */
export type HookAnswer = 'returned' | 'complete';

// The answer for a hook the pipeline does not declare, given before any hook information is
// built: a run calls these at every step whether or not it has hooks (that information was
// about a seventh of the bytes a trivial synchronous call allocated).
const RETURNED: Promise<HookAnswer> = Promise.resolve('returned');

/** A hook raised: the run fails with this (kind `hook_failed`), at the hook's position. */
export class HookFailure extends LangError {
  readonly hook: HookName;
  readonly step: string | undefined;
  constructor(hook: HookName, prop: Property, message: string, step?: string, cause?: unknown) {
    const at = step === undefined ? '' : ` for step "${step}"`;
    super('HOOK', `hook ${hook} failed${at}: ${message}`, prop.span, { cause });
    this.hook = hook;
    this.step = step;
  }
}

export interface HookRuntime {
  readonly interpreter: Interpreter;
  /** The pipeline scope hooks run in (they may read and assign pipeline variables). */
  readonly env: () => Environment;
  /** Initialises the `mem` variables an expression mentions (get-or-init). */
  readonly initMem: (node: object) => Promise<void>;
  /** Error text as a client may see it (redacted, paths relative). */
  readonly shown: (text: string) => string;
  /** The fields every `info` carries, as they are now. */
  readonly run: () => RunInfo;
  /** The run's signal (hooks run outside any step deadline). */
  readonly signal: AbortSignal;
}

const HOOK_NAME_SET: ReadonlySet<string> = new Set(HOOK_NAMES);
/** Each pipeline's declared hooks, found once: every run of it (each synchronous call) asks. */
const hooksOf = new WeakMap<PipelineDecl, ReadonlyMap<HookName, Property>>();

function declaredHooks(decl: PipelineDecl): ReadonlyMap<HookName, Property> {
  let hooks = hooksOf.get(decl);
  if (hooks === undefined) {
    hooks = new Map(
      decl.props.filter((p) => HOOK_NAME_SET.has(p.name)).map((p) => [p.name as HookName, p]),
    );
    hooksOf.set(decl, hooks);
  }
  return hooks;
}

export class PipelineHooks {
  readonly #props: ReadonlyMap<HookName, Property>;
  /** The runtime, or what makes it: built on the first hook call (most pipelines have none). */
  #runtime: HookRuntime | (() => HookRuntime);
  /** The end of the queue of hook calls, once there was one: they never overlap (see `call`). */
  #queue: Promise<unknown> | undefined;
  #sessionEnded = false;

  constructor(decl: PipelineDecl, rt: HookRuntime | (() => HookRuntime)) {
    this.#props = declaredHooks(decl);
    this.#runtime = rt;
  }

  get #rt(): HookRuntime {
    if (typeof this.#runtime === 'function') this.#runtime = this.#runtime();
    return this.#runtime;
  }

  has(name: HookName): boolean {
    return this.#props.has(name);
  }

  sessionStart(startedAt: string): Promise<HookAnswer> {
    if (!this.#props.has('session_start')) return RETURNED;
    return this.call('session_start', this.#info([['started_at', startedAt]]));
  }

  stepStart(step: string, group: string | undefined): Promise<HookAnswer> {
    if (!this.#props.has('step_start')) return RETURNED;
    return this.call(
      'step_start',
      this.#info([
        ['step', step],
        ['group', group ?? null],
      ]),
      step,
    );
  }

  /** `step_end` for a step that began at `began` (ms) and ended with `status`. */
  stepEnd(
    step: string,
    group: string | undefined,
    status: StepStatus,
    error: unknown,
    began: number,
  ): Promise<HookAnswer> {
    if (!this.#props.has('step_end')) return RETURNED;
    const message = error === undefined || error instanceof PauseSignal ? null : this.#text(error);
    const info = this.#info([
      ['step', step],
      ['group', group ?? null],
      ['status', status],
      ['error', message],
      ['duration_ms', Date.now() - began],
    ]);
    return this.call('step_end', info, step);
  }

  stopFailure(error: string, kind: string, step: string | undefined): Promise<HookAnswer> {
    if (!this.#props.has('stop_failure')) return RETURNED;
    const info = this.#info([
      ['error', error],
      ['kind', kind],
      ['step', step ?? null],
    ]);
    return this.call('stop_failure', info);
  }

  /**
   * `session_end`, at most once per run; complete() in it changes nothing (the run is ending).
   * Undefined (nothing to wait for) when it already ran or the pipeline declares none.
   */
  sessionEnd(
    error: string | undefined,
    broke: boolean,
    executed: readonly string[],
  ): Promise<void> | undefined {
    if (this.#sessionEnded) return undefined;
    this.#sessionEnded = true;
    if (!this.#props.has('session_end')) return undefined;
    return this.#sessionEnd(error, broke, executed);
  }

  async #sessionEnd(
    error: string | undefined,
    broke: boolean,
    executed: readonly string[],
  ): Promise<void> {
    const info = this.#info([
      ['status', error === undefined ? 'completed' : 'failed'],
      ['error', error ?? null],
      ['broke', broke],
      ['executed', [...executed]],
    ]);
    await this.call('session_end', info);
  }

  #info(extra: readonly [string, Value][]): MhlObject {
    const run = this.#rt.run();
    return newObject([
      ['pipeline', run.pipeline],
      ['session', run.session],
      ['iteration', run.iteration],
      ['resumed', run.resumed],
      ...extra,
    ]);
  }

  #text(error: unknown): string {
    return this.#rt.shown(error instanceof Error ? error.message : String(error));
  }

  /**
   * Calls hook `name` with `info` (a no-op when the pipeline declares none). The hook's value
   * is evaluated at each call in the current pipeline scope, so a loop iteration's fresh
   * variables are the ones its closure sees. Calls run one at a time, in the order they are
   * made: the branches of a parallel group share the pipeline scope their hooks write to, and
   * `events += [x]` from two hooks at once would otherwise lose one of the writes.
   */
  call(name: HookName, info: MhlObject, step?: string): Promise<HookAnswer> {
    const prop = this.#props.get(name);
    if (!prop) return Promise.resolve('returned');
    const signal = this.#rt.signal;
    const run = (this.#queue ?? Promise.resolve()).then(() =>
      this.#call(name, prop, info, signal, step),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #call(
    name: HookName,
    prop: Property,
    info: MhlObject,
    signal: AbortSignal,
    step: string | undefined,
  ): Promise<HookAnswer> {
    try {
      await this.#rt.initMem(prop.value);
      const fn = await this.#rt.interpreter.evaluate(prop.value, this.#rt.env(), signal);
      if (!(fn instanceof FunctionValue))
        throw new LangError('TYPE', `${name} must be a lambda taking one parameter, (info) -> …`);
      await this.#rt.interpreter.invoke(fn, callArgs([info]), signal, prop.span);
      return 'returned';
    } catch (e) {
      if (e instanceof CompleteSignal) return 'complete';
      if (signal.aborted) throw e;
      if (e instanceof PauseSignal)
        throw new HookFailure(name, prop, 'pause() cannot be called in a hook', step);
      if (e instanceof HookFailure) throw e;
      const message = e instanceof Error ? e.message : String(e);
      throw new HookFailure(name, prop, this.#rt.shown(message), step, e);
    }
  }
}

/** The fields every hook's `info` carries. */
export interface RunInfo {
  readonly pipeline: string;
  readonly session: string;
  /** 1-based loop iteration; 1 for a plain pipeline. */
  readonly iteration: number;
  readonly resumed: boolean;
}

/** How a step ended, as `step_end` reports it. */
export type StepStatus = 'completed' | 'failed' | 'timed_out' | 'paused';

/**
 * A synchronous workflow call, run to its answer within the call's time limit: the workflow
 * runs with throwaway state (in memory, gone with the call). A pause is never a success: it is
 * answered as `pauseMode` says (`pause.ts`): an `input_required` result on 2026-07-28, an
 * `elicitation/create` question on a legacy session whose client takes one, else a
 * `WORKFLOW_PAUSED` error; the client's answer resumes the run at the pausing step from its
 * checkpoint, so the steps before it do not run again. On 2026-07-28 an answer is read under
 * the pausing step's key: with `requestState` for the pause it sealed, without one for the
 * pauses of a fresh run; a pause with no answer is asked (again). Knows nothing of sockets or
 * streams.
 */
import type { Workflow } from '../catalog/index.js';
import type { RequestContext, RequestLimit } from '../protocol/index.js';
import type { CallContext } from '../runs/index.js';
import {
  type Cancellation,
  type Deadline,
  deadline,
  type ExecuteOptions,
  fromJson,
  isObject,
  type RunOutcome,
  signalOf,
  startWorkflow,
  toPlain,
} from '../runtime/index.js';
import { MemoryStore } from '../store/index.js';
import { forwardOutput } from './logging.js';
import {
  answerFor,
  checkInputResponses,
  elicitationParams,
  inputKey,
  inputRequiredResult,
  invalidRetry,
  MAX_ELICIT_ROUNDS,
  mergeAnswer,
  openRequestState,
  type PauseAnswer,
  type PauseCheckpoint,
  pausedResult,
  pauseMode,
  pauseReasonText,
  readAnswer,
  restoreCheckpoint,
  takeCheckpoint,
} from './pause.js';
import type { PipelineSurfaceOptions } from './pipelines.js';
import { type ToolResult, toolError } from './tools.js';

/**
 * Runs a synchronous call to its answer, bounded by the call's time limit; a client's answer to
 * a pause resumes the run at the pausing step. Not async: a first run that finishes without
 * waiting (see `startWorkflow`) and does not pause is answered at once; anything else goes on
 * in `runRounds`.
 * @throws RpcError -32602 for a 2026-07-28 retry whose `requestState` or `inputResponses` is
 * unusable (see `openRequestState`, `checkInputResponses`, `answerFor`).
 */
export function runCall(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
  options: PipelineSurfaceOptions,
): ToolResult | Promise<ToolResult> {
  // A retry carries state to check and answers to apply, before anything runs.
  if (ctx.requestState !== undefined || ctx.inputResponses !== undefined) {
    return runRounds(workflow, inputs, call, ctx, signal, options);
  }
  const limit = limitOf(workflow, call, ctx, signal);
  let first: OnceResult | Promise<OnceResult>;
  try {
    first = runOnce(workflow, inputs, call, ctx, limit.signal, options, undefined);
  } catch (error) {
    limit.dispose();
    throw error;
  }
  if (first instanceof Promise || first.checkpoint !== undefined) {
    return runRounds(workflow, inputs, call, ctx, signal, options, { limit, first });
  }
  try {
    const { outcome } = first;
    if (limit.expired() && outcome.status === 'canceled') return timeoutResult(call);
    return toResult(outcome);
  } finally {
    limit.dispose();
  }
}

/** A call's time limit: a deadline of its own, or the request's (`RequestContext.limit`). */
type CallLimit = Deadline | RequestLimit;

/**
 * The call's time limit: on the request's own cancellation when the run has no other, which
 * makes no AbortSignal at all for a call answered without waiting (see `RequestAbort`).
 */
function limitOf(
  workflow: Workflow,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
): CallLimit {
  const what = `tools/call ${workflow.name}`;
  return ctx.limit !== undefined && signal === ctx.cancellation
    ? ctx.limit(call.timeoutMs, what)
    : deadline(signalOf(signal), call.timeoutMs, what);
}

/**
 * `runCall`'s rounds: the first run (and its time limit) when `runCall` started it already,
 * then one more run per answered pause.
 */
async function runRounds(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
  options: PipelineSurfaceOptions,
  begun?: { limit: CallLimit; first: OnceResult | Promise<OnceResult> },
): Promise<ToolResult> {
  let current = inputs;
  let resume: PauseCheckpoint | undefined;
  // How a pause is answered on this request; it depends on the request alone.
  const mode = pauseMode(ctx);
  const modern = mode === 'input_required';
  // The steps before a pause ran with these: a retry must carry the same to resume there.
  const paused = { inputs, cwd: call.cwd };
  if (!modern && ctx.requestState !== undefined) {
    // A state this request cannot use must not be ignored: the run would start over and repeat
    // the side effects of the steps before the pause.
    throw invalidRetry(
      'requestState needs a 2026-07-28 request whose client declares form elicitation',
      { field: 'requestState', reason: 'unusable' },
    );
  }
  // 2026-07-28 answers, each used at most once per call: a step that pauses again is asked again.
  const responses = modern ? checkInputResponses(ctx.inputResponses) : {};
  // Made on the first answer used: most calls never pause.
  let answered: Set<string> | undefined;
  if (modern && ctx.requestState !== undefined) {
    const checkpoint = await openRequestState(workflow, ctx, paused, ctx.requestState);
    // The paused run's inputs, with the answers of earlier rounds: a retry sends only the call's.
    current = checkpoint.inputs ?? current;
    const answer = answerFor(responses, checkpoint.key);
    // Not answered: ask for it again, from the same checkpoint, with nothing run.
    if (answer === undefined) {
      return inputRequiredResult(workflow, ctx, paused, current, checkpoint);
    }
    const applied = applyAnswer(workflow, current, checkpoint, answer);
    if ('result' in applied) return applied.result;
    answered = new Set([checkpoint.key]);
    current = applied.inputs;
    resume = checkpoint;
  }
  const limit = begun?.limit ?? limitOf(workflow, call, ctx, signal);
  try {
    for (let round = 1; ; round += 1) {
      const run =
        round === 1 && begun !== undefined
          ? await begun.first
          : await runOnce(workflow, current, call, ctx, limit.signal, options, resume);
      const { outcome, checkpoint } = run;
      if (limit.expired() && outcome.status === 'canceled') return timeoutResult(call);
      if (outcome.status !== 'paused' || checkpoint === undefined) return toResult(outcome);
      const { reason, key } = checkpoint;
      if (modern) {
        const answer = answered?.has(key) ? undefined : answerFor(responses, key);
        if (answer === undefined) {
          return inputRequiredResult(workflow, ctx, paused, current, checkpoint);
        }
        const applied = applyAnswer(workflow, current, checkpoint, answer);
        if ('result' in applied) return applied.result;
        answered ??= new Set();
        answered.add(key);
        current = applied.inputs;
        resume = checkpoint;
        continue;
      }
      if (mode === 'report') return pausedResult(workflow.name, reason);
      if (round > MAX_ELICIT_ROUNDS) {
        const why = `still paused after ${MAX_ELICIT_ROUNDS} answers`;
        return pausedResult(workflow.name, reason, why);
      }
      const asked = await askClient(workflow, current, reason, call, ctx, limit, options);
      if ('result' in asked) return asked.result;
      current = asked.inputs;
      resume = checkpoint;
    }
  } finally {
    limit.dispose();
  }
}

/** A 2026-07-28 answer to a pause: the inputs to resume with, or the call's answer. */
function applyAnswer(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
  checkpoint: PauseCheckpoint,
  answer: PauseAnswer,
): { inputs: Readonly<Record<string, unknown>> } | { result: ToolResult } {
  if (answer.action !== 'accept') {
    const why = `the client chose ${answer.action}`;
    return { result: pausedResult(workflow.name, checkpoint.reason, why) };
  }
  const merged = mergeAnswer(workflow, current, answer.content);
  return merged.ok ? { inputs: merged.inputs } : { result: merged.result };
}

/**
 * Asks a legacy client for a pause's inputs (`elicitation/create`) while the call waits (and its
 * time limit runs). Resolves to the inputs to resume with, or to the call's answer.
 */
async function askClient(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
  reason: string,
  call: CallContext,
  ctx: RequestContext,
  limit: CallLimit,
  options: PipelineSurfaceOptions,
): Promise<{ inputs: Readonly<Record<string, unknown>> } | { result: ToolResult }> {
  const params = elicitationParams(workflow, current, reason, ctx.protocolVersion);
  let answer: PauseAnswer | undefined;
  try {
    if (ctx.request === undefined) return { result: pausedResult(workflow.name, reason) };
    const asked = ctx.request('elicitation/create', params, signalOf(limit.signal));
    answer = readAnswer(await asked);
  } catch (error) {
    if (limit.expired()) return { result: timeoutResult(call) };
    if (limit.signal.aborted) {
      return { result: toolError('CANCELLED', 'the call was cancelled', true) };
    }
    options.logger.debug({ workflow: workflow.name, err: error }, 'elicitation failed');
    const why = 'the client could not answer the question';
    return { result: pausedResult(workflow.name, reason, why) };
  }
  if (answer?.action !== 'accept') {
    const why =
      answer === undefined
        ? 'the client answered something else'
        : `the client chose ${answer.action}`;
    return { result: pausedResult(workflow.name, reason, why) };
  }
  const merged = mergeAnswer(workflow, current, answer.content);
  return merged.ok ? { inputs: merged.inputs } : { result: merged.result };
}

function timeoutResult(call: CallContext): ToolResult {
  const message = `the call timed out after ${call.timeoutMs} ms (context.timeout_ms or --default-timeout-ms)`;
  // Admission never queues, so a timeout can only have happened while executing (seed 002).
  return toolError('TIMEOUT', message, true, { phase: 'execution' });
}

/**
 * Runs a workflow once with throwaway state (nothing persisted), from the start or, given a
 * pause checkpoint, from the pausing step. A pause hands back its checkpoint.
 */
function runOnce(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
  options: PipelineSurfaceOptions,
  resume: PauseCheckpoint | undefined,
): OnceResult | Promise<OnceResult> {
  if (resume !== undefined) return runResumed(workflow, inputs, call, ctx, signal, options, resume);
  const store = new MemoryStore();
  const step: { name?: string } = {};
  const execution = startWorkflow(
    runOptions(workflow, inputs, call, ctx, signal, options, store, step),
  );
  return execution instanceof Promise
    ? execution.then(({ outcome }) => afterRun(outcome, store, step.name))
    : afterRun(execution.outcome, store, step.name);
}

/** `runOnce` from a pause checkpoint, restored into the call's store first. */
async function runResumed(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
  options: PipelineSurfaceOptions,
  resume: PauseCheckpoint,
): Promise<OnceResult> {
  const store = new MemoryStore();
  const step: { name?: string } = {};
  await restoreCheckpoint(store, resume);
  const execute = runOptions(workflow, inputs, call, ctx, signal, options, store, step);
  execute.resume = true;
  execute.session = resume.session;
  const { outcome } = await startWorkflow(execute);
  return afterRun(outcome, store, step.name);
}

/** What one run of a call answers: its outcome, and a pause's checkpoint. */
interface OnceResult {
  readonly outcome: RunOutcome;
  readonly checkpoint?: PauseCheckpoint;
}

/** A run's outcome, with the checkpoint of a pause (taken at `step`, the last one started). */
function afterRun(
  outcome: RunOutcome,
  store: MemoryStore,
  step: string | undefined,
): OnceResult | Promise<OnceResult> {
  if (outcome.status !== 'paused') return { outcome };
  const reason = pauseReasonText(outcome.pauseReason);
  const key = inputKey(step);
  return takeCheckpoint(store, outcome.session, reason, key).then((checkpoint) => ({
    outcome,
    checkpoint,
  }));
}

/** The options of one run of a call; `step.name` follows the step that started last. */
function runOptions(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: Cancellation,
  options: PipelineSurfaceOptions,
  store: MemoryStore,
  step: { name?: string },
): { -readonly [K in keyof ExecuteOptions]: ExecuteOptions[K] } {
  const { logger } = options;
  const name = workflow.name;
  // Debug, not info: a synchronous write per call costs a quarter of the throughput of a
  // trivial workflow over HTTP; /metrics counts calls, MHL_LOG_LEVEL=debug shows each one.
  logger.debug({ workflow: name, cwd: call.cwd, timeout_ms: call.timeoutMs }, 'call started');
  // Ephemeral: no step checkpoints, only a pause's, into a store that is gone with the call.
  // The step that pauses is the last one started (steps and parallel groups run one at a time).
  const values = fromJson(inputs);
  // Built by assignment, not conditional spreads: this runs for every synchronous call.
  const execute: { -readonly [K in keyof ExecuteOptions]: ExecuteOptions[K] } = {
    program: workflow.program,
    pipeline: workflow.decl,
    definition: workflow.definition,
    inputs: isObject(values) ? values : {},
    cwd: call.cwd,
    childEnv: options.childEnv,
    env: options.env,
    vault: options.vault?.(call.credentials ?? {}),
    state: { store, ephemeral: true },
    signal,
    output: (text) => {
      logger.info({ workflow: name, output: text });
      forwardOutput(ctx.log, name, text);
    },
    agentCache: { root: options.cacheRoot },
    onEvent: (event) => {
      if (event.type !== 'step_start') return;
      step.name = event.step;
      ctx.progress?.(event.index + 1, event.total, `step ${event.step}`);
    },
  };
  if (ctx.principal !== undefined) execute.principal = ctx.principal;
  if (options.agentLimiters !== undefined) execute.agentLimiters = options.agentLimiters;
  return execute;
}

const RETRYABLE = new Set(['TIMEOUT', 'CANCELLED']);

function toResult(outcome: RunOutcome): ToolResult {
  if (outcome.status === 'completed') {
    const vars = toPlain(outcome.vars) as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: JSON.stringify(vars, null, 2) }],
      structuredContent: vars,
    };
  }
  if (outcome.status === 'paused') {
    return pausedResult(outcome.pipeline, pauseReasonText(outcome.pauseReason));
  }
  const kind = outcome.error?.kind;
  const code =
    kind === 'step_timeout'
      ? 'TIMEOUT'
      : kind === 'canceled'
        ? 'CANCELLED'
        : kind === 'invalid_inputs'
          ? 'INVALID_ARGUMENT'
          : 'WORKFLOW_FAILED';
  const e = outcome.error;
  const message = e?.message ?? 'the workflow failed';
  const step = e?.step;
  // Admission never queues, so a timeout can only have happened while executing (seed 002).
  const phase = code === 'TIMEOUT' ? { phase: 'execution' } : {};
  // The runtime's own code and position; `file` is already relative to the served folder.
  const where = e
    ? { error_code: e.code, file: e.file, line: e.line, col: e.col, hint: e.hint }
    : {};
  return toolError(code, message, RETRYABLE.has(code), {
    ...(step ? { step } : {}),
    ...phase,
    ...where,
  });
}

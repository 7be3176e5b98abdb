/**
 * A synchronous workflow call, run to its answer within the call's time limit: the workflow
 * runs with throwaway state (in memory, gone with the call). A pause is never a success: it is
 * answered as `pauseMode` says (`pause.ts`): an `input_required` result on 2026-07-28, an
 * `elicitation/create` question on a legacy session whose client takes one, else a
 * `WORKFLOW_PAUSED` error; the client's answer resumes the run at the pausing step from its
 * checkpoint, so the steps before it do not run again. Knows nothing of sockets or streams.
 */
import type { Workflow } from '../catalog/index.js';
import type { RequestContext } from '../protocol/index.js';
import type { CallContext } from '../runs/index.js';
import {
  type Deadline,
  deadline,
  executeWorkflow,
  fromJson,
  isObject,
  type RunOutcome,
  toPlain,
} from '../runtime/index.js';
import { MemoryStore } from '../store/index.js';
import { forwardOutput } from './logging.js';
import {
  elicitationParams,
  inputRequiredResult,
  MAX_ELICIT_ROUNDS,
  mergeAnswer,
  type PauseAnswer,
  type PauseCheckpoint,
  pausedResult,
  pauseMode,
  pauseReasonText,
  readAnswer,
  readRetry,
  restoreCheckpoint,
  takeCheckpoint,
} from './pause.js';
import type { PipelineSurfaceOptions } from './pipelines.js';
import { type ToolResult, toolError } from './tools.js';

/**
 * Runs a synchronous call to its answer, bounded by the call's time limit; a client's answer to
 * a pause resumes the run at the pausing step.
 */
export async function runCall(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: AbortSignal,
  options: PipelineSurfaceOptions,
): Promise<ToolResult> {
  let current = inputs;
  let resume: PauseCheckpoint | undefined;
  const retrying = (ctx.requestState ?? ctx.inputResponses) !== undefined;
  if (retrying && pauseMode(ctx) === 'input_required') {
    const retry = await readRetry(workflow, ctx);
    if (!retry.ok) return retry.result;
    const { action } = retry.answer;
    if (action !== 'accept') {
      return pausedResult(workflow.name, retry.checkpoint.reason, `the client chose ${action}`);
    }
    const merged = mergeAnswer(workflow, current, retry.answer.content);
    if (!merged.ok) return merged.result;
    current = merged.inputs;
    resume = retry.checkpoint;
  }
  const limit = deadline(signal, call.timeoutMs, `tools/call ${workflow.name}`);
  try {
    for (let round = 1; ; round += 1) {
      const run = await runOnce(workflow, current, call, ctx, limit.signal, options, resume);
      const { outcome } = run;
      if (limit.expired() && outcome.status === 'canceled') return timeoutResult(call);
      if (outcome.status !== 'paused' || run.checkpoint === undefined) return toResult(outcome);
      const { reason } = run.checkpoint;
      // Decided only now: a call that never pauses pays nothing for it.
      const mode = pauseMode(ctx);
      if (mode === 'input_required') {
        return inputRequiredResult(workflow, ctx, current, reason, run.checkpoint);
      }
      if (mode === 'report') return pausedResult(workflow.name, reason);
      if (round > MAX_ELICIT_ROUNDS) {
        const why = `still paused after ${MAX_ELICIT_ROUNDS} answers`;
        return pausedResult(workflow.name, reason, why);
      }
      const asked = await askClient(workflow, current, reason, call, ctx, limit, options);
      if ('result' in asked) return asked.result;
      current = asked.inputs;
      resume = run.checkpoint;
    }
  } finally {
    limit.dispose();
  }
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
  limit: Deadline,
  options: PipelineSurfaceOptions,
): Promise<{ inputs: Readonly<Record<string, unknown>> } | { result: ToolResult }> {
  const params = elicitationParams(workflow, current, reason, ctx.protocolVersion);
  let answer: PauseAnswer | undefined;
  try {
    if (ctx.request === undefined) return { result: pausedResult(workflow.name, reason) };
    answer = readAnswer(await ctx.request('elicitation/create', params, limit.signal));
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
async function runOnce(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  signal: AbortSignal,
  options: PipelineSurfaceOptions,
  resume: PauseCheckpoint | undefined,
): Promise<{ outcome: RunOutcome; checkpoint?: PauseCheckpoint }> {
  const { logger } = options;
  const name = workflow.name;
  // Debug, not info: a synchronous write per call costs a quarter of the throughput of a
  // trivial workflow over HTTP; /metrics counts calls, MHL_LOG_LEVEL=debug shows each one.
  logger.debug({ workflow: name, cwd: call.cwd, timeout_ms: call.timeoutMs }, 'call started');
  // Ephemeral: no step checkpoints, only a pause's, into a store that is gone with the call.
  const store = new MemoryStore();
  if (resume !== undefined) await restoreCheckpoint(store, resume);
  const values = fromJson(inputs);
  const { outcome } = await executeWorkflow({
    program: workflow.program,
    pipeline: workflow.decl,
    definition: workflow.definition,
    inputs: isObject(values) ? values : {},
    cwd: call.cwd,
    childEnv: options.childEnv,
    env: options.env,
    state: { store, ephemeral: true },
    ...(resume !== undefined ? { resume: true, session: resume.session } : {}),
    ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
    signal,
    output: (text) => {
      logger.info({ workflow: name, output: text });
      forwardOutput(ctx.log, name, text);
    },
    agentCache: { root: options.cacheRoot },
    ...(options.agentLimiters !== undefined ? { agentLimiters: options.agentLimiters } : {}),
    onEvent: (event) => {
      if (event.type === 'step_start')
        ctx.progress?.(event.index + 1, event.total, `step ${event.step}`);
    },
  });
  if (outcome.status !== 'paused') return { outcome };
  const reason = pauseReasonText(outcome.pauseReason);
  return { outcome, checkpoint: await takeCheckpoint(store, outcome.session, reason) };
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
  const message = outcome.error?.message ?? 'the workflow failed';
  const step = outcome.error?.step;
  // Admission never queues, so a timeout can only have happened while executing (seed 002).
  const phase = code === 'TIMEOUT' ? { phase: 'execution' } : {};
  return toolError(code, message, RETRYABLE.has(code), step ? { step, ...phase } : phase);
}

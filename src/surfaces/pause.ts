/**
 * What a synchronous workflow call answers when its workflow calls `pause(reason)`: never a
 * success. This module holds the parts `pipelines.ts` puts together: which answer a request
 * gets (`pauseMode`), the form that asks for the pause's inputs (`elicitationParams`), the
 * 2026-07-28 `input_required` result and the reading of its retry, the `WORKFLOW_PAUSED` tool
 * error, and the pause checkpoint copied out of and back into a throwaway store.
 *
 * It runs nothing and talks to no client itself; it must not learn transports or sessions.
 */
import { validateArguments, type Workflow } from '../catalog/index.js';
import { isRecord, type RequestContext } from '../protocol/index.js';
import { formatValue, type RunOutcome, toPlain } from '../runtime/index.js';
import type { MemoryStore } from '../store/index.js';
import type { PauseBinding, PauseCheckpoint, PauseSealer } from './pause-state.js';
import { type ToolResult, toolError } from './tools.js';

/** The diagnostic code of a pause no client input can continue. */
export const WORKFLOW_PAUSED = 'WORKFLOW_PAUSED';
/** The key of the one input request an `input_required` result carries. */
export const PAUSE_INPUT_KEY = 'mhl_pause';
/** Most times one legacy call asks its client again when the resumed step pauses again. */
export const MAX_ELICIT_ROUNDS = 10;

/** How a request's pause is answered: asked in the result, asked by request, or reported. */
export type PauseMode = 'input_required' | 'elicit' | 'report';

export type { PauseCheckpoint };

/** Contexts of calls that run in the background (jobs): no one is there to answer a question. */
const background = new WeakSet<RequestContext>();

/** A copy of `ctx` for a call that runs detached from its request (`job.start`). */
export function backgroundContext(ctx: RequestContext): RequestContext {
  const copy = { ...ctx };
  background.add(copy);
  return copy;
}

/**
 * The answer a pause gets on `ctx`: for a client that declared form elicitation, `input_required`
 * on 2026-07-28 requests and an `elicitation/create` request on legacy sessions; else a report
 * (a client must not be asked what it said it cannot answer). A background call (a job) always
 * reports.
 */
export function pauseMode(ctx: RequestContext): PauseMode {
  if (background.has(ctx) || !supportsForm(ctx.clientCapabilities)) return 'report';
  if (ctx.era === 'modern') return 'input_required';
  return ctx.request !== undefined ? 'elicit' : 'report';
}

/** Form elicitation: `elicitation: {}` (2025-06-18 style) or `elicitation: {form: {}}`. */
function supportsForm(capabilities: Record<string, unknown>): boolean {
  const elicitation = capabilities['elicitation'];
  if (!isRecord(elicitation)) return false;
  const modes = Object.keys(elicitation).filter((k) => k === 'form' || k === 'url');
  return modes.length === 0 || modes.includes('form');
}

/** The pause's reason as text: a string as is, other values as compact JSON, none as "paused". */
export function pauseReasonText(reason: RunOutcome['pauseReason']): string {
  if (reason === undefined || reason === null || reason === '') return 'paused';
  if (typeof reason === 'string') return reason;
  const value = toPlain(reason);
  return value === undefined ? formatValue(reason) : JSON.stringify(value);
}

/** The `WORKFLOW_PAUSED` tool error: the reason, and how to run the workflow so it can pause. */
export function pausedResult(workflow: string, reason: string, why?: string): ToolResult {
  const hint = `start it with mhl_run_start {"workflow": "${workflow}", "arguments": {…}}: an async run keeps its pause, and mhl_run_resume continues it with the answer`;
  const message = `${workflow} paused: ${reason}${why === undefined ? '' : ` (${why})`}; ${hint}`;
  return toolError(WORKFLOW_PAUSED, message, false, { reason, hint });
}

const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * The elicitation form for a pause: a flat object schema of the workflow's declared inputs of a
 * primitive type (string, number, boolean, string enums; what elicitation allows), each with
 * its current value as the default. Other inputs keep their values and are not asked.
 */
export function requestedSchema(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const declared = isRecord(workflow.inputSchema['properties'])
    ? workflow.inputSchema['properties']
    : {};
  const properties: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(declared)) {
    if (!isRecord(schema) || typeof schema['type'] !== 'string' || !PRIMITIVE.has(schema['type']))
      continue;
    const type = schema['type'];
    const property: Record<string, unknown> = { type, title: name };
    if (Array.isArray(schema['enum'])) property['enum'] = schema['enum'];
    const value = name in current ? current[name] : schema['default'];
    if (fits(type, value)) property['default'] = value;
    properties[name] = property;
  }
  return { type: 'object', properties };
}

function fits(type: string, value: unknown): boolean {
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === 'string') return typeof value === 'string';
  return typeof value === 'number' && Number.isFinite(value);
}

/** The `elicitation/create` params asking for a pause's inputs (`mode` from 2025-11-25 on). */
export function elicitationParams(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
  reason: string,
  protocolVersion: string,
): Record<string, unknown> {
  const withMode = protocolVersion >= '2025-11-25';
  return {
    ...(withMode ? { mode: 'form' } : {}),
    message: reason,
    requestedSchema: requestedSchema(workflow, current),
  };
}

/** What the client answered to a pause's question. */
export type PauseAnswer =
  | { readonly action: 'accept'; readonly content: Readonly<Record<string, unknown>> }
  | { readonly action: 'decline' | 'cancel' };

/** Reads an `ElicitResult`; undefined when it is not one. */
export function readAnswer(value: unknown): PauseAnswer | undefined {
  if (!isRecord(value)) return undefined;
  const action = value['action'];
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept') return undefined;
  const content = value['content'] ?? {};
  return isRecord(content) ? { action, content } : undefined;
}

/**
 * The inputs to resume with: the call's inputs with the answer's content over them, checked
 * against the workflow. A field the workflow does not declare, or of the wrong type, is refused.
 */
export function mergeAnswer(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
  content: Readonly<Record<string, unknown>>,
): { ok: true; inputs: Readonly<Record<string, unknown>> } | { ok: false; result: ToolResult } {
  const check = validateArguments(workflow, { ...current, ...content });
  if (check.ok) return { ok: true, inputs: check.inputs };
  const { missing, undeclared, invalid } = check.error;
  return {
    ok: false,
    result: toolError(
      'INVALID_ARGUMENT',
      `the answer to the pause: ${check.error.message}`,
      false,
      {
        missing,
        undeclared,
        invalid,
      },
    ),
  };
}

/** The refusal of a retry whose `requestState` or `inputResponses` is not usable. */
export function invalidRetry(message: string, field: string): ToolResult {
  return toolError('INVALID_ARGUMENT', message, false, { field });
}

let sealer: Promise<PauseSealer> | undefined;

/**
 * The process's sealer, keyed on first use (the key lives as long as the process). Loaded on the
 * first pause, so start-up and calls that never pause load no cipher or compression code.
 */
function processSealer(): Promise<PauseSealer> {
  sealer ??= import('./pause-state.js').then((m) => new m.PauseSealer());
  return sealer;
}

/** What a sealed state of `workflow`, for this caller, is bound to. */
function bindingOf(workflow: Workflow, ctx: RequestContext): PauseBinding {
  return {
    workflow: workflow.name,
    digest: workflow.definition.digest,
    principal: ctx.principal,
  };
}

/**
 * The 2026-07-28 answer to a pause: an `input_required` result asking for the pause's inputs,
 * its checkpoint sealed in `requestState`. A checkpoint too large to seal is reported instead.
 */
export async function inputRequiredResult(
  workflow: Workflow,
  ctx: RequestContext,
  current: Readonly<Record<string, unknown>>,
  reason: string,
  checkpoint: PauseCheckpoint,
): Promise<ToolResult> {
  const requestState = (await processSealer()).seal(checkpoint, bindingOf(workflow, ctx));
  if (requestState === undefined) {
    return pausedResult(workflow.name, reason, 'its state is too large to hand to the client');
  }
  const params = elicitationParams(workflow, current, reason, ctx.protocolVersion);
  return {
    resultType: 'input_required',
    inputRequests: { [PAUSE_INPUT_KEY]: { method: 'elicitation/create', params } },
    requestState,
  };
}

/** A 2026-07-28 retry, read: where to resume and what the client answered, or the refusal. */
export type Retry =
  | { readonly ok: true; readonly checkpoint: PauseCheckpoint; readonly answer: PauseAnswer }
  | { readonly ok: false; readonly result: ToolResult };

/** Opens a retry's `requestState` and reads its answer to the pause's one input request. */
export async function readRetry(workflow: Workflow, ctx: RequestContext): Promise<Retry> {
  const text = ctx.requestState;
  if (text === undefined) {
    return {
      ok: false,
      result: invalidRetry('inputResponses needs its requestState', 'requestState'),
    };
  }
  const opened = (await processSealer()).open(text, bindingOf(workflow, ctx));
  if (!opened.ok) return { ok: false, result: invalidRetry(opened.message, 'requestState') };
  const answer = readAnswer(ctx.inputResponses?.[PAUSE_INPUT_KEY]);
  if (answer === undefined) {
    const message = `inputResponses.${PAUSE_INPUT_KEY} must answer the pause: {"action": "accept"|"decline"|"cancel", "content"?: {...}}`;
    return { ok: false, result: invalidRetry(message, `inputResponses.${PAUSE_INPUT_KEY}`) };
  }
  return { ok: true, checkpoint: opened.checkpoint, answer };
}

/** Copies a paused run's records out of its throwaway store. */
export async function takeCheckpoint(
  store: MemoryStore,
  session: string,
  reason: string,
): Promise<PauseCheckpoint> {
  const prefix = `state/${session}/`;
  const records: [string, string][] = [];
  for (const key of await store.list(prefix)) {
    const text = await store.get(key);
    if (text !== undefined) records.push([key, text]);
  }
  return { session, reason, records };
}

/** Writes a pause checkpoint into a fresh throwaway store, so a run can resume from it. */
export async function restoreCheckpoint(
  store: MemoryStore,
  checkpoint: PauseCheckpoint,
): Promise<void> {
  const prefix = `state/${checkpoint.session}/`;
  for (const [key, text] of checkpoint.records) {
    // Sealed by this process, so trusted; the prefix check keeps a bug from writing elsewhere.
    if (key.startsWith(prefix)) await store.put(key, text);
  }
}

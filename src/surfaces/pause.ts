/**
 * What a synchronous workflow call answers when its workflow calls `pause(reason)`: never a
 * success. This module holds the parts `sync-call.ts` puts together: which answer a request
 * gets (`pauseMode`), the form that asks for the pause's inputs (`elicitationParams`), the
 * 2026-07-28 `input_required` result (keyed by the pausing step) and the reading of its retry
 * (a bad `requestState` or `inputResponses` is a `-32602`), the `WORKFLOW_PAUSED` tool error,
 * and the pause checkpoint copied out of and back into a throwaway store.
 *
 * It runs nothing and talks to no client itself; it must not learn transports or sessions.
 */
import { createHash } from 'node:crypto';
import { validateArguments, type Workflow } from '../catalog/index.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import { formatValue, type RunOutcome, toPlain } from '../runtime/index.js';
import type { MemoryStore } from '../store/index.js';
import type { PauseBinding, PauseCheckpoint, PauseSealer } from './pause-state.js';
import { type ToolResult, toolError } from './tools.js';

/** The diagnostic code of a pause no client input can continue. */
export const WORKFLOW_PAUSED = 'WORKFLOW_PAUSED';
/** The input request key of a pause with no usable step name (a step name is the key). */
export const PAUSE_INPUT_KEY = 'mhl_pause';
/** Longest client-chosen `inputResponses` key echoed in an error's `field`. */
const MAX_ECHOED_KEY = 64;
/** Most times one legacy call asks its client again when the resumed step pauses again. */
export const MAX_ELICIT_ROUNDS = 10;

/** How a request's pause is answered: asked in the result, asked by request, or reported. */
export type PauseMode = 'input_required' | 'elicit' | 'report';

export type { PauseCheckpoint };

/** Contexts of calls that run in the background (jobs): no one is there to answer a question. */
const background = new WeakSet<RequestContext>();

/** A copy of `ctx` for a call that runs detached from its request (`job.start`). */
export function backgroundContext(ctx: RequestContext): RequestContext {
  // A job is never a retry of a paused call: it must not carry one's answers or state. Nor the
  // request's time limit: a job outlives the request that started it.
  const { requestState: _state, inputResponses: _responses, limit: _limit, ...copy } = ctx;
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
 * The elicitation form for a pause: a flat object schema of the workflow's declared inputs that
 * elicitation can ask for (string, number, boolean, string enums, and arrays of a string enum
 * as a 2025-11-25 multi-select; not with `multi: false`, for older revisions), each with its
 * current value as the default. Other inputs keep their values and are not asked.
 */
export function requestedSchema(
  workflow: Workflow,
  current: Readonly<Record<string, unknown>>,
  multi = true,
): Record<string, unknown> {
  const declared = isRecord(workflow.inputSchema['properties'])
    ? workflow.inputSchema['properties']
    : {};
  const defs = workflow.inputSchema['$defs'];
  const properties: Record<string, unknown> = {};
  for (const [name, declaredSchema] of Object.entries(declared)) {
    const schema = resolved(declaredSchema, defs);
    if (schema === undefined) continue;
    const value = name in current ? current[name] : schema['default'];
    const select = multi ? multiSelect(name, schema, defs, value) : undefined;
    if (select !== undefined) properties[name] = select;
    if (typeof schema['type'] !== 'string' || !PRIMITIVE.has(schema['type'])) continue;
    const type = schema['type'];
    const property: Record<string, unknown> = { type, title: name };
    if (Array.isArray(schema['enum'])) property['enum'] = schema['enum'];
    if (fits(type, value)) property['default'] = value;
    properties[name] = property;
  }
  return { type: 'object', properties };
}

/** An array-of-string-enum input as an untitled multi-select; undefined for any other schema. */
function multiSelect(
  name: string,
  schema: Record<string, unknown>,
  defs: unknown,
  value: unknown,
): Record<string, unknown> | undefined {
  const items = resolved(schema['items'], defs);
  if (schema['type'] !== 'array' || !isRecord(items) || items['type'] !== 'string') return;
  const options = items['enum'];
  if (!Array.isArray(options) || !options.every((o) => typeof o === 'string')) return;
  const chosen =
    Array.isArray(value) && value.every((v) => typeof v === 'string' && options.includes(v));
  return {
    type: 'array',
    title: name,
    items: { type: 'string', enum: options },
    ...(chosen ? { default: value } : {}),
  };
}

/**
 * A property schema with a local `{"$ref": "#/$defs/Name"}` replaced by that definition (the
 * keywords beside the `$ref`, such as `default`, kept), so a named enum is asked like an inline
 * one; undefined for a schema that is not an object or a reference that does not resolve.
 */
function resolved(schema: unknown, defs: unknown): Record<string, unknown> | undefined {
  if (!isRecord(schema)) return undefined;
  const ref = schema['$ref'];
  if (typeof ref !== 'string') return schema;
  const name = ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : undefined;
  const target = name !== undefined && isRecord(defs) ? defs[name] : undefined;
  if (!isRecord(target)) return undefined;
  const { $ref: _, ...beside } = schema;
  return { ...target, ...beside };
}

function fits(type: string, value: unknown): boolean {
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === 'string') return typeof value === 'string';
  if (type === 'integer') return Number.isInteger(value);
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * The `elicitation/create` params asking for a pause's inputs (`mode` and multi-selects from
 * 2025-11-25 on: earlier revisions know neither).
 */
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
    requestedSchema: requestedSchema(workflow, current, withMode),
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

/** The `-32602` refusal of a retry whose `requestState` or `inputResponses` is not usable. */
export function invalidRetry(message: string, data: Record<string, unknown>): RpcError {
  return new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, message, data);
}

/** `inputResponses.<key>` for an error's `field`, with an overlong client key cut short. */
function responseField(key: string): string {
  return `inputResponses.${key.length > MAX_ECHOED_KEY ? `${key.slice(0, MAX_ECHOED_KEY)}…` : key}`;
}

/**
 * The key a pause is asked under: the pausing step's name (an MHL identifier, so a plain, stable
 * key a client can recognise), or `PAUSE_INPUT_KEY` when no step is known.
 */
export function inputKey(step: string | undefined): string {
  return step !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(step) ? step : PAUSE_INPUT_KEY;
}

/**
 * A retry's `inputResponses`, checked for shape before anything runs: every entry must be an
 * `ElicitResult` (a client's answer to one input request). Which entries mean something is
 * decided per pause; checking them all first means no step runs before a refusal.
 * @throws RpcError -32602 naming the first entry that is not an answer.
 */
export function checkInputResponses(
  responses: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> {
  if (responses === undefined) return {};
  if (!isRecord(responses)) {
    throw invalidRetry('inputResponses must be an object', { field: 'inputResponses' });
  }
  for (const [key, entry] of Object.entries(responses)) {
    if (!isRecord(entry)) {
      const field = responseField(key);
      throw invalidRetry(`${field} must be an object (the answer to an input request)`, {
        field,
      });
    }
    if (readAnswer(entry) === undefined) {
      const field = responseField(key);
      throw invalidRetry(
        `${field} must answer the pause: {"action": "accept"|"decline"|"cancel", "content"?: {...}}`,
        { field },
      );
    }
  }
  return responses;
}

/**
 * The answer under `key` of responses `checkInputResponses` passed, or undefined when the
 * client sent none (the pause is asked again).
 */
export function answerFor(
  responses: Readonly<Record<string, unknown>>,
  key: string,
): PauseAnswer | undefined {
  return Object.hasOwn(responses, key) ? readAnswer(responses[key]) : undefined;
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

/** The arguments a paused call was made with: its checked inputs and working directory. */
export interface PausedCall {
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly cwd: string;
}

/** What a sealed state of `workflow`, for this caller and these arguments, is bound to. */
function bindingOf(workflow: Workflow, ctx: RequestContext, call: PausedCall): PauseBinding {
  const canonical = canonicalJson({ inputs: call.inputs, cwd: call.cwd });
  return {
    workflow: workflow.name,
    digest: workflow.definition.digest,
    principal: ctx.principal,
    call: createHash('sha256').update(canonical).digest('base64url'),
  };
}

/** JSON with object keys sorted, so equal arguments give equal text whatever their order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The 2026-07-28 answer to a pause: an `input_required` result asking for the pause's inputs
 * under the checkpoint's key, its checkpoint sealed in `requestState`. A checkpoint too large to
 * seal is reported instead.
 */
export async function inputRequiredResult(
  workflow: Workflow,
  ctx: RequestContext,
  call: PausedCall,
  current: Readonly<Record<string, unknown>>,
  checkpoint: PauseCheckpoint,
): Promise<ToolResult> {
  const { reason, key } = checkpoint;
  const sealed = { ...checkpoint, inputs: current };
  const requestState = (await processSealer()).seal(sealed, bindingOf(workflow, ctx, call));
  if (requestState === undefined) {
    return pausedResult(workflow.name, reason, 'its state is too large to hand to the client');
  }
  const params = elicitationParams(workflow, current, reason, ctx.protocolVersion);
  return {
    resultType: 'input_required',
    inputRequests: { [key]: { method: 'elicitation/create', params } },
    requestState,
  };
}

/**
 * Opens a retry's `requestState`: the checkpoint of the pause it answers.
 * @throws RpcError -32602 (`field: "requestState"`, `reason`: why) for a changed, foreign,
 * expired or undecodable state; nothing may run then.
 */
export async function openRequestState(
  workflow: Workflow,
  ctx: RequestContext,
  call: PausedCall,
  text: string,
): Promise<PauseCheckpoint> {
  const opened = (await processSealer()).open(text, bindingOf(workflow, ctx, call));
  if (opened.ok) return opened.checkpoint;
  throw invalidRetry(opened.message, { field: 'requestState', reason: opened.reason });
}

/** Copies a paused run's records out of its throwaway store. */
export async function takeCheckpoint(
  store: MemoryStore,
  session: string,
  reason: string,
  key: string,
): Promise<PauseCheckpoint> {
  const prefix = `state/${session}/`;
  const records: [string, string][] = [];
  for (const key of await store.list(prefix)) {
    const text = await store.get(key);
    if (text !== undefined) records.push([key, text]);
  }
  return { session, key, reason, records };
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

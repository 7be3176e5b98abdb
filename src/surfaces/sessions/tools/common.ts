/**
 * What the sessions tools share: the `session_index` parameter, opening a session (seal first,
 * then the active-checkpoint gate where the tool is gated), loading its workflow fresh with
 * the version-drift warning, and the result shapes (`_meta.session_index`, `_meta.validation`).
 */
import { z } from 'zod';
import type { ToolResult } from '../../tools.js';
import { type CallNote, type SessionsContext, ToolFailure } from '../context.js';
import { loadWorkflow, type Workflow } from '../definition/loader.js';
import { safeKeySchema } from '../store/safe-keys.js';
import type { SessionFile } from '../store/session.schema.js';
import type { SessionHandle } from '../store/session-store.js';
import { checkVersion, validation } from '../validators.js';

/**
 * The parameters the tools share, built on first use rather than at import: only the sessions
 * surface builds them (when it is made), so a server on another profile (the default
 * `--profile pipelines`) never pays for them (about 0.07 ms of start-up, measured with initprof).
 */
function buildParams() {
  const sessionIndex = z
    .string()
    .regex(/^[A-Z2-7]{6}$/, 'session_index is six characters of A-Z and 2-7')
    .describe('The six-character session index start_session returned.');

  const agentId = safeKeySchema('agent_id')
    .min(1)
    .optional()
    .describe('The calling agent (worker context) id.');

  /** How content tools deliver what the agent holds (get_activity, get_technique, get_resource). */
  const bundle = z
    .enum(['reference', 'full'])
    .optional()
    .describe(
      'reference: repeated content comes back as unchanged markers; full: always the whole text.',
    );

  const full = z
    .boolean()
    .optional()
    .describe('true sends the whole text even if this agent already holds it.');

  return { sessionIndex, agentId, bundle, full };
}

let built: ReturnType<typeof buildParams> | undefined;

/** `sessionIndex`, `agentId`, `bundle` and `full`: one schema each, shared by every tool. */
export function sessionParams(): ReturnType<typeof buildParams> {
  built ??= buildParams();
  return built;
}

/** Codes of tool failures that are not session-store or definition errors. */
export const TOOL_CODES = {
  CHECKPOINT_ACTIVE: 'CHECKPOINT_ACTIVE',
  NO_ACTIVE_CHECKPOINT: 'NO_ACTIVE_CHECKPOINT',
  ACTIVITY_NOT_FOUND: 'ACTIVITY_NOT_FOUND',
  STEP_NOT_FOUND: 'STEP_NOT_FOUND',
  TECHNIQUE_NOT_FOUND: 'TECHNIQUE_NOT_FOUND',
  RESOURCE_NOT_FOUND: 'RESOURCE_NOT_FOUND',
  CHECKPOINT_INVALID: 'CHECKPOINT_INVALID',
  INVALID_PATH: 'INVALID_PATH',
  REPO_CONFLICT: 'REPO_CONFLICT',
  BATCH_FULL: 'BATCH_FULL',
  CHILD_NOT_FOUND: 'CHILD_NOT_FOUND',
} as const;

/** Refuses while a checkpoint is active (every gated tool, spec §3.7). */
export function assertNoCheckpoint(state: SessionFile): void {
  const cp = state.activeCheckpoint;
  if (cp === undefined) return;
  throw new ToolFailure(
    TOOL_CODES.CHECKPOINT_ACTIVE,
    `Blocked: Active checkpoint '${cp.checkpointId}' on activity '${cp.activityId}'. ` +
      'All tools are gated until the checkpoint is resolved. ' +
      'The orchestrator must call respond_checkpoint to clear the gate before any other tool calls can proceed.',
  );
}

/** Opens a session for a call: seal verified before parsing, the note filled for the trace. */
export function openSession(
  ctx: SessionsContext,
  index: string,
  note: CallNote,
  agentId?: string,
): SessionHandle {
  const handle = ctx.store.open(index);
  note.index = index;
  note.wf = handle.state.workflowId;
  note.act = handle.state.currentActivity;
  note.aid = agentId ?? handle.state.agentId;
  return handle;
}

/**
 * Runs `fn` on an opened session under its folder lock: every session tool locates, serialises
 * on the folder, then opens (seal first), so that order lives here once.
 */
export function inSession<T>(
  ctx: SessionsContext,
  index: string,
  note: CallNote,
  agentId: string | undefined,
  fn: (handle: SessionHandle) => Promise<T>,
): Promise<T> {
  const folder = ctx.store.locate(index);
  return ctx.store.withFolder(folder, async () => fn(openSession(ctx, index, note, agentId)));
}

/** The session's workflow, loaded fresh, and the version-drift warning when it moved. */
export function sessionWorkflow(
  ctx: SessionsContext,
  state: SessionFile,
): { wf: Workflow; drift: string | null } {
  const wf = loadWorkflow(ctx.root, state.workflowId);
  return { wf, drift: checkVersion(state, wf) };
}

/**
 * `inSession` for the gated content tools: refuses while a checkpoint is active, then hands over
 * the workflow loaded fresh and its drift warning. `args` are the tool's own arguments.
 */
export function inGatedSession<T>(
  ctx: SessionsContext,
  args: { session_index: string; agent_id?: string | undefined },
  note: CallNote,
  fn: (handle: SessionHandle, wf: Workflow, drift: string | null) => Promise<T>,
): Promise<T> {
  return inSession(ctx, args.session_index, note, args.agent_id, async (handle) => {
    assertNoCheckpoint(handle.state);
    const { wf, drift } = sessionWorkflow(ctx, handle.state);
    return fn(handle, wf, drift);
  });
}

/** `_meta` of a session tool: the index and the validation of its warnings. */
export function sessionMeta(
  index: string,
  warnings: readonly (string | null | undefined)[],
  extra: Record<string, unknown> = {},
) {
  return { session_index: index, validation: validation(warnings), ...extra };
}

/** A result whose text is `value` as 2-space JSON. */
export function jsonResult(value: unknown, meta?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
  if (meta !== undefined) result['_meta'] = meta;
  return result;
}

/** A result with `text` as is. */
export function textResult(text: string, meta?: Record<string, unknown>): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text }] };
  if (meta !== undefined) result['_meta'] = meta;
  return result;
}

export { toYaml } from '../delivery/yaml.js';

/** Records the note's warnings for the trace and returns them. */
export function noteWarnings(
  note: CallNote,
  warnings: readonly (string | null | undefined)[],
): string[] {
  const list = warnings.filter((w): w is string => typeof w === 'string' && w !== '');
  note.warnings = list;
  return list;
}

/** The scope deliveries are recorded under: the call's agent, else the session's. */
export function scopeOf(state: SessionFile, agentId: string | undefined): string {
  return agentId ?? state.agentId;
}

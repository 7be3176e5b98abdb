/**
 * The audit wrapper every sessions tool runs in (seed 004 §1–2): arguments are checked by the
 * tool's zod schema (built once, when the surface is made), the handler is timed, one `audit`
 * JSON line goes to the log (stderr), and a trace event is recorded for session-bound tools
 * whatever the outcome. A handler's failure becomes an `isError` result whose text is the message
 * and whose `_meta["mhl/diagnostic"]` carries the stable code; internal faults are logged, and
 * the client sees only a generic message (no paths, no stacks).
 */
import { z } from 'zod';
import { ArgumentError } from '../../runs/index.js';
import type { ToolDefinition, ToolResult } from '../tools.js';
import { type CallNote, type SessionsContext, ToolFailure } from './context.js';
import { WorkflowError } from './definition/errors.js';
import { SessionStoreError } from './store/errors.js';

/**
 * The largest arguments a call may carry, as JSON: what the HTTP transport's body limit lets
 * through (1 MiB), so stdio clients cannot grow a session file (usage, variables, trace tokens)
 * past what the same call over HTTP could.
 */
export const MAX_ARGUMENT_BYTES = 1024 * 1024;

/** One sessions tool as its module declares it. */
export interface SessionTool<S extends z.ZodType> {
  readonly name: string;
  readonly description: string;
  /**
   * The argument schema. A function, so a module's schemas are built when the surface is made
   * (`defineTool`), not when the module is imported by a server on another profile.
   */
  readonly input: () => S;
  /** Whether calls are traced (session-bound tools, less the read-only status tools). */
  readonly traced: boolean;
  readonly readOnly?: boolean;
  run(args: z.infer<S>, ctx: SessionsContext, note: CallNote): Promise<ToolResult> | ToolResult;
}

/** The `ToolDefinition` of a sessions tool, its argument schema and input JSON Schema made once. */
export function defineTool<S extends z.ZodType>(
  tool: SessionTool<S>,
  ctx: SessionsContext,
): ToolDefinition {
  const input = tool.input();
  const inputSchema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete inputSchema['$schema'];
  const entry = {
    name: tool.name,
    description: tool.description,
    inputSchema,
    annotations: { readOnlyHint: tool.readOnly === true, openWorldHint: false },
  };
  return {
    name: tool.name,
    entry,
    inputSchema,
    execution: false,
    prepare(args) {
      if (Buffer.byteLength(JSON.stringify(args ?? {}), 'utf8') > MAX_ARGUMENT_BYTES)
        throw new ArgumentError('', `arguments: larger than ${MAX_ARGUMENT_BYTES} bytes as JSON`);
      const parsed = input.safeParse(args);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        // An unknown key is named by the key itself, so a client can drop it by name.
        const path =
          issue?.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue?.path;
        const field = path?.join('.') ?? '';
        throw new ArgumentError(field, `${field || 'arguments'}: ${issue?.message ?? 'invalid'}`);
      }
      return { run: () => audited(tool, parsed.data, ctx) };
    },
  };
}

async function audited<S extends z.ZodType>(
  tool: SessionTool<S>,
  args: z.infer<S>,
  ctx: SessionsContext,
): Promise<ToolResult> {
  const note: CallNote = {};
  const given = (args as { session_index?: unknown }).session_index;
  if (typeof given === 'string') note.index = given;
  const started = performance.now();
  let result: ToolResult;
  let failure: { code: string; message: string } | undefined;
  try {
    result = await tool.run(args, ctx, note);
  } catch (error) {
    failure = describe(error, ctx, tool.name);
    result = {
      content: [{ type: 'text', text: failure.message }],
      isError: true,
      _meta: {
        'mhl/diagnostic': { code: failure.code, message: failure.message, retryable: false },
      },
    };
  }
  const ms = Math.round((performance.now() - started) * 1000) / 1000;
  ctx.logger.info(
    {
      type: 'audit',
      tool: tool.name,
      ms,
      ok: failure === undefined,
      code: failure?.code,
      session_index: note.index,
    },
    'tool call',
  );
  // Only sessions that exist get a trace: made-up indexes must not evict real sessions' traces.
  if (tool.traced && note.index !== undefined && sessionExists(ctx, note)) {
    ctx.traces.record({
      traceId: note.index,
      name: tool.name,
      ts: Math.floor(ctx.clock.now().getTime() / 1000),
      ms,
      s: failure === undefined ? 'ok' : 'error',
      wf: note.wf ?? '',
      act: note.act ?? '',
      aid: note.aid ?? '',
      ...(failure !== undefined ? { err: failure.message } : {}),
      ...(note.warnings?.length ? { vw: note.warnings } : {}),
    });
  }
  return result;
}

/** True when the call opened its session, or the index names one that is on disk. */
function sessionExists(ctx: SessionsContext, note: CallNote): boolean {
  if (note.wf !== undefined) return true;
  try {
    ctx.store.locate(note.index ?? '');
    return true;
  } catch {
    // Malformed, unknown or ambiguous: nothing to trace against.
    return false;
  }
}

function describe(
  error: unknown,
  ctx: SessionsContext,
  tool: string,
): { code: string; message: string } {
  if (
    error instanceof SessionStoreError ||
    error instanceof WorkflowError ||
    error instanceof ToolFailure
  ) {
    return { code: error.code, message: error.message };
  }
  ctx.logger.error({ err: error, tool }, 'sessions tool failed');
  return {
    code: 'INTERNAL_ERROR',
    message: `${tool} failed: an internal error was logged by the server`,
  };
}

/**
 * The catalog over MCP: one tool per workflow (`tools/list`, `tools/call`) and the workflow
 * resources (`resources/list|read`, `resources/templates/list`).
 *
 * A synchronous `tools/call` runs the workflow with throwaway state (in memory, gone with the
 * call: no checkpoint, no `context.vars` carry-over). A run's own failure is a tool result
 * with `isError: true` and a diagnostic; only protocol problems (unknown tool, invalid inputs)
 * are JSON-RPC errors. Knows nothing of sockets or streams.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  type Catalog,
  listResources,
  readResource,
  toolEntry,
  validateArguments,
  type Workflow,
} from '../catalog/index.js';
import type { Logger } from '../log/logger.js';
import {
  type Dispatcher,
  isRecord,
  type RequestContext,
  RPC_ERROR_CODES,
  RpcError,
} from '../protocol/index.js';
import { CheckpointStore } from '../runtime/checkpoints.js';
import { deadline } from '../runtime/deadline.js';
import { Redactor } from '../runtime/redact.js';
import { type RunOutcome, runPipeline } from '../runtime/runner.js';
import { fromJson, isObject, toPlain } from '../runtime/values.js';
import { MemoryStore } from '../store/index.js';

/** The reserved per-call `context` argument every workflow tool accepts (seed 002). */
export const CONTEXT_SCHEMA = {
  type: 'object',
  description: 'Per-call execution context: working directory, item limit and time limit',
  properties: {
    cwd: { type: 'string', description: 'Absolute working directory for the run' },
    limit: { type: 'integer', minimum: 1, description: 'Caps line or item collections' },
    timeout_ms: {
      type: 'integer',
      minimum: 1,
      description: 'Bounds the whole run, in milliseconds',
    },
  },
  additionalProperties: false,
} as const;

export interface PipelineSurfaceOptions {
  readonly catalog: Catalog;
  readonly logger: Logger;
  /** Bounds every call; a call's `context.timeout_ms` may lower it. */
  readonly defaultTimeoutMs: number;
  /** Working directory for calls without `context.cwd`. */
  readonly defaultCwd: string;
  /** Over HTTP a call must name its working directory (an absolute `context.cwd`). */
  readonly requireCwd: boolean;
  readonly childEnv: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Told how each call ended: a result, a result with `isError`, or a refused call. */
  readonly onCall?: (outcome: 'success' | 'error' | 'invalid') => void;
}

/** Registers the workflow tools and resources with a dispatcher. */
export function registerPipelineSurface(
  dispatcher: Dispatcher,
  options: PipelineSurfaceOptions,
): void {
  const { catalog } = options;
  const tools = [...catalog.workflows.values()].map((w) => {
    const entry = toolEntry(w);
    const schema = entry.inputSchema as { properties?: Record<string, unknown> };
    const inputSchema = {
      ...entry.inputSchema,
      properties: { ...schema.properties, context: CONTEXT_SCHEMA },
    };
    return { ...entry, inputSchema };
  });
  dispatcher.register('tools/list', async (params) => {
    rejectCursor(params);
    return { tools };
  });
  dispatcher.register('tools/call', async (params, ctx) => {
    try {
      const result = await callTool(params, ctx, options);
      options.onCall?.(result['isError'] === true ? 'error' : 'success');
      return result;
    } catch (e) {
      options.onCall?.('invalid');
      throw e;
    }
  });
  dispatcher.register('resources/list', async (params) => {
    rejectCursor(params);
    return { resources: listResources(catalog) };
  });
  dispatcher.register('resources/templates/list', async (params) => {
    rejectCursor(params);
    return { resourceTemplates: [] };
  });
  dispatcher.register('resources/read', async (params, ctx) => {
    const uri = params['uri'];
    if (typeof uri !== 'string')
      throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'resources/read needs a string uri');
    const found = readResource(catalog, uri);
    if (found) return { ...found };
    const code =
      ctx.era === 'modern' ? RPC_ERROR_CODES.INVALID_PARAMS : RPC_ERROR_CODES.RESOURCE_NOT_FOUND;
    throw new RpcError(code, `resource not found: ${uri}`, { uri });
  });
}

function rejectCursor(params: Record<string, unknown>): void {
  const cursor = params['cursor'];
  if (cursor !== undefined && cursor !== null && cursor !== '') {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'invalid cursor: this list has a single page',
    );
  }
}

interface CallContext {
  readonly cwd: string;
  readonly timeoutMs: number;
}

async function callTool(
  params: Record<string, unknown>,
  ctx: RequestContext,
  options: PipelineSurfaceOptions,
): Promise<Record<string, unknown>> {
  const name = params['name'];
  const workflow = typeof name === 'string' ? options.catalog.workflows.get(name) : undefined;
  if (!workflow)
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, `unknown tool ${JSON.stringify(name)}`);
  const args = params['arguments'] ?? {};
  if (!isRecord(args))
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'arguments must be an object');
  const { context, ...inputs } = args;
  const call = callContext(context, options);
  const check = validateArguments(workflow, inputs);
  if (!check.ok) {
    const { missing, undeclared, invalid } = check.error;
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, check.error.message, {
      missing,
      undeclared,
      invalid,
    });
  }
  return toResult(await runOnce(workflow, check.inputs, call, ctx, options));
}

function callContext(context: unknown, options: PipelineSurfaceOptions): CallContext {
  if (context !== undefined && !isRecord(context)) {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'INVALID_ARGUMENT: context must be an object',
    );
  }
  const cwd = context?.['cwd'];
  if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'INVALID_ARGUMENT: context.cwd must be an absolute path',
    );
  }
  if (cwd === undefined && options.requireCwd) {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'INVALID_ARGUMENT: pass an absolute context.cwd for this call',
    );
  }
  const timeout = context?.['timeout_ms'];
  if (
    timeout !== undefined &&
    (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)
  ) {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'INVALID_ARGUMENT: context.timeout_ms must be a positive whole number',
    );
  }
  return {
    cwd: typeof cwd === 'string' ? cwd : options.defaultCwd,
    timeoutMs: Math.min(
      typeof timeout === 'number' ? timeout : options.defaultTimeoutMs,
      options.defaultTimeoutMs,
    ),
  };
}

/** Runs a workflow once in a throwaway state directory, bounded by the call's time limit. */
async function runOnce(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  options: PipelineSurfaceOptions,
): Promise<RunOutcome> {
  // A throwaway run keeps its state in memory: nothing it checkpoints outlives the call, so
  // fsynced files would only cost time. Only an agent's disk cache touches the file system.
  const cacheDir = join(tmpdir(), `mhl-call-${randomUUID()}`);
  const limit = deadline(ctx.signal, call.timeoutMs, `tools/call ${workflow.name}`);
  const redactor = new Redactor();
  const log = options.logger.child({ workflow: workflow.name });
  log.info({ cwd: call.cwd, timeout_ms: call.timeoutMs }, 'call started');
  try {
    const values = fromJson(inputs);
    return await runPipeline(workflow.program, workflow.decl, {
      inputs: isObject(values) ? values : {},
      signal: limit.signal,
      ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
      state: new CheckpointStore(new MemoryStore(), redactor),
      services: {
        cwd: call.cwd,
        childEnv: options.childEnv,
        env: options.env,
        redactor,
        output: (line) => log.info({ output: redactor.redact(line) }),
        cacheDir,
      },
      onEvent: (event) => {
        if (event.type === 'step_start')
          ctx.progress?.(event.index + 1, event.total, `step ${event.step}`);
      },
    });
  } finally {
    limit.dispose();
    await rm(cacheDir, { recursive: true, force: true });
  }
}

const RETRYABLE = new Set(['TIMEOUT', 'CANCELLED']);

function toResult(outcome: RunOutcome): Record<string, unknown> {
  if (outcome.status === 'completed' || outcome.status === 'paused') {
    const vars = toPlain(outcome.vars) as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: JSON.stringify(vars, null, 2) }],
      structuredContent: vars,
    };
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
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    _meta: {
      'mhl/diagnostic': {
        code,
        message,
        retryable: RETRYABLE.has(code),
        ...(outcome.error?.step ? { step: outcome.error.step } : {}),
      },
    },
  };
}

/**
 * The catalog over MCP: one tool per workflow (added to the shared `ToolTable`) and the
 * workflow resources (a `ResourceProvider`).
 *
 * A synchronous `tools/call` runs the workflow with throwaway state (in memory, gone with the
 * call: no checkpoint, no `context.vars` carry-over). A run's own failure is a tool result
 * with `isError: true` and a diagnostic; only protocol problems (unknown tool, invalid inputs)
 * are JSON-RPC errors. Knows nothing of sockets or streams.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  type Catalog,
  listResources,
  RISK_META_KEY,
  readResource,
  toolEntry,
  validateArguments,
  type Workflow,
  workflowRisk,
} from '../catalog/index.js';
import type { Logger } from '../log/logger.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import { CheckpointStore } from '../runtime/checkpoints.js';
import { deadline } from '../runtime/deadline.js';
import { Redactor } from '../runtime/redact.js';
import { type RunOutcome, runPipeline } from '../runtime/runner.js';
import { fromJson, isObject, toPlain } from '../runtime/values.js';
import { MemoryStore } from '../store/index.js';
import { forwardOutput } from './logging.js';
import type { ResourceProvider } from './resources.js';
import { type PreparedCall, type ToolDefinition, type ToolResult, toolError } from './tools.js';

/** The reserved per-call `context` argument every workflow tool accepts (seed 002). */
const CONTEXT_SCHEMA = {
  type: 'object',
  description: 'Per-call execution context: working directory, item limit and time limit',
  properties: {
    cwd: {
      type: 'string',
      description: "Absolute working directory for the run (default: the server's --cwd)",
    },
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
}

/** One tool per workflow, each taking the reserved `context` argument beside its inputs. */
export function workflowTools(options: PipelineSurfaceOptions): ToolDefinition[] {
  return [...options.catalog.workflows.values()].map((workflow) => {
    const entry = toolEntry(workflow);
    const schema = entry.inputSchema as { properties?: Record<string, unknown> };
    // With --require-cwd the schema says what the server enforces: context and its cwd required.
    const context = options.requireCwd ? { ...CONTEXT_SCHEMA, required: ['cwd'] } : CONTEXT_SCHEMA;
    const required = (entry.inputSchema as { required?: string[] }).required ?? [];
    const inputSchema = {
      ...entry.inputSchema,
      properties: { ...schema.properties, context },
      ...(options.requireCwd ? { required: [...required, 'context'] } : {}),
    };
    const { annotations, risk } = workflowRisk(workflow);
    return {
      entry: {
        ...entry,
        inputSchema,
        annotations,
        _meta: { ...entry._meta, [RISK_META_KEY]: risk },
      },
      execution: true,
      prepare: (args, ctx) => prepareCall(workflow, args, ctx, options),
    };
  });
}

/** The workflow resources: each manifest and source, over every transport. */
export function workflowResources(catalog: Catalog): ResourceProvider {
  return {
    list: () => listResources(catalog),
    read: (uri) => readResource(catalog, uri),
  };
}

/** A call's working directory and time limit, from its `context` and the server defaults. */
export interface CallContext {
  readonly cwd: string;
  readonly timeoutMs: number;
}

function prepareCall(
  workflow: Workflow,
  args: Readonly<Record<string, unknown>>,
  ctx: RequestContext,
  options: PipelineSurfaceOptions,
): PreparedCall {
  const { inputs, call } = checkCall(workflow, args, options);
  return {
    timeoutMs: call.timeoutMs,
    run: async (signal) =>
      toResult(await runOnce(workflow, inputs, call, { ...ctx, signal }, options)),
  };
}

/**
 * Checks a workflow call's arguments: the reserved `context` and the declared inputs.
 * Throws `-32602` naming the missing, undeclared and invalid inputs.
 */
export function checkCall(
  workflow: Workflow,
  args: Readonly<Record<string, unknown>>,
  options: Pick<PipelineSurfaceOptions, 'defaultCwd' | 'defaultTimeoutMs' | 'requireCwd'>,
): { inputs: Readonly<Record<string, unknown>>; call: CallContext } {
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
  return { inputs: check.inputs, call };
}

function callContext(
  context: unknown,
  options: Pick<PipelineSurfaceOptions, 'defaultCwd' | 'defaultTimeoutMs' | 'requireCwd'>,
): CallContext {
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

let madeCacheRoot: string | undefined;

/** What a run without agents is handed as its cache folder: nothing ever creates it. */
const UNUSED_CACHE_DIR = join(tmpdir(), 'mhl-no-agent-cache');

/**
 * Where synchronous calls' agent caches go, one folder per call: a private folder made on first
 * use (not a name another local user could create first) and removed when the process exits.
 */
function callCacheRoot(): string {
  if (madeCacheRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'mhl-calls-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    madeCacheRoot = root;
  }
  return madeCacheRoot;
}

const agentUse = new WeakMap<Workflow, boolean>();

/** Whether any file of the workflow's program declares an agent (and so may cache to disk). */
function usesAgents(workflow: Workflow): boolean {
  let uses = agentUse.get(workflow);
  if (uses === undefined) {
    uses = workflow.program.namespace.modules.some((m) =>
      m.program.decls.some((d) => d.kind === 'Agent'),
    );
    agentUse.set(workflow, uses);
  }
  return uses;
}

/** Runs a workflow once with throwaway state (nothing persisted), bounded by the call's time limit. */
async function runOnce(
  workflow: Workflow,
  inputs: Readonly<Record<string, unknown>>,
  call: CallContext,
  ctx: RequestContext,
  options: PipelineSurfaceOptions,
): Promise<RunOutcome> {
  // A throwaway run writes no state at all (`ephemeral`): nothing it would checkpoint may
  // outlive the call. Only an agent's disk cache touches the file system, in a folder of its own.
  const cacheDir = usesAgents(workflow) ? join(callCacheRoot(), randomUUID()) : undefined;
  const limit = deadline(ctx.signal, call.timeoutMs, `tools/call ${workflow.name}`);
  const redactor = new Redactor();
  const { logger } = options;
  const name = workflow.name;
  // Debug, not info: a synchronous write per call costs a quarter of the throughput of a
  // trivial workflow over HTTP; /metrics counts calls, MHL_LOG_LEVEL=debug shows each one.
  logger.debug({ workflow: name, cwd: call.cwd, timeout_ms: call.timeoutMs }, 'call started');
  try {
    const values = fromJson(inputs);
    const outcome = await runPipeline(workflow.program, workflow.decl, {
      inputs: isObject(values) ? values : {},
      signal: limit.signal,
      ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
      state: new CheckpointStore(new MemoryStore(), redactor),
      ephemeral: true,
      // Never persisted, so it need not be a 128-bit id; Node pools UUIDs, random bytes not.
      session: randomUUID().replaceAll('-', ''),
      services: {
        cwd: call.cwd,
        childEnv: options.childEnv,
        env: options.env,
        redactor,
        output: (line) => {
          const text = redactor.redact(line);
          logger.info({ workflow: name, output: text });
          forwardOutput(ctx.log, name, text);
        },
        cacheDir: cacheDir ?? UNUSED_CACHE_DIR,
      },
      onEvent: (event) => {
        if (event.type === 'step_start')
          ctx.progress?.(event.index + 1, event.total, `step ${event.step}`);
      },
    });
    // The call's own deadline cancels the run; report it as the timeout it was.
    if (!limit.expired() || outcome.status !== 'canceled') return outcome;
    const message = `the call timed out after ${call.timeoutMs} ms (context.timeout_ms or --default-timeout-ms)`;
    return { ...outcome, status: 'failed', error: { message, kind: 'step_timeout' } };
  } finally {
    limit.dispose();
    if (cacheDir !== undefined) await rm(cacheDir, { recursive: true, force: true });
  }
}

const RETRYABLE = new Set(['TIMEOUT', 'CANCELLED']);

function toResult(outcome: RunOutcome): ToolResult {
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
  const step = outcome.error?.step;
  // Admission never queues, so a timeout can only have happened while executing (seed 002).
  const phase = code === 'TIMEOUT' ? { phase: 'execution' } : {};
  return toolError(code, message, RETRYABLE.has(code), step ? { step, ...phase } : phase);
}

/**
 * Async runs over MCP (both transports): the `run/start|status|resume|cancel|list|logs` methods that
 * answer the bare run view, the six `mhl_run_*` tools that bridge ordinary clients to them, and
 * the owner-gated `mhl://run/<id>/logs` and `mhl://run/<id>/result` resources.
 *
 * For the methods, run errors become JSON-RPC errors: an unknown or foreign runId is one fixed
 * `-32602` answer, refused arguments `-32602` naming the field in `error.data`, a refused
 * request `-32602` with the reason, a draining or saturated server, or one whose state storage
 * refused the run's record (`data.code` `STATE_STORAGE_FULL`), `-32000`. The tools answer
 * the same errors as tool results (`isError`, `_meta["mhl/diagnostic"]`), so a model can react.
 */
import { type Catalog, type CONTROL_RISK, controlToolRisk } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import {
  ArgumentError,
  type Caller,
  ownerOf,
  quotaKeyOf,
  RunError,
  type RunErrorCode,
  type RunRegistry,
} from '../runs/index.js';
import { type ControlSchema, checkControlArguments, type PropertySchema } from './arguments.js';
import type { MethodEntry } from './methods.js';
import { forwardedArgumentsSchema } from './pipelines.js';
import type { ResourceProvider } from './resources.js';
import { invalidArgumentResult, type ToolDefinition, type ToolResult, toolError } from './tools.js';

type RunMethod = (
  params: Record<string, unknown>,
  caller: Caller,
) => Promise<Record<string, unknown>>;

/** The six methods, by name; each takes the params as the raw method does. */
function runMethods(registry: RunRegistry): Record<string, RunMethod> {
  return {
    'run/start': async (params, caller) => {
      const name = params['name'];
      if (typeof name !== 'string')
        throw invalid('name', 'run/start needs the workflow name as a string "name"');
      return { ...(await registry.start(name, argumentsOf(params), caller)) };
    },
    'run/status': async (params, caller) => ({
      ...(await registry.status(runIdOf(params), caller)),
    }),
    'run/resume': async (params, caller) => ({
      ...(await registry.resume(runIdOf(params), argumentsOf(params), caller)),
    }),
    'run/cancel': async (params, caller) => ({
      ...(await registry.cancel(runIdOf(params), caller)),
    }),
    'run/list': async (_params, caller) => ({ runs: await registry.listAll(caller) }),
    'run/logs': async (params, caller) => {
      const since = params['since'] ?? 0;
      if (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0)
        throw invalid(
          'since',
          'since must be a whole number of bytes, 0 or more (the last nextSince)',
        );
      return { ...(await registry.logs(runIdOf(params), since, caller)) };
    },
  };
}

export interface RunSurfaceOptions {
  readonly catalog: Catalog;
  readonly registry: RunRegistry;
  readonly logger: Logger;
  /** Whether a tool name is already published (a workflow's name wins over a run tool's). */
  readonly published: (name: string) => boolean;
  /** A workflow tool, whose `context` schema `arguments` describes. */
  readonly target: ToolDefinition | undefined;
}

/** The run surface: the `run/*` methods, the `mhl_run_*` tools and the run resources. */
export interface RunSurface {
  readonly methods: readonly MethodEntry[];
  readonly tools: readonly ToolDefinition[];
  readonly resources: readonly ResourceProvider[];
}

/**
 * Builds the `run/*` methods, the `mhl_run_*` tools (one a workflow already publishes under the
 * same name, `published`, is left out with a warning) and the provider of the run resources.
 */
export function runSurface(options: RunSurfaceOptions): RunSurface {
  const methods = runMethods(options.registry);
  const handlers = Object.entries(methods).map(
    ([method, run]): MethodEntry => ({
      method,
      handler: (params, ctx) => mapErrors(() => run(params, callerOf(ctx))),
    }),
  );
  const workflows = [...options.catalog.workflows.keys()];
  const tools = bridgeTools(workflows, options.target, methods).filter((tool) => {
    if (!options.published(tool.name)) return true;
    options.logger.warn(
      { tool: tool.name },
      'a workflow has the name of a run control tool; the control tool is not published',
    );
    return false;
  });
  return { methods: handlers, tools, resources: [runResources(options.registry)] };
}

function callerOf(ctx: RequestContext): Caller {
  return {
    owner: ownerOf(ctx),
    quota: quotaKeyOf(ctx),
    ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
  };
}

async function mapErrors<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof ArgumentError) {
      const data = { code: error.code, field: error.field, ...error.details };
      throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, error.message, data);
    }
    if (!(error instanceof RunError)) throw error;
    // The run lease could not be read or taken: the server's fault, not the request's (§5.3).
    if (error.code === 'LEASE_UNAVAILABLE') {
      throw new RpcError(RPC_ERROR_CODES.INTERNAL_ERROR, error.message, {
        code: error.code,
        retryable: true,
      });
    }
    // A draining, saturated or storage-starved server, or a caller over its quota, is
    // unavailable for now (-32000, spec/mhl-serve.md §10); `data.code` tells which.
    if (!UNAVAILABLE.has(error.code))
      throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, error.message, error.data);
    const [code, retryable] = RUN_ERROR_RESULTS[error.code];
    throw new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, error.message, {
      code,
      retryable,
      ...error.data,
    });
  }
}

/** A refused `run/*` parameter (`-32602`, naming it, once `mapErrors` maps it). */
function invalid(field: string, message: string): ArgumentError {
  return new ArgumentError(field, message);
}

function runIdOf(params: Record<string, unknown>): string {
  const runId = params['runId'];
  if (typeof runId !== 'string') throw invalid('runId', 'runId must be a string');
  return runId;
}

function argumentsOf(params: Record<string, unknown>): Record<string, unknown> {
  const args = params['arguments'] ?? {};
  if (!isRecord(args)) throw invalid('arguments', 'arguments must be an object');
  return args;
}

const RUN_ID_SCHEMA: PropertySchema = {
  type: 'string',
  description: 'The runId mhl_run_start returned',
};

/** One `mhl_run_*` tool: what it is called and shows, and how its arguments become params. */
interface Bridge {
  readonly name: string;
  readonly method: string;
  readonly title: string;
  readonly description: string;
  readonly properties: Readonly<Record<string, PropertySchema>>;
  readonly required: readonly string[];
  readonly risk: keyof typeof CONTROL_RISK;
  /** The method's params from the tool's arguments (unchanged by default). */
  readonly rename?: (args: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /** A refused param's name in the tool's arguments, when `rename` changed it. */
  readonly fieldOf?: (param: string) => string;
}

/**
 * The six bridges. `target` is a workflow tool: `arguments` takes the reserved `context` as it
 * does (with `--require-cwd`, a start must carry one).
 */
function bridges(workflows: readonly string[], target: ToolDefinition | undefined): Bridge[] {
  const inputs =
    'The workflow inputs, as its inputSchema in tools/list says; at most 256 KiB as JSON';
  const started = forwardedArgumentsSchema(inputs, target);
  const resumed = forwardedArgumentsSchema(
    `${inputs}; merged over the run's saved arguments (a context given replaces the saved one)`,
    target,
    true,
  );
  return [
    {
      name: 'mhl_run_start',
      method: 'run/start',
      title: 'Start an async run',
      description:
        'Start a workflow as a durable async run; poll it with mhl_run_status and mhl_run_logs.',
      properties: {
        workflow: {
          type: 'string',
          description: 'The workflow to run',
          ...(workflows.length > 0 ? { enum: workflows } : {}),
        },
        arguments: started.schema,
      },
      required: started.required ? ['workflow', 'arguments'] : ['workflow'],
      risk: 'dispatch',
      rename: ({ workflow, ...rest }) => ({ name: workflow, ...rest }),
      fieldOf: (param) => (param === 'name' ? 'workflow' : param),
    },
    {
      name: 'mhl_run_status',
      method: 'run/status',
      title: 'Run status',
      description:
        'The status of one of your runs: state, step, progress, result variables when done.',
      properties: { runId: RUN_ID_SCHEMA },
      required: ['runId'],
      risk: 'read',
    },
    {
      name: 'mhl_run_resume',
      method: 'run/resume',
      title: 'Resume a run',
      description:
        'Continue a paused, failed or canceled run from its last checkpoint; arguments are merged over the original ones.',
      properties: { runId: RUN_ID_SCHEMA, arguments: resumed.schema },
      required: ['runId'],
      risk: 'dispatch',
    },
    {
      name: 'mhl_run_cancel',
      method: 'run/cancel',
      title: 'Cancel a run',
      description:
        'Cancel one of your queued or working runs (it stays resumable when checkpointed).',
      properties: { runId: RUN_ID_SCHEMA },
      required: ['runId'],
      risk: 'cancel',
    },
    {
      name: 'mhl_run_list',
      method: 'run/list',
      title: 'List your runs',
      description: 'Your runs, sorted by id.',
      properties: {},
      required: [],
      risk: 'read',
    },
    {
      name: 'mhl_run_logs',
      method: 'run/logs',
      title: 'Run logs',
      description: 'A run’s output from byte offset since (pass the last nextSince to continue).',
      properties: {
        runId: RUN_ID_SCHEMA,
        since: {
          type: 'integer',
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: 'Byte offset to read from: 0, or the last nextSince',
        },
      },
      required: ['runId'],
      risk: 'read',
    },
  ];
}

/** The `mhl_run_*` tools: each checks and renames its arguments and calls its method. */
function bridgeTools(
  workflows: readonly string[],
  target: ToolDefinition | undefined,
  methods: Record<string, RunMethod>,
): ToolDefinition[] {
  return bridges(workflows, target).map((bridge): ToolDefinition => {
    const { name, properties, required } = bridge;
    const inputSchema: ControlSchema = {
      type: 'object',
      properties,
      required,
      additionalProperties: false,
    };
    return {
      name,
      entry: {
        name,
        description: bridge.description,
        inputSchema,
        ...controlToolRisk(bridge.risk, bridge.title),
      },
      execution: false,
      prepare: (args, ctx) => {
        checkControlArguments(name, inputSchema, args);
        const params = bridge.rename ? bridge.rename(args) : { ...args };
        const run = methods[bridge.method] as RunMethod;
        return {
          run: async () => {
            try {
              return toolResult(await run(params, callerOf(ctx)));
            } catch (error) {
              return bridgeFailure(error, bridge);
            }
          },
        };
      },
    };
  });
}

/** Each run error as a tool's diagnostic code, and whether retrying later may succeed. */
const RUN_ERROR_RESULTS: Readonly<Record<RunErrorCode, [string, boolean]>> = {
  RUN_NOT_FOUND: ['RUN_NOT_FOUND', false],
  RUN_ACTIVE: ['RUN_ACTIVE', true],
  RUN_NOT_RESUMABLE: ['RUN_NOT_RESUMABLE', false],
  SHUTTING_DOWN: ['EXECUTOR_SHUTTING_DOWN', true],
  CAPACITY_FULL: ['RUN_CAPACITY_FULL', true],
  QUOTA_EXCEEDED: ['RUN_QUOTA_EXCEEDED', true],
  STATE_STORAGE_FULL: ['STATE_STORAGE_FULL', true],
  STATE_STORE_FAILED: ['STATE_STORE_FAILED', true],
  LEASE_UNAVAILABLE: ['LEASE_UNAVAILABLE', true],
};

/** Run errors that are the server's condition, not the request's (-32000, retry later). */
const UNAVAILABLE: ReadonlySet<RunErrorCode> = new Set([
  'SHUTTING_DOWN',
  'CAPACITY_FULL',
  'QUOTA_EXCEEDED',
  'STATE_STORAGE_FULL',
  'STATE_STORE_FAILED',
]);

/** A bridged method's refusal as a tool result; anything else is the server's own fault. */
function bridgeFailure(error: unknown, bridge: Bridge): ToolResult {
  if (error instanceof ArgumentError) {
    const [param, ...rest] = error.field.split('.');
    const field = [bridge.fieldOf?.(param as string) ?? param, ...rest].join('.');
    return invalidArgumentResult(new ArgumentError(field, error.message, error.details));
  }
  if (!(error instanceof RunError)) throw error;
  const [code, retryable] = RUN_ERROR_RESULTS[error.code];
  return toolError(code, error.message, retryable, error.data);
}

/** A run/* answer as a `CallToolResult`, with links to the run's resources. */
function toolResult(result: Record<string, unknown>): ToolResult {
  const content: Record<string, unknown>[] = [
    { type: 'text', text: JSON.stringify(result, null, 2) },
  ];
  const runId = result['runId'];
  if (typeof runId === 'string') {
    content.push(
      {
        type: 'resource_link',
        uri: logsUri(runId),
        name: `run ${runId} logs`,
        mimeType: 'text/plain',
      },
      {
        type: 'resource_link',
        uri: resultUri(runId),
        name: `run ${runId} result`,
        mimeType: 'application/json',
      },
    );
  }
  return { content, structuredContent: result };
}

const logsUri = (runId: string) => `mhl://run/${runId}/logs`;
const resultUri = (runId: string) => `mhl://run/${runId}/result`;
const RUN_URI = /^mhl:\/\/run\/([^/]+)\/(logs|result)$/;

/** `mhl://run/<id>/logs` (the whole log held) and `…/result` (the run view), owner-gated. */
function runResources(registry: RunRegistry): ResourceProvider {
  return {
    templates: [
      {
        uriTemplate: 'mhl://run/{runId}/logs',
        name: 'run logs',
        description: 'The output an async run has logged (the rolling buffer)',
        mimeType: 'text/plain',
      },
      {
        uriTemplate: 'mhl://run/{runId}/result',
        name: 'run result',
        description: 'The status object of an async run, with its variables once completed',
        mimeType: 'application/json',
      },
    ],
    // A caller's own run ids only: anyone else's must not leak through completion.
    complete: (_template, argument, _prefix, ctx) =>
      argument === 'runId' ? registry.list(callerOf(ctx)).map((run) => run.runId) : [],
    read: async (uri, ctx) => {
      const match = RUN_URI.exec(uri);
      if (!match) return undefined;
      const [, runId, kind] = match as unknown as [string, string, 'logs' | 'result'];
      const caller = callerOf(ctx);
      try {
        const text =
          kind === 'logs'
            ? (await registry.logs(runId, 0, caller)).text
            : JSON.stringify(await registry.status(runId, caller), null, 2);
        return {
          contents: [{ uri, mimeType: kind === 'logs' ? 'text/plain' : 'application/json', text }],
          // One owner's, and it changes as the run goes on: no shared cache may keep it.
          private: true,
        };
      } catch (error) {
        if (error instanceof RunError && error.code === 'RUN_NOT_FOUND') return undefined;
        throw error;
      }
    },
  };
}

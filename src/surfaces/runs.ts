/**
 * Async runs over MCP (HTTP only): the `run/start|status|resume|cancel|list|logs` methods that
 * answer the bare run view, the six `mhl_run_*` tools that bridge ordinary clients to them, and
 * the owner-gated `mhl://run/<id>/logs` and `mhl://run/<id>/result` resources.
 *
 * Run errors become JSON-RPC errors here: an unknown or foreign runId is one fixed `-32602`
 * answer, a refused request `-32602` with the reason, a draining or saturated server `-32000`.
 */
import { type Catalog, type CONTROL_RISK, controlToolRisk } from '../catalog/index.js';
import type { Logger } from '../log/logger.js';
import {
  type Dispatcher,
  isRecord,
  type RequestContext,
  RPC_ERROR_CODES,
  RpcError,
} from '../protocol/index.js';
import { ownerOf } from '../runs/owner.js';
import type { Caller, RunRegistry } from '../runs/registry.js';
import { RunError } from '../runs/types.js';
import type { ResourceProvider } from './resources.js';
import {
  invalidArgument,
  onlyKeys,
  type ToolDefinition,
  type ToolResult,
  type ToolTable,
} from './tools.js';

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
        throw invalid('run/start needs the workflow name as a string "name"');
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
    'run/list': async (_params, caller) => ({ runs: registry.list(caller) }),
    'run/logs': async (params, caller) => {
      const since = params['since'] ?? 0;
      if (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0)
        throw invalid('since must be a whole number of bytes, 0 or more (the last nextSince)');
      return { ...(await registry.logs(runIdOf(params), since, caller)) };
    },
  };
}

export interface RunSurfaceOptions {
  readonly catalog: Catalog;
  readonly registry: RunRegistry;
  readonly logger: Logger;
}

/**
 * Registers the `run/*` methods and adds the `mhl_run_*` tools to `tools` (a tool a workflow
 * already publishes under the same name is skipped, with a warning). Returns the provider of
 * the run resources.
 */
export function registerRunSurface(
  dispatcher: Dispatcher,
  tools: ToolTable,
  options: RunSurfaceOptions,
): ResourceProvider {
  const methods = runMethods(options.registry);
  for (const [method, run] of Object.entries(methods)) {
    dispatcher.register(method, (params, ctx) => mapErrors(() => run(params, callerOf(ctx))));
  }
  for (const tool of bridgeTools(options.catalog, methods)) {
    if (tools.has(tool.entry.name)) {
      options.logger.warn(
        { tool: tool.entry.name },
        'a workflow has the name of a run control tool; the control tool is not published',
      );
      continue;
    }
    tools.add(tool);
  }
  return runResources(options.registry);
}

function callerOf(ctx: RequestContext): Caller {
  return {
    owner: ownerOf(ctx),
    ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
  };
}

async function mapErrors<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof RunError)) throw error;
    // A draining or saturated server is unavailable (-32000, spec/mhl-serve.md §10).
    const unavailable = error.code === 'DRAINING' || error.code === 'BUSY';
    const code = unavailable ? RPC_ERROR_CODES.SERVER_UNAVAILABLE : RPC_ERROR_CODES.INVALID_PARAMS;
    throw new RpcError(code, error.message, error.data);
  }
}

function invalid(message: string): RpcError {
  return new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, message);
}

function runIdOf(params: Record<string, unknown>): string {
  const runId = params['runId'];
  if (typeof runId !== 'string') throw invalid('runId must be a string');
  return runId;
}

function argumentsOf(params: Record<string, unknown>): Record<string, unknown> {
  const args = params['arguments'] ?? {};
  if (!isRecord(args)) throw invalid('arguments must be an object');
  return args;
}

const RUN_ID_SCHEMA = { type: 'string', description: 'The runId mhl_run_start returned' };
const ARGUMENTS_SCHEMA = {
  type: 'object',
  description:
    'The workflow inputs (and an optional context {cwd, timeout_ms}); at most 256 KiB as JSON',
};

/** One `mhl_run_*` tool: what it is called and shows, and how its arguments become params. */
interface Bridge {
  readonly name: string;
  readonly method: string;
  readonly title: string;
  readonly description: string;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly required: readonly string[];
  readonly risk: keyof typeof CONTROL_RISK;
  /** The method's params from the tool's arguments (unchanged by default). */
  readonly rename?: (args: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

function bridges(workflows: readonly string[]): Bridge[] {
  return [
    {
      name: 'mhl_run_start',
      method: 'run/start',
      title: 'Start an async run',
      description:
        'Start a workflow as a durable async run; poll it with mhl_run_status and mhl_run_logs.',
      properties: { workflow: { type: 'string', enum: workflows }, arguments: ARGUMENTS_SCHEMA },
      required: ['workflow'],
      risk: 'dispatch',
      rename: ({ workflow, ...rest }) => ({ name: workflow, ...rest }),
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
      properties: { runId: RUN_ID_SCHEMA, arguments: ARGUMENTS_SCHEMA },
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
      properties: { runId: RUN_ID_SCHEMA, since: { type: 'integer', minimum: 0 } },
      required: ['runId'],
      risk: 'read',
    },
  ];
}

/** The `mhl_run_*` tools: each checks and renames its arguments and calls its method. */
function bridgeTools(catalog: Catalog, methods: Record<string, RunMethod>): ToolDefinition[] {
  return bridges([...catalog.workflows.keys()]).map((bridge): ToolDefinition => {
    const { name, properties, required } = bridge;
    return {
      entry: {
        name,
        description: bridge.description,
        inputSchema: { type: 'object', properties, required, additionalProperties: false },
        ...controlToolRisk(bridge.risk, bridge.title),
      },
      execution: false,
      prepare: (args, ctx) => {
        onlyKeys(args, Object.keys(properties), name);
        const missing = required.filter((k) => !(k in args));
        if (missing.length > 0)
          throw invalidArgument(
            `${name} needs ${missing.map((k) => JSON.stringify(k)).join(', ')}`,
          );
        const params = bridge.rename ? bridge.rename(args) : { ...args };
        const run = methods[bridge.method] as RunMethod;
        return {
          run: async () => toolResult(await mapErrors(() => run(params, callerOf(ctx)))),
        };
      },
    };
  });
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
        };
      } catch (error) {
        if (error instanceof RunError && error.code === 'UNKNOWN_RUN') return undefined;
        throw error;
      }
    },
  };
}

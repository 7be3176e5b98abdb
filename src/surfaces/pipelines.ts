/**
 * The catalog over MCP: one tool per workflow (added to the shared `ToolTable`) and the
 * workflow resources (a `ResourceProvider`).
 *
 * A synchronous `tools/call` runs the workflow with throwaway state (in memory, gone with the
 * call: no step checkpoint, no `context.vars` carry-over). A run's own failure is a tool result
 * with `isError: true` and a diagnostic, and so are invalid arguments (`INVALID_ARGUMENT`, from
 * `checkWorkflowCall`); only an unknown tool is a JSON-RPC error. A pause is not a success: the client is
 * asked for the pause's inputs and the call resumes at the pausing step, or it is a
 * `WORKFLOW_PAUSED` error (`sync-call.ts`, `pause.ts`). Knows nothing of sockets or streams.
 */
import {
  type Catalog,
  listResources,
  RISK_META_KEY,
  readResource,
  toolEntry,
  type Workflow,
  workflowRisk,
} from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import type { RequestContext } from '../protocol/index.js';
import {
  type CallCredentials,
  checkWorkflowCall,
  slotGuidance,
  takesCredentials,
} from '../runs/index.js';
import type { AgentLimiters, VaultLookup } from '../runtime/index.js';
import { listedSchema } from './input-schema.js';
import type { ResourceProvider } from './resources.js';
import { runCall } from './sync-call.js';
import type { PreparedCall, ToolDefinition } from './tools.js';

export interface PipelineSurfaceOptions {
  readonly catalog: Catalog;
  readonly logger: Logger;
  /** Bounds every call; a call's `context.timeout_ms` may lower it. */
  readonly defaultTimeoutMs: number;
  /** Working directory for calls without `context.cwd`. */
  readonly defaultCwd: string;
  /** `--require-cwd`: every call must name its working directory (an absolute `context.cwd`). */
  readonly requireCwd: boolean;
  readonly childEnv: Readonly<Record<string, string>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * A private folder the server owns (and removes at shutdown) for agents' disk caches: each
   * call that declares agents gets a fresh folder inside, removed when the call ends.
   */
  readonly cacheRoot: string;
  /** Agents' rate limits, shared by every call and run of this server (spec §5.1). */
  readonly agentLimiters?: AgentLimiters;
  /** What `vault()` reads in a call, given the call's `credentials`; none without a vault. */
  readonly vault?: (credentials: CallCredentials) => VaultLookup;
}

/** One tool per workflow, each taking the reserved `context` argument beside its inputs. */
export function workflowTools(options: PipelineSurfaceOptions): ToolDefinition[] {
  return [...options.catalog.workflows.values()].map((workflow) => {
    // Built on first read: projecting the schema and walking the program for its risk costs
    // start-up time no request needs before the first tools/list.
    let entry: ToolDefinition['entry'] | undefined;
    let inputSchema: Readonly<Record<string, unknown>> | undefined;
    const schema = () => {
      inputSchema ??= listedSchema(workflow, options.requireCwd);
      return inputSchema;
    };
    return {
      name: workflow.name,
      get entry() {
        entry ??= listedEntry(workflow, schema());
        return entry;
      },
      get inputSchema() {
        return schema();
      },
      execution: true,
      prepare: (args, ctx) => prepareCall(workflow, args, ctx, options),
    };
  });
}

/** A workflow's `tools/list` entry: `inputSchema` (from `listedSchema`), and its risk. */
function listedEntry(
  workflow: Workflow,
  inputSchema: Readonly<Record<string, unknown>>,
): ToolDefinition['entry'] {
  const entry = toolEntry(workflow);
  const { annotations, risk } = workflowRisk(workflow);
  const slots = takesCredentials(workflow) ? workflow.credentialSlots : [];
  return {
    ...entry,
    ...(slots.length > 0 ? { description: `${entry.description} ${slotGuidance(slots)}` } : {}),
    inputSchema,
    annotations,
    _meta: { ...entry._meta, [RISK_META_KEY]: risk },
  };
}

/** The workflow resources: each manifest and source, over every transport. */
export function workflowResources(catalog: Catalog): ResourceProvider {
  return {
    list: () => listResources(catalog),
    read: (uri) => readResource(catalog, uri),
  };
}

/** An `arguments` property that a control tool forwards to a workflow tool. */
export interface ForwardedSchema {
  readonly type: 'object';
  readonly description: string;
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
}

/**
 * The schema of an `arguments` object a control tool forwards to a workflow tool (`job.start`,
 * `mhl_run_start`, `mhl_run_resume`): the target's own inputs, described rather than repeated,
 * and the reserved `context` exactly as the workflow tools take it. `required` says whether
 * `arguments` itself must be present: with `--require-cwd` a start must carry `context`
 * (`partial`, for a resume merged over the saved arguments, never must).
 */
export function forwardedArgumentsSchema(
  description: string,
  target: ToolDefinition | undefined,
  partial = false,
): { schema: ForwardedSchema; required: boolean } {
  const input = (target?.inputSchema ?? target?.entry['inputSchema'] ?? {}) as {
    properties?: Record<string, unknown>;
    required?: readonly string[];
  };
  // Only `context` is copied: it holds no `$ref`, so the target's `$defs` need not come along
  // (the declared inputs, which may refer to them, are described, not repeated).
  const context = input.properties?.['context'];
  const required = !partial && (input.required ?? []).includes('context');
  const schema: ForwardedSchema = {
    type: 'object',
    description,
    ...(context === undefined ? {} : { properties: { context } }),
    ...(required ? { required: ['context'] } : {}),
  };
  return { schema, required };
}

function prepareCall(
  workflow: Workflow,
  args: Readonly<Record<string, unknown>>,
  ctx: RequestContext,
  options: PipelineSurfaceOptions,
): PreparedCall {
  const { inputs, call } = checkWorkflowCall(workflow, args, options);
  return {
    timeoutMs: call.timeoutMs,
    run: (signal) => runCall(workflow, inputs, call, ctx, signal, options),
  };
}

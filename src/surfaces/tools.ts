/**
 * The one `tools/list` / `tools/call` every surface contributes to. Workflows, the `mhl_run_*`
 * bridges and the `job.*` tools each add definitions to a `ToolTable`; this module answers the
 * two methods, and holds the rule the surfaces share: a call that executes a workflow
 * (`execution: true`) needs a physical slot from `Admission` and fails at once, retryably,
 * when there is none (seed 002: no queue for direct calls). Control tools take no slot. Bad
 * arguments (an `ArgumentError` from any tool) are tool results with `INVALID_ARGUMENT`, so a
 * model can correct itself (MCP 2025-11-25); only an unknown tool name is a protocol error.
 */
import {
  type EagerMethodHandler,
  isRecord,
  type MethodHandler,
  type RequestContext,
  RPC_ERROR_CODES,
  RpcError,
  type RpcErrorCode,
} from '../protocol/index.js';
import { type Admission, ArgumentError, type Refusal, shortKey } from '../runs/index.js';
import type { Cancellation } from '../runtime/index.js';
import type { MethodEntry } from './methods.js';

/** A `CallToolResult` as surfaces build it. */
export type ToolResult = Record<string, unknown>;

/** A validated call, ready to run once admitted. */
export interface PreparedCall {
  /**
   * Runs the call; `signal` aborts on cancellation (a request's deferred one, or a job's
   * AbortSignal). Resolves (never rejects) for tool failures; a call with nothing to wait for
   * may answer at once, without a promise.
   */
  run(signal: Cancellation): ToolResult | Promise<ToolResult>;
  /**
   * The time limit `run` applies itself, when it has one; the job layer reads it so a job can
   * report `timed_out` the moment it expires, before an uncooperative handler has exited.
   */
  readonly timeoutMs?: number | undefined;
}

export interface ToolDefinition {
  /** The tool's name, as `entry.name` says. */
  readonly name: string;
  /**
   * The `tools/list` entry: name, description, inputSchema, annotations, `_meta`. May be built
   * on first read (a workflow's risk walks its whole program), so read it only to list or check.
   */
  readonly entry: Readonly<Record<string, unknown>> & { readonly name: string };
  /**
   * `entry.inputSchema`, when it can be read without building the rest of the entry (a
   * workflow's risk needs its program, which a catalog cache hit loads only on first use).
   */
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  /** True when a call executes work and so needs an execution slot (workflows do). */
  readonly execution: boolean;
  /**
   * Checks the arguments, throwing `ArgumentError` for bad ones (answered as an
   * `INVALID_ARGUMENT` result), and returns the call.
   */
  prepare(
    args: Readonly<Record<string, unknown>>,
    ctx: RequestContext,
  ): PreparedCall | Promise<PreparedCall>;
}

/** The published tools, in the order they were added. */
export class ToolTable {
  readonly #tools = new Map<string, ToolDefinition>();
  #entries: Record<string, unknown>[] | undefined;

  /** Adds a tool; a name already taken is a programming fault (callers check `has` first). */
  add(definition: ToolDefinition): void {
    const { name } = definition;
    if (this.#tools.has(name)) throw new Error(`tool ${JSON.stringify(name)} is defined twice`);
    this.#tools.set(name, definition);
    this.#entries = undefined;
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** The `tools/list` entries; built once and shared, since the table is fixed after start-up. */
  entries(): readonly Record<string, unknown>[] {
    // MCP Tasks are not supported (seed 002): every tool says so, whichever surface added it.
    this.#entries ??= [...this.#tools.values()].map((t) => ({
      ...t.entry,
      execution: { taskSupport: 'forbidden' },
    }));
    return this.#entries;
  }
}

/** A tool's own failure: `isError` with the machine-readable diagnostic of design.md §5. */
export function toolError(
  code: string,
  message: string,
  retryable: boolean,
  extra: Readonly<Record<string, unknown>> = {},
): ToolResult {
  return {
    content: [{ type: 'text', text: message }],
    isError: true,
    _meta: { 'mhl/diagnostic': { code, message, retryable, ...extra } },
  };
}

/** Why admission handed out no slot, as every surface reports it (always retryable). */
export const REFUSALS: Readonly<Record<Refusal, { code: string; message: string }>> = {
  full: {
    code: 'EXECUTION_CAPACITY_FULL',
    message: 'all execution slots are busy (--max-active); retry shortly',
  },
  closed: {
    code: 'EXECUTOR_SHUTTING_DOWN',
    message: 'the server is shutting down; retry on another instance',
  },
};

/** The answer to an execution call that found no slot. */
export function refusedResult(refusal: Refusal): ToolResult {
  const { code, message } = REFUSALS[refusal];
  return toolError(code, message, true);
}

/** Looks up a tool by the `name` a request carries; unknown names are protocol errors. */
function findTool(table: ToolTable, name: unknown, code: RpcErrorCode): ToolDefinition {
  const tool = typeof name === 'string' ? table.get(name) : undefined;
  if (!tool) {
    const shown = typeof name === 'string' ? JSON.stringify(shortKey(name)) : 'without a name';
    throw new RpcError(code, `unknown tool ${shown}`);
  }
  return tool;
}

/**
 * The answer to a call whose arguments were refused: `isError` with `INVALID_ARGUMENT`, the
 * offending `field` and, for a workflow's inputs, the missing, undeclared and invalid ones.
 */
export function invalidArgumentResult(error: ArgumentError): ToolResult {
  return toolError(error.code, error.message, false, { field: error.field, ...error.details });
}

/** True for a result that refused the call's arguments. */
function refusedArguments(result: ToolResult): boolean {
  const meta = result['_meta'];
  const diagnostic = isRecord(meta) ? meta['mhl/diagnostic'] : undefined;
  return isRecord(diagnostic) && diagnostic['code'] === 'INVALID_ARGUMENT';
}

/**
 * The `arguments` of a `tools/call`: absent means `{}`; anything but an object is a malformed
 * request (the CallToolRequest schema), so a protocol error.
 */
function callArguments(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value))
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'arguments must be an object');
  return value;
}

export interface ToolMethodsOptions {
  readonly admission: Admission;
  /**
   * Told how each call ended: a result, a result with `isError`, a refused call, or a question
   * for the client (a paused workflow's `input_required`), which is no success yet.
   */
  readonly onCall?: (outcome: 'success' | 'error' | 'invalid' | 'input_required') => void;
  /** How the tool methods answer where a profile differs from the default (`ToolPolicy`). */
  readonly policy?: ToolPolicy;
}

/**
 * What a profile may change about `tools/list` and `tools/call`: the JSON-RPC code of an
 * unknown tool name (`-32602` by default; the workflow-engine profile answers `-32601`), and a
 * private, uncached scope for the 2026-07-28 list (tools whose definitions follow server state).
 */
export interface ToolPolicy {
  readonly unknownToolCode?: RpcErrorCode;
  readonly privateList?: boolean;
}

/** `tools/list` and `tools/call` over the table. */
export function toolMethods(
  table: ToolTable,
  options: ToolMethodsOptions,
): MethodEntry<EagerMethodHandler>[] {
  const unknownToolCode = options.policy?.unknownToolCode ?? RPC_ERROR_CODES.INVALID_PARAMS;
  const privateList = options.policy?.privateList === true;
  const list: MethodHandler = async (params, ctx) => {
    rejectCursor(params);
    if (privateList && ctx.era === 'modern') {
      return { tools: table.entries(), ttlMs: 0, cacheScope: 'private' };
    }
    return { tools: table.entries() };
  };
  /** Counts a call's outcome and answers its result. */
  const answered = (result: ToolResult): ToolResult => {
    const outcome = refusedArguments(result)
      ? 'invalid'
      : result['resultType'] === 'input_required'
        ? 'input_required'
        : result['isError']
          ? 'error'
          : 'success';
    options.onCall?.(outcome);
    return result;
  };
  /** Refused arguments are the `INVALID_ARGUMENT` result, not a protocol error. */
  const refused = (error: unknown): ToolResult => {
    if (error instanceof ArgumentError) return invalidArgumentResult(error);
    options.onCall?.('invalid');
    throw error;
  };
  const execute = (tool: ToolDefinition, ready: PreparedCall, ctx: RequestContext) =>
    tool.execution
      ? runAdmitted(ready, options.admission, ctx.cancellation)
      : ready.run(ctx.cancellation);
  // Not async, and the call is run here, not in a helper: a workflow prepares synchronously,
  // and a run with nothing to wait for answers at once, so such a call has no promise at all
  // (each async frame is a promise and its microtasks; each await a tick).
  const call: EagerMethodHandler = (params, ctx) => {
    let result: ToolResult | Promise<ToolResult>;
    try {
      // A protocol error (unknown tool, malformed arguments) is no ArgumentError: `refused`
      // counts it and throws it on.
      const tool = findTool(table, params['name'], unknownToolCode);
      const args = callArguments(params['arguments']);
      const prepared = tool.prepare(args, ctx);
      result =
        prepared instanceof Promise
          ? prepared.then((ready) => execute(tool, ready, ctx))
          : execute(tool, prepared, ctx);
    } catch (error) {
      return answered(refused(error));
    }
    return result instanceof Promise
      ? result.then(answered, (e) => answered(refused(e)))
      : answered(result);
  };
  return [
    { method: 'tools/list', handler: list },
    { method: 'tools/call', handler: call },
  ];
}

/**
 * Runs a prepared call in an admission slot, with the execution metadata. Not async: the slot
 * is released when the run settles, and a refusal is a result at once (no promise, no tick).
 */
function runAdmitted(
  call: PreparedCall,
  admission: Admission,
  signal: Cancellation,
): Promise<ToolResult> | ToolResult {
  const slot = admission.tryAcquire();
  if (typeof slot === 'string') return refusedResult(slot);
  const started = performance.now();
  let running: ToolResult | Promise<ToolResult>;
  try {
    running = call.run(signal);
  } catch (error) {
    slot.release();
    throw error;
  }
  if (!(running instanceof Promise)) {
    try {
      return withExecution(running, performance.now() - started, call.timeoutMs);
    } finally {
      slot.release();
    }
  }
  return running.then(
    (result) => {
      try {
        return withExecution(result, performance.now() - started, call.timeoutMs);
      } finally {
        slot.release();
      }
    },
    (error: unknown) => {
      slot.release();
      throw error;
    },
  );
}

/**
 * Adds seed 002's execution metadata, `_meta["mhl/execution"]`, to an executed call's result.
 * There is no queue, so `queue_wait_ms` is always 0; it stays for telemetry compatibility.
 */
export function withExecution(
  result: ToolResult,
  durationMs: number,
  timeoutMs: number | undefined,
): ToolResult {
  // Built by assignment: no empty objects made only to be spread.
  const execution: { queue_wait_ms: number; duration_ms: number; timeout_ms?: number } = {
    queue_wait_ms: 0,
    duration_ms: Math.round(durationMs),
  };
  if (timeoutMs !== undefined) execution.timeout_ms = timeoutMs;
  const out = { ...result };
  const meta = result['_meta'];
  out['_meta'] = isRecord(meta)
    ? { ...meta, 'mhl/execution': execution }
    : { 'mhl/execution': execution };
  return out;
}

/** Lists here have a single page: any cursor is one this server never issued. */
export function rejectCursor(params: Record<string, unknown>): void {
  const cursor = params['cursor'];
  if (cursor !== undefined && cursor !== null && cursor !== '') {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      'invalid cursor: this list has a single page',
    );
  }
}

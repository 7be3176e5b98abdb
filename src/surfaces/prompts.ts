/**
 * The catalog's prompts over MCP: `prompts/list` (one entry per `prompt` declaration, its typed
 * parameters as arguments) and `prompts/get` (the prompt rendered by the interpreter's own
 * template path, as one user message). Arguments arrive as strings and are converted to the
 * declared types first; a bad one is a `-32602` naming it. A body may run anything a step can,
 * so a rendering holds an execution slot like a workflow `tools/call` (none free: `-32000`), and
 * a body's own failure is `-32603` with `data.code`, never the bare internal error. Knows
 * nothing of sockets or streams, and renders nothing itself.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/prompts
 */
import type { Catalog, CatalogPrompt } from '../catalog/index.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import type { Admission, Refusal } from '../runs/index.js';
import { PromptFailure, renderServedPrompt, type Value } from '../runtime/index.js';
import { forwardOutput } from './logging.js';
import type { MethodEntry } from './methods.js';
import type { PipelineSurfaceOptions } from './pipelines.js';
import { convertArguments, PromptArgumentError, promptArguments } from './prompt-arguments.js';
import { REFUSALS, rejectCursor } from './tools.js';

/**
 * What rendering needs: the pipelines surface's catalog, log, child environment, agent cache
 * root and rate limits, and time limit; a prompt body that reads files or runs commands runs in
 * `defaultCwd` (the server's `--cwd`, also under `--require-cwd`: a prompt has no `context`).
 */
export type PromptSurfaceOptions = Pick<
  PipelineSurfaceOptions,
  | 'catalog'
  | 'logger'
  | 'defaultCwd'
  | 'childEnv'
  | 'env'
  | 'cacheRoot'
  | 'agentLimiters'
  | 'defaultTimeoutMs'
> & {
  /** The server's execution slots: a rendering takes one, as a workflow `tools/call` does. */
  readonly admission: Admission;
};

/** The `prompts` capability: the list is fixed once the catalog is loaded. */
export const PROMPTS_CAPABILITY = { prompts: { listChanged: false } } as const;

/** `prompts/list` and `prompts/get` over the catalog's prompts. */
export function promptMethods(options: PromptSurfaceOptions): MethodEntry[] {
  const prompts = [...options.catalog.prompts.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const entries = prompts.map((prompt) => ({
    name: prompt.name,
    ...(prompt.title === undefined ? {} : { title: prompt.title }),
    description: prompt.description,
    arguments: promptArguments(prompt),
  }));
  return [
    {
      method: 'prompts/list',
      handler: async (params) => {
        rejectCursor(params);
        return { prompts: entries };
      },
    },
    {
      method: 'prompts/get',
      handler: async (params, ctx) => {
        const prompt = promptOf(options.catalog, params);
        const args = argumentsOf(prompt, params);
        // Checked arguments first, as a tool call's: a refused request never holds a slot.
        const slot = options.admission.tryAcquire();
        if (typeof slot === 'string') throw refusedError(slot);
        let text: string;
        try {
          text = await render(prompt, args, ctx, options);
        } finally {
          slot.release();
        }
        return {
          description: prompt.description,
          messages: [{ role: 'user', content: { type: 'text', text } }],
        };
      },
    },
  ];
}

/** The prompt `params.name` names. @throws RpcError -32602 for a missing or unknown name. */
export function promptOf(catalog: Catalog, params: Record<string, unknown>): CatalogPrompt {
  const name = params['name'];
  if (typeof name !== 'string')
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'name must be a string', { field: 'name' });
  const prompt = catalog.prompts.get(name);
  if (prompt === undefined)
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, `unknown prompt ${JSON.stringify(name)}`, {
      name,
    });
  return prompt;
}

/**
 * `params.arguments` converted to the prompt's parameter types.
 * @throws RpcError -32602 naming the argument that is missing, undeclared or malformed.
 */
function argumentsOf(
  prompt: CatalogPrompt,
  params: Record<string, unknown>,
): ReadonlyMap<string, Value> {
  const sent = params['arguments'] ?? {};
  if (!isRecord(sent))
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'arguments must be an object', {
      field: 'arguments',
    });
  try {
    return convertArguments(prompt, sent);
  } catch (error) {
    if (!(error instanceof PromptArgumentError)) throw error;
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, error.message, {
      field: `arguments.${error.argument}`,
      argument: error.argument,
    });
  }
}

/**
 * No slot for a rendering: `-32000` (HTTP 503), retryable. Not a tool result: `prompts/get` has
 * no `isError` to carry it.
 */
function refusedError(refusal: Refusal): RpcError {
  const { code, message } = REFUSALS[refusal];
  return new RpcError(RPC_ERROR_CODES.SERVER_UNAVAILABLE, message, { code, retryable: true });
}

/** The `data.code` a failed rendering is answered with, by why it failed. */
const FAILURE_CODES = { failed: 'PROMPT_FAILED', timeout: 'TIMEOUT', canceled: 'CANCELLED' };

/**
 * Renders `prompt` in the server's working directory, its output lines logged and forwarded.
 * @throws RpcError -32603 with `data.code` when the body fails, times out or is cancelled: the
 *   prompt's own failure, its message redacted and relative, logged at warn (not as a fault).
 */
async function render(
  prompt: CatalogPrompt,
  args: ReadonlyMap<string, Value>,
  ctx: RequestContext,
  options: PromptSurfaceOptions,
): Promise<string> {
  const { logger } = options;
  try {
    return await renderServedPrompt(prompt, args, {
      cwd: options.defaultCwd,
      childEnv: options.childEnv,
      env: options.env,
      output: (text) => {
        logger.info({ prompt: prompt.name, output: text });
        forwardOutput(ctx.log, prompt.name, text);
      },
      ...(ctx.principal !== undefined ? { principal: ctx.principal } : {}),
      agentCache: { root: options.cacheRoot },
      ...(options.agentLimiters !== undefined ? { agentLimiters: options.agentLimiters } : {}),
      signal: ctx.signal,
      timeout: { ms: options.defaultTimeoutMs, what: `prompts/get ${prompt.name}` },
    });
  } catch (error) {
    if (!(error instanceof PromptFailure)) throw error;
    const code = FAILURE_CODES[error.kind];
    logger.warn({ prompt: prompt.name, code, error: error.message }, 'prompt failed');
    throw new RpcError(RPC_ERROR_CODES.INTERNAL_ERROR, error.message, { code });
  }
}

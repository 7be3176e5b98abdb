/**
 * The catalog's prompts over MCP: `prompts/list` (one entry per `prompt` declaration, its typed
 * parameters as arguments) and `prompts/get` (the prompt rendered by the interpreter's own
 * template path, as one user message). Arguments arrive as strings and are converted to the
 * declared types first; a bad one is a `-32602` naming it. Knows nothing of sockets or streams,
 * and renders nothing itself.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/prompts
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Catalog, CatalogPrompt } from '../catalog/index.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import { deadline, Redactor, renderServedPrompt } from '../runtime/index.js';
import { forwardOutput } from './logging.js';
import type { MethodEntry } from './methods.js';
import type { PipelineSurfaceOptions } from './pipelines.js';
import { convertArguments, PromptArgumentError, promptArguments } from './prompt-arguments.js';
import { rejectCursor } from './tools.js';

/**
 * What rendering needs: the pipelines surface's catalog, log and child environment; a prompt
 * body that reads files or runs commands runs in `defaultCwd` (the server's `--cwd`).
 */
export type PromptSurfaceOptions = Pick<
  PipelineSurfaceOptions,
  'catalog' | 'logger' | 'defaultCwd' | 'childEnv' | 'env'
> & {
  /** Bounds one rendering. */
  readonly timeoutMs: number;
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
        const text = await render(prompt, params, ctx, options);
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

/** What a rendering that runs no agent is handed as its cache folder: nothing creates it. */
const UNUSED_CACHE_DIR = join(tmpdir(), 'mhl-no-agent-cache');

async function render(
  prompt: CatalogPrompt,
  params: Record<string, unknown>,
  ctx: RequestContext,
  options: PromptSurfaceOptions,
): Promise<string> {
  const sent = params['arguments'] ?? {};
  if (!isRecord(sent))
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'arguments must be an object', {
      field: 'arguments',
    });
  let args: ReturnType<typeof convertArguments>;
  try {
    args = convertArguments(prompt, sent);
  } catch (error) {
    if (!(error instanceof PromptArgumentError)) throw error;
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, error.message, {
      field: `arguments.${error.argument}`,
      argument: error.argument,
    });
  }
  const redactor = new Redactor();
  const { logger } = options;
  // deadline(), not AbortSignal.timeout: Node 20 can collect that timer before it fires.
  const limit = deadline(ctx.signal, options.timeoutMs, `prompts/get ${prompt.name}`);
  try {
    return redactor.redact(
      await renderServedPrompt(
        prompt,
        args,
        {
          cwd: options.defaultCwd,
          childEnv: options.childEnv,
          env: options.env,
          redactor,
          output: (line) => {
            const text = redactor.redact(line);
            logger.info({ prompt: prompt.name, output: text });
            forwardOutput(ctx.log, prompt.name, text);
          },
          cacheDir: UNUSED_CACHE_DIR,
        },
        limit.signal,
      ),
    );
  } finally {
    limit.dispose();
  }
}

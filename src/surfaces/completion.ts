/**
 * `completion/complete`: argument suggestions for prompts (`ref/prompt`: an enum parameter's
 * variants, `true`/`false` for a bool, nothing for free text) and for resource templates
 * (`ref/resource`: whatever the template's provider offers; the workflow templates complete
 * workflow names, run templates the caller's own run ids, so no run id reaches anyone but its
 * owner). Matching is
 * by case-insensitive prefix; at most 100 values, with `total` and `hasMore`.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion
 */
import { type Catalog, manifestUri, sourceUri } from '../catalog/index.js';
import { isRecord, type RequestContext, RPC_ERROR_CODES, RpcError } from '../protocol/index.js';
import type { MethodEntry } from './methods.js';
import { argumentCandidates } from './prompt-arguments.js';
import { promptOf } from './prompts.js';
import type { ResourceProvider } from './resources.js';

/** Most values one answer carries (the specification's cap). */
export const MAX_COMPLETION_VALUES = 100;

/** The `completions` capability. */
export const COMPLETIONS_CAPABILITY = { completions: {} } as const;

/** The workflow resource templates, whose `{name}` completes to workflow names. */
export function workflowTemplates(catalog: Catalog): ResourceProvider {
  const names = [...catalog.workflows.keys()];
  const manifest = manifestUri('{name}');
  const source = sourceUri('{name}');
  return {
    templates: [
      {
        uriTemplate: manifest,
        name: 'workflow manifest',
        description: 'The manifest JSON of a served workflow',
        mimeType: 'application/json',
      },
      ...(catalog.source === 'pack'
        ? []
        : [
            {
              uriTemplate: source,
              name: 'workflow source',
              description: 'The .mh text of a served workflow',
              mimeType: 'text/x-mhl',
            },
          ]),
    ],
    // Reading is the workflow provider's; this one only describes and completes.
    read: () => undefined,
    complete: (_template, argument) => (argument === 'name' ? names : []),
  };
}

/** `completion/complete` over the catalog's prompts and the providers' templates. */
export function completionMethods(
  catalog: Catalog,
  providers: readonly ResourceProvider[],
): MethodEntry[] {
  return [
    {
      method: 'completion/complete',
      handler: async (params, ctx) => {
        const { ref, argument, prefix } = readParams(params);
        const candidates =
          ref['type'] === 'ref/prompt'
            ? promptCandidates(catalog, ref, argument)
            : templateCandidates(providers, ref, argument, prefix, ctx);
        return { completion: answer(candidates, prefix) };
      },
    },
  ];
}

function invalid(message: string, field: string): RpcError {
  return new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, message, { field });
}

function readParams(params: Record<string, unknown>): {
  ref: Record<string, unknown>;
  argument: string;
  prefix: string;
} {
  const ref = params['ref'];
  if (!isRecord(ref) || (ref['type'] !== 'ref/prompt' && ref['type'] !== 'ref/resource'))
    throw invalid('ref must be {type: "ref/prompt", name} or {type: "ref/resource", uri}', 'ref');
  const argument = params['argument'];
  if (!isRecord(argument) || typeof argument['name'] !== 'string')
    throw invalid('argument must be {name, value}', 'argument');
  const value = argument['value'] ?? '';
  if (typeof value !== 'string') throw invalid('argument.value must be a string', 'argument.value');
  return { ref, argument: argument['name'], prefix: value };
}

function promptCandidates(
  catalog: Catalog,
  ref: Record<string, unknown>,
  argument: string,
): readonly string[] {
  const prompt = promptOf(catalog, ref);
  const candidates = argumentCandidates(prompt, argument);
  if (candidates === undefined)
    throw invalid(`prompt "${prompt.name}" has no argument "${argument}"`, 'argument.name');
  return candidates;
}

function templateCandidates(
  providers: readonly ResourceProvider[],
  ref: Record<string, unknown>,
  argument: string,
  prefix: string,
  ctx: RequestContext,
): readonly string[] {
  const uri = ref['uri'];
  if (typeof uri !== 'string') throw invalid('ref.uri must be a string', 'ref.uri');
  for (const provider of providers) {
    if (!provider.templates?.some((t) => t.uriTemplate === uri)) continue;
    if (!variablesOf(uri).includes(argument))
      throw invalid(`${uri} has no variable "${argument}"`, 'argument.name');
    return provider.complete?.(uri, argument, prefix, ctx) ?? [];
  }
  throw invalid(`unknown resource template ${JSON.stringify(uri)}`, 'ref.uri');
}

/** The `{variable}` names of a URI template. */
function variablesOf(template: string): string[] {
  return [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}

function answer(
  candidates: readonly string[],
  prefix: string,
): { values: string[]; total: number; hasMore: boolean } {
  const wanted = prefix.toLowerCase();
  const matching = candidates.filter((c) => c.toLowerCase().startsWith(wanted));
  return {
    values: matching.slice(0, MAX_COMPLETION_VALUES),
    total: matching.length,
    hasMore: matching.length > MAX_COMPLETION_VALUES,
  };
}

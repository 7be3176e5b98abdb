/**
 * The one `resources/list`, `resources/read` and `resources/templates/list` the surfaces share
 * (`resources/subscribe` lives in `subscriptions.ts`). The catalog provides the workflow
 * resources; the run registry provides `mhl://run/<id>/…`, answered with a private, uncached
 * scope on 2026-07-28 (they are one caller's, and change). A URI no provider serves is "resource
 * not found": `-32002` on legacy requests and `-32602` on 2026-07-28 ones, where the former code
 * was dropped.
 */
import type { ResourceContents, ResourceEntry } from '../catalog/index.js';
import {
  type MethodHandler,
  type RequestContext,
  RPC_ERROR_CODES,
  RpcError,
} from '../protocol/index.js';
import type { MethodEntry } from './methods.js';
import { rejectCursor } from './tools.js';

/** A `resources/templates/list` entry. */
export interface ResourceTemplate {
  readonly uriTemplate: string;
  readonly name: string;
  readonly description?: string;
  readonly mimeType: string;
}

export interface ResourceProvider {
  /** Fixed resources to list; per-caller ones (runs) are reached through templates instead. */
  readonly list?: () => readonly ResourceEntry[];
  readonly templates?: readonly ResourceTemplate[];
  /** The contents, or undefined when this provider does not serve `uri` for this caller. */
  read(
    uri: string,
    ctx: RequestContext,
  ): ResourceContents | undefined | Promise<ResourceContents | undefined>;
  /**
   * `completion/complete` for one of this provider's `templates`: the values of its variable
   * `argument` that start with `prefix`, for this caller. Without it, a template completes to
   * nothing (run ids, say, which must not leak to anyone but their owner).
   */
  readonly complete?: (
    uriTemplate: string,
    argument: string,
    prefix: string,
    ctx: RequestContext,
  ) => readonly string[];
}

/** `resources/list`, `resources/templates/list` and `resources/read` over `providers`, in order. */
export function resourceMethods(providers: readonly ResourceProvider[]): MethodEntry[] {
  const resources = providers.flatMap((p) => p.list?.() ?? []);
  const resourceTemplates = providers.flatMap((p) => p.templates ?? []);
  const read: MethodHandler = async (params, ctx) => {
    const uri = params['uri'];
    if (typeof uri !== 'string')
      throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'resources/read needs a string uri');
    const found = await findResource(providers, uri, ctx);
    if (found) {
      const { private: owned, ...contents } = found;
      if (owned !== true || ctx.era !== 'modern') return contents;
      return { ...contents, ttlMs: 0, cacheScope: 'private' };
    }
    throw resourceNotFound(uri, ctx);
  };
  // Single-page lists, fixed once the server is built.
  const listOf =
    (answer: Record<string, unknown>): MethodHandler =>
    async (params) => {
      rejectCursor(params);
      return answer;
    };
  return [
    { method: 'resources/list', handler: listOf({ resources }) },
    { method: 'resources/templates/list', handler: listOf({ resourceTemplates }) },
    { method: 'resources/read', handler: read },
  ];
}

/** The contents of `uri` for this caller from the first provider that serves it, if any. */
export async function findResource(
  providers: readonly ResourceProvider[],
  uri: string,
  ctx: RequestContext,
): Promise<ResourceContents | undefined> {
  for (const provider of providers) {
    const found = await provider.read(uri, ctx);
    if (found) return found;
  }
  return undefined;
}

/** The one answer for a URI nobody serves, whether it never existed or belongs to someone else. */
/** The most of a URI a refusal repeats. */
const MAX_URI_SHOWN = 200;

export function resourceNotFound(uri: string, ctx: RequestContext): RpcError {
  const code =
    ctx.era === 'modern' ? RPC_ERROR_CODES.INVALID_PARAMS : RPC_ERROR_CODES.RESOURCE_NOT_FOUND;
  // Named once and briefly: a caller may send a URI of almost a megabyte.
  const shown = uri.length > MAX_URI_SHOWN ? `${uri.slice(0, MAX_URI_SHOWN)}…` : uri;
  return new RpcError(code, 'resource not found', { uri: shown });
}

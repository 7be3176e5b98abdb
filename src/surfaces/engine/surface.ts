/**
 * The workflow-engine surface: exactly the four `rimthan.*` tools and their resources (the
 * contracts, immutable, and every file of every release the server holds, by digest). A call's
 * arguments are checked against its contract before dispatch (`INVALID_ARGUMENT` naming the
 * field); its result against the declared output schema before it leaves: one that fails is a
 * server bug, logged and answered as an internal error, never sent. Results are canonical JSON
 * text plus `structuredContent`; a domain error is `isError` with `{code, message}`.
 */
import type { ResourceEntry } from '../../catalog/index.js';
import type { Logger } from '../../log/index.js';
import { RPC_ERROR_CODES, RpcError } from '../../protocol/index.js';
import { ArgumentError } from '../../runs/index.js';
import type { ResourceProvider } from '../resources.js';
import type { Surface } from '../surface.js';
import type { ToolDefinition, ToolResult } from '../tools.js';
import { canonicalJson } from './canonical-json.js';
import type { EngineContext } from './checkpoint.js';
import { type ContinueArguments, continueWorkflow } from './continue.js';
import type { ToolName } from './contract-schemas.js';
import { type Contract, compileContracts, contractDocuments } from './contracts.js';
import { EngineError } from './errors.js';
import { type PrepareArguments, prepareStepValidation } from './prepare.js';
import { type StartArguments, startWorkflow } from './start.js';
import { type SubmitArguments, submitStepValidation } from './submit.js';

type Handler = (ctx: EngineContext, args: never) => Record<string, unknown>;

/** `_dispatch_tool`: the four names and nothing else. */
const DISPATCH: Readonly<Record<ToolName, Handler>> = {
  'rimthan.start_workflow': (ctx, args: StartArguments) => startWorkflow(ctx, args),
  'rimthan.continue_workflow': (ctx, args: ContinueArguments) => continueWorkflow(ctx, args),
  'rimthan.prepare_step_validation': (ctx, args: PrepareArguments) =>
    prepareStepValidation(ctx, args),
  'rimthan.submit_step_validation': (ctx, args: SubmitArguments) => submitStepValidation(ctx, args),
};

export interface EngineSurfaceOptions {
  readonly context: EngineContext;
  readonly logger: Logger;
}

/** The surface a `workflow-engine` server serves. */
export function engineSurface(options: EngineSurfaceOptions): Surface {
  const contracts = compileContracts();
  return {
    name: 'workflow-engine',
    tools: contracts.map((c) => engineTool(c, options)),
    resources: [
      contractResources(contracts),
      statusResource(options.context),
      releaseResources(options.context),
    ],
  };
}

/** Runs one tool call synchronously: check, dispatch, check the result, encode. */
export function callEngineTool(
  contract: Contract,
  options: EngineSurfaceOptions,
  args: Readonly<Record<string, unknown>>,
): ToolResult {
  if (!contract.validateInput(args)) throw argumentError(contract);
  let result: Record<string, unknown>;
  let isError = false;
  try {
    result = DISPATCH[contract.name](options.context, args as never);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    result = { code: error.code, message: error.message };
    isError = true;
  }
  if (!contract.validateOutput(result)) {
    options.logger.error(
      { tool: contract.name, errors: contract.validateOutput.errors?.slice(0, 5) },
      'engine result fails its own output schema',
    );
    throw new RpcError(RPC_ERROR_CODES.INTERNAL_ERROR, 'internal error');
  }
  const text = canonicalJson(result);
  if (!isError) return { content: [{ type: 'text', text }], structuredContent: result };
  return {
    content: [{ type: 'text', text }],
    structuredContent: result,
    isError: true,
    _meta: { 'mhl/diagnostic': { ...result, retryable: false } },
  };
}

function engineTool(contract: Contract, options: EngineSurfaceOptions): ToolDefinition {
  return {
    name: contract.name,
    entry: contract.entry,
    inputSchema: contract.entry['inputSchema'] as Record<string, unknown>,
    execution: false,
    prepare: (args) => {
      const result = callEngineTool(contract, options, args);
      return { run: () => Promise.resolve(result) };
    },
  };
}

/** The first schema error as an `ArgumentError` naming the field. */
function argumentError(contract: Contract): ArgumentError {
  const error = contract.validateInput.errors?.[0];
  const extra =
    error?.keyword === 'additionalProperties'
      ? `/${String(error.params['additionalProperty'])}`
      : '';
  const pointer = `${error?.instancePath ?? ''}${extra}`;
  const field = pointer.slice(1).replaceAll('/', '.');
  const message =
    error?.keyword === 'additionalProperties'
      ? `${field} is not a declared argument`
      : `${field || 'arguments'} ${error?.message ?? 'is invalid'}`;
  return new ArgumentError(field, `invalid arguments for ${contract.name}: ${message}`);
}

function contractResources(contracts: readonly Contract[]): ResourceProvider {
  const docs = contractDocuments(contracts);
  const list: ResourceEntry[] = [...docs.keys()].map((uri) => ({
    uri,
    name: uri.slice('mhl://engine/contracts/'.length),
    description: 'immutable JSON Schema 2020-12 contract',
    mimeType: 'application/schema+json',
  }));
  return {
    list: () => list,
    read: (uri) => {
      const text = docs.get(uri);
      return text === undefined
        ? undefined
        : { contents: [{ uri, mimeType: 'application/schema+json', text }] };
    },
  };
}

const STATUS_URI = 'mhl://engine/status';

/**
 * What the server serves now: the active release (after a refresh check), the migration
 * target, the signing key id, and the last refresh's failure while the last good release is
 * served. It changes, so 2026-07-28 answers are private and uncached.
 */
function statusResource(ctx: EngineContext): ResourceProvider {
  const identity = (r: { id: string; version: string; digest: string }) => ({
    id: r.id,
    version: r.version,
    digest: r.digest,
  });
  return {
    list: () => [
      {
        uri: STATUS_URI,
        name: 'workflow-engine status',
        description: 'active release, migration target, key id, last refresh failure',
        mimeType: 'application/json',
      },
    ],
    read: (uri) => {
      if (uri !== STATUS_URI) return undefined;
      const active = ctx.releases.active();
      const target = ctx.releases.target;
      const status = {
        active_release: identity(active),
        migration_target: target ? identity(target) : null,
        kid: ctx.ring.signingKid,
        refresh_failure: ctx.releases.refreshFailure() ?? null,
      };
      const text = JSON.stringify(status, null, 2);
      return { contents: [{ uri, mimeType: 'application/json', text }], private: true };
    },
  };
}

const RELEASE_PREFIX = 'mhl://engine/release/';

/** Every file of a release the server holds, addressed by release digest and path. */
function releaseResources(ctx: EngineContext): ResourceProvider {
  const uriOf = (digest: string, path: string) => `${RELEASE_PREFIX}${digest}/${path}`;
  return {
    list: () =>
      [ctx.releases.active(), ...(ctx.releases.target ? [ctx.releases.target] : [])].flatMap((r) =>
        [...r.files.values()].map((f) => ({
          uri: uriOf(r.digest, f.path),
          name: `${r.id}@${r.version}/${f.path}`,
          mimeType: mimeOf(f.path),
        })),
      ),
    templates: [
      {
        uriTemplate: `${RELEASE_PREFIX}{digest}/{+path}`,
        name: 'release file',
        description: 'a file of a release this server holds, by release digest',
        mimeType: 'text/plain',
      },
    ],
    read: (uri) => {
      if (!uri.startsWith(RELEASE_PREFIX)) return undefined;
      const rest = uri.slice(RELEASE_PREFIX.length);
      const slash = rest.indexOf('/');
      if (slash < 0) return undefined;
      let release: ReturnType<EngineContext['releases']['pinned']>;
      try {
        release = ctx.releases.pinned(rest.slice(0, slash));
      } catch {
        return undefined;
      }
      const file = release.files.get(rest.slice(slash + 1));
      return file === undefined
        ? undefined
        : { contents: [{ uri, mimeType: mimeOf(file.path), text: file.text }] };
    },
  };
}

function mimeOf(path: string): string {
  if (path.endsWith('.json')) return 'application/json';
  if (path.endsWith('.md')) return 'text/markdown';
  if (path.endsWith('.yaml')) return 'application/yaml';
  return 'text/plain';
}

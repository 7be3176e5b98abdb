/**
 * Era selection, decided per request (mcp-wire.md "Era selection, per request"): a request whose
 * `params._meta` carries `io.modelcontextprotocol/protocolVersion` is modern (2026-07-28,
 * stateless); otherwise it is legacy and needs a session that `initialize` negotiated. Also the
 * legacy version negotiation table and the decoration every modern result gets. Pure functions:
 * no I/O, no handler registry, no transport knowledge.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation
 */
import { RPC_ERROR_CODES, RpcError } from './errors.js';
import { isRecord, type Params } from './jsonrpc.js';
import type { LegacyVersion, Session } from './session.js';

/** The one modern revision served. */
export const MODERN_VERSION = '2026-07-28';
/** The legacy revisions `initialize` accepts, newest first. */
export const LEGACY_VERSIONS: readonly LegacyVersion[] = ['2025-11-25', '2025-06-18', '2025-03-26'];
/** The answer to an `initialize` asking for a revision not in `LEGACY_VERSIONS`. */
export const LATEST_LEGACY_VERSION: LegacyVersion = '2025-11-25';
/** `ttlMs` added to cacheable modern results that do not set their own. */
export const DEFAULT_TTL_MS = 300_000;

/** The reserved `_meta` keys of the modern era. */
export const META_KEYS = {
  PROTOCOL_VERSION: 'io.modelcontextprotocol/protocolVersion',
  CLIENT_CAPABILITIES: 'io.modelcontextprotocol/clientCapabilities',
  CLIENT_INFO: 'io.modelcontextprotocol/clientInfo',
  LOG_LEVEL: 'io.modelcontextprotocol/logLevel',
  SERVER_INFO: 'io.modelcontextprotocol/serverInfo',
} as const;

/** Modern methods whose results carry `ttlMs` and `cacheScope`: list results and resources/read. */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'resources/read',
]);

/** Which protocol family a request is served under. */
export type Era = 'legacy' | 'modern';

/** The validated modern `_meta` of one request. */
export interface ModernMeta {
  protocolVersion: typeof MODERN_VERSION;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: unknown;
}

/** The era decided for one request. */
export type EraDecision =
  | { era: 'modern'; meta: ModernMeta }
  | { era: 'legacy'; protocolVersion: LegacyVersion }
  /**
   * `error` makes the -32602 when it is answered: most requests without an era are the
   * built-ins (`initialize`, `ping`), and an error's stack trace is the costliest thing they
   * would allocate.
   */
  | { era: 'none'; error: () => RpcError };

/** `params._meta` as a record, or undefined. */
export function metaOf(params: Params | undefined): Record<string, unknown> | undefined {
  if (!isRecord(params)) return undefined;
  const meta = params['_meta'];
  return isRecord(meta) ? meta : undefined;
}

function missingMeta(missing: string[]): RpcError {
  return new RpcError(
    RPC_ERROR_CODES.INVALID_PARAMS,
    `missing required params._meta fields ${missing.join(', ')} ` +
      '(send them on every request, or send initialize first and then, over HTTP, its ' +
      'Mcp-Session-Id header with each request)',
    { missing },
  );
}

function invalidMeta(key: string): RpcError {
  return new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, `invalid params._meta ${key}`, {
    field: `_meta.${key}`,
  });
}

/**
 * Reads the modern `_meta` of a request: undefined when it carries no protocol version key.
 * @throws RpcError -32602 when the version is not a string or `clientCapabilities` is missing or
 *   not an object (`data.missing` / `data.field`); -32022 for a version other than 2026-07-28
 *   (`data: {supported, requested}`).
 */
export function readModernMeta(params: Params | undefined): ModernMeta | undefined {
  const meta = metaOf(params);
  if (meta === undefined || !Object.hasOwn(meta, META_KEYS.PROTOCOL_VERSION)) return undefined;
  if (!Object.hasOwn(meta, META_KEYS.CLIENT_CAPABILITIES)) {
    throw missingMeta([META_KEYS.CLIENT_CAPABILITIES]);
  }
  const version = meta[META_KEYS.PROTOCOL_VERSION];
  const capabilities = meta[META_KEYS.CLIENT_CAPABILITIES];
  if (typeof version !== 'string') throw invalidMeta(META_KEYS.PROTOCOL_VERSION);
  if (!isRecord(capabilities)) throw invalidMeta(META_KEYS.CLIENT_CAPABILITIES);
  if (version !== MODERN_VERSION) {
    throw new RpcError(
      RPC_ERROR_CODES.UNSUPPORTED_PROTOCOL_VERSION,
      'Unsupported protocol version',
      {
        supported: [MODERN_VERSION],
        requested: version,
      },
    );
  }
  const info = meta[META_KEYS.CLIENT_INFO];
  return info === undefined
    ? { protocolVersion: MODERN_VERSION, clientCapabilities: capabilities }
    : { protocolVersion: MODERN_VERSION, clientCapabilities: capabilities, clientInfo: info };
}

/**
 * Decides the era of one request: modern when its `_meta` says so, else legacy on a negotiated
 * session, else `none` with the -32602 to answer if the method needs an era (every method but
 * the built-ins; `data.missing` lists the absent `_meta` keys).
 * @throws RpcError whatever `readModernMeta` throws for a malformed modern `_meta`.
 */
export function decideEra(params: Params | undefined, session: Session): EraDecision {
  const meta = readModernMeta(params);
  if (meta !== undefined) return { era: 'modern', meta };
  const version = session.protocolVersion;
  if (version !== undefined) return { era: 'legacy', protocolVersion: version };
  return { era: 'none', error: () => missingModernMeta(params) };
}

/**
 * The -32602 for a request that needs the modern `_meta` and lacks some of it (`data.missing`
 * lists the absent keys): every era-bound method without a session, and `server/discover`
 * (modern only) always.
 */
export function missingModernMeta(params: Params | undefined): RpcError {
  const present = metaOf(params) ?? {};
  const missing = [META_KEYS.PROTOCOL_VERSION, META_KEYS.CLIENT_CAPABILITIES].filter(
    (key) => !Object.hasOwn(present, key),
  );
  return missingMeta(missing);
}

/**
 * The legacy `initialize` negotiation: echo a supported requested version, else answer the
 * latest legacy one (2025-11-25), as the MCP lifecycle says a server SHOULD.
 */
export function negotiateVersion(requested: unknown): LegacyVersion {
  const found = LEGACY_VERSIONS.find((version) => version === requested);
  return found ?? LATEST_LEGACY_VERSION;
}

/** The server's name and version, as sent in `serverInfo`. */
export interface ServerInfo {
  name: string;
  version: string;
}

/**
 * Decorates a modern result: `resultType: "complete"` unless the handler set one,
 * `_meta["io.modelcontextprotocol/serverInfo"]` merged into any `_meta` it set, and, for
 * `CACHEABLE_METHODS`, `ttlMs: 300000` and `cacheScope: "public"` unless it set them. Returns a
 * new object; `result` is not changed.
 */
export function decorateModernResult(
  method: string,
  result: Record<string, unknown>,
  serverInfo: ServerInfo,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...result };
  if (!Object.hasOwn(out, 'resultType')) out['resultType'] = 'complete';
  const meta = isRecord(result['_meta']) ? result['_meta'] : {};
  // A frozen one (the dispatcher's) is shared by every answer: nothing can change it.
  const info = Object.isFrozen(serverInfo) ? serverInfo : { ...serverInfo };
  out['_meta'] = { ...meta, [META_KEYS.SERVER_INFO]: info };
  if (CACHEABLE_METHODS.has(method)) {
    if (!Object.hasOwn(out, 'ttlMs')) out['ttlMs'] = DEFAULT_TTL_MS;
    if (!Object.hasOwn(out, 'cacheScope')) out['cacheScope'] = 'public';
  }
  return out;
}

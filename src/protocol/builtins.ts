/**
 * The methods the protocol layer answers itself, as pure functions of their params and the
 * server's description: `initialize` (legacy handshake), `server/discover` (modern discovery) and
 * the reading of `notifications/cancelled`. The dispatcher decides when they apply; these
 * functions never see a connection or a handler.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation
 */
import { z } from 'zod';
import {
  DEFAULT_TTL_MS,
  META_KEYS,
  MODERN_VERSION,
  negotiateVersion,
  type ServerInfo,
} from './era.js';
import { RPC_ERROR_CODES, RpcError } from './errors.js';
import { envelopeSchemas, isRecord, type RequestId } from './jsonrpc.js';
import type { ClientInfo, Session } from './session.js';

/** What the server says about itself in `initialize` and `server/discover`. */
export interface ServerDescription {
  serverInfo: ServerInfo;
  /** Said in both eras (`initialize` and `server/discover`). */
  capabilities: Record<string, unknown>;
  /**
   * What `initialize` says instead of `capabilities`, when set: the same, plus what exists only
   * in the 2025 revisions, such as `logging` and `resources.subscribe` (the server merges them).
   */
  legacyCapabilities?: Record<string, unknown> | undefined;
  instructions?: string | undefined;
}

/** Params schemas of the built-in methods, built on first use: a modern client sends neither. */
function buildParamsSchemas() {
  const objectByReference = z.custom<Record<string, unknown>>(isRecord, {
    message: 'must be an object',
  });

  /** `initialize` params; loose, and only `protocolVersion` is required. */
  const initialize = z
    .looseObject({
      protocolVersion: z.string().describe('The revision the client asks for'),
      capabilities: objectByReference.optional().describe('The client capabilities'),
      clientInfo: z
        .looseObject({
          name: z.string().describe('Client name'),
          version: z.string().describe('Client version'),
        })
        .optional()
        .describe('The client implementation'),
    })
    .describe('Params of the legacy initialize request');

  /** `notifications/cancelled` params. */
  const cancelled = z
    .looseObject({
      requestId: envelopeSchemas().requestId.describe('The id of the request to cancel'),
      reason: z.string().optional().describe('Why, for logs'),
    })
    .describe('Params of notifications/cancelled');
  return { initialize, cancelled };
}
let paramsSchemas: ReturnType<typeof buildParamsSchemas> | undefined;

/**
 * Answers `initialize`: negotiates the version (echo a supported one, else 2025-11-25), records it
 * on `session`, and returns `{protocolVersion, capabilities, serverInfo, instructions?}`.
 * @throws RpcError -32602 when `protocolVersion` is missing or params are malformed.
 */
export function answerInitialize(
  params: Record<string, unknown>,
  session: Session,
  server: ServerDescription,
): Record<string, unknown> {
  paramsSchemas ??= buildParamsSchemas();
  const parsed = paramsSchemas.initialize.safeParse(params);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join('.') ?? '';
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'invalid initialize params', { field });
  }
  const protocolVersion = negotiateVersion(parsed.data.protocolVersion);
  session.negotiate({
    protocolVersion,
    clientInfo: parsed.data.clientInfo as ClientInfo | undefined,
    clientCapabilities: parsed.data.capabilities,
  });
  return {
    protocolVersion,
    capabilities: server.legacyCapabilities ?? server.capabilities,
    serverInfo: { ...server.serverInfo },
    ...(server.instructions === undefined ? {} : { instructions: server.instructions }),
  };
}

/** Answers `server/discover`, always in the modern shape (mcp-wire.md, mhl-serve.md §2). */
export function answerDiscover(server: ServerDescription): Record<string, unknown> {
  return {
    supportedVersions: [MODERN_VERSION],
    capabilities: server.capabilities,
    ...(server.instructions === undefined ? {} : { instructions: server.instructions }),
    resultType: 'complete',
    ttlMs: DEFAULT_TTL_MS,
    cacheScope: 'public',
    _meta: { [META_KEYS.SERVER_INFO]: { ...server.serverInfo } },
  };
}

/** The request a `notifications/cancelled` names, or undefined when its params are malformed. */
export function cancelTarget(
  params: unknown,
): { requestId: RequestId; reason?: string } | undefined {
  paramsSchemas ??= buildParamsSchemas();
  const parsed = paramsSchemas.cancelled.safeParse(params);
  if (!parsed.success) return undefined;
  const { requestId, reason } = parsed.data;
  return reason === undefined ? { requestId } : { requestId, reason };
}

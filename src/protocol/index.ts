/**
 * The protocol layer: JSON-RPC codec, era detection (legacy handshake vs 2026-07-28 `_meta`),
 * legacy sessions and the dispatcher that surfaces register their methods with. It sits between
 * transports and surfaces, and imports neither, nor the catalog or runtime.
 */
export type { ServerDescription } from './builtins.js';
export { cancelTarget } from './builtins.js';
export type {
  ClientRequester,
  Connection,
  EagerMethodHandler,
  ErrorSite,
  MethodHandler,
  ProgressReporter,
  RequestCancellation,
  RequestContext,
  RequestLimit,
} from './context.js';
export {
  Dispatcher,
  type DispatcherOptions,
  type DispatchResult,
  type RegisterOptions,
} from './dispatcher.js';
export {
  CACHEABLE_METHODS,
  DEFAULT_TTL_MS,
  decideEra,
  decorateModernResult,
  type Era,
  type EraDecision,
  LATEST_LEGACY_VERSION,
  LEGACY_VERSIONS,
  META_KEYS,
  MODERN_VERSION,
  type ModernMeta,
  metaOf,
  negotiateVersion,
  readModernMeta,
  type ServerInfo,
} from './era.js';
export {
  internalError,
  RPC_ERROR_CODES,
  RpcError,
  type RpcErrorCode,
  type RpcErrorObject,
} from './errors.js';
export {
  classifyMessage,
  errorResponse,
  exceedsDepth,
  type InboundMessage,
  isRecord,
  type JsonRpcErrorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
  MAX_NESTING_DEPTH,
  type Params,
  parseErrorResponse,
  parseJson,
  type RequestId,
  recoverRequestId,
  resultResponse,
  tooLargeResponse,
} from './jsonrpc.js';
export {
  isLogLevel,
  LOG_LEVELS,
  type LogLevel,
  type LogReporter,
} from './logging.js';
export {
  type ClientInfo,
  type LegacyVersion,
  type Negotiation,
  Session,
  type SessionOptions,
} from './session.js';

/**
 * The workflow-engine surface (docs/engine.md): four tools over a verified release, where the
 * host does the work and the server only verifies it, keeping no session. The server layer
 * loads the releases and keys (`loadRelease`, `loadEngineKeys`) and builds the surface.
 */
export { canonicalDigest, canonicalJson, sha256Hex } from './canonical-json.js';
export type { EngineContext } from './checkpoint.js';
export { contractSchemas, type ToolName } from './contract-schemas.js';
export { type Contract, compileContracts, TOOL_NAMES } from './contracts.js';
export { ENGINE_ERROR_CODES, EngineError } from './errors.js';
export { ENGINE_KEY_ENV, KEY_FILE, type KeySource, loadEngineKeys, takeEngineKey } from './keys.js';
export type { Release } from './release.js';
export { loadRelease, type ReleaseResult } from './release-load.js';
export { type RefreshFailure, ReleaseStore } from './release-store.js';
export { callEngineTool, type EngineSurfaceOptions, engineSurface } from './surface.js';
export { KeyRing, keyId, signToken, verifyToken } from './tokens.js';

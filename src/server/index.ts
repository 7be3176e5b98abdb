/**
 * The server layer: one `createServer(config)` assembled from the surfaces a profile chooses,
 * the configuration it is built from, and the stdio runner. The HTTP runner
 * (`serve-http.ts`) is left out on purpose: `mhl serve mcp` imports it only when serving HTTP,
 * so a stdio server never loads it.
 */
export {
  type ConfigError,
  type ConfigResult,
  type HttpConfig,
  PROFILES,
  readServeConfig,
  type ServeConfig,
  type ServeFlags,
} from './config.js';
export {
  type CreateServerResult,
  createServer,
  type MhlServer,
  type ServerParts,
} from './create-server.js';
export { takeServeEngineKey } from './engine-profile.js';
export { loadServedPack, takeServeKey } from './pack.js';
export { CATALOG_PROFILES, emptyCatalog, type ServerSecrets } from './profiles.js';
export { serveStdio } from './serve-stdio.js';
export {
  type OpenStoreResult,
  openServeStore,
  type ServeStore,
  type StoreSource,
} from './state-store.js';
export { type DeclaredStore, findDeclaredStore } from './store-declaration.js';

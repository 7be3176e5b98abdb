/**
 * The catalog: a folder (or pack) of `.mh` files loaded, checked and turned into the set of
 * workflows a server serves, with their projections (tool entries, manifests, resources) and
 * compiled argument checks. Knows nothing of transports, protocols or runs.
 */
export {
  type CachedCatalogResult,
  type CacheFallback,
  type CacheOutcome,
  type CatalogCacheOptions,
  type FallbackReason,
  loadCatalogCached,
  type ServedSources,
} from './cached-load.js';
export {
  JSON_SCHEMA_DIALECT,
  projectInputSchema,
  projectTypeSchema,
  typeText,
} from './input-schema.js';
export {
  buildCatalog,
  CATALOG_ERROR_CODES,
  type CatalogErrorCode,
  type CatalogProblem,
  type CatalogResult,
  type CatalogSources,
  loadCatalog,
} from './load.js';
export {
  goDuration,
  kindText,
  manifestUri,
  RUN_START_TOOL,
  sourceUri,
  type ToolEntry,
  toolEntry,
  workflowDescription,
  workflowManifest,
} from './manifest.js';
export { loadPackCatalog } from './pack.js';
export { type CatalogPrompt, collectPrompts, type PromptClash } from './prompts.js';
export {
  listResources,
  MANIFEST_MIME_TYPE,
  type ResourceContents,
  type ResourceEntry,
  readResource,
  SOURCE_MIME_TYPE,
} from './resources.js';
export {
  CONTROL_RISK,
  type CredentialSlot,
  controlToolRisk,
  RISK_META_KEY,
  type Risk,
  type WorkflowRisk,
  workflowRisk,
  workflowSlots,
} from './risk.js';
export { resolveSchemaRef } from './schema-refs.js';
export { listMhFiles } from './sources.js';
export type {
  Catalog,
  InputCheck,
  InputProblem,
  InputValidator,
  InvalidInputs,
  JsonObject,
  JsonValue,
  ToolAnnotations,
  Workflow,
} from './types.js';
export { validateArguments } from './validate.js';

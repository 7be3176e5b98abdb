/**
 * What a catalog looks like over MCP, one module per surface: the workflow tools and
 * resources (pipelines), async runs (`mhl_run_*`, `run/*`), generic jobs (`job.*`), and the
 * tool and resource tables the dispatcher serves, and the `Surface` they implement. Surfaces
 * never touch sockets.
 */
export {
  COMPLETIONS_CAPABILITY,
  completionMethods,
  workflowTemplates,
} from './completion.js';
export {
  type EngineContext,
  engineSurface,
  KeyRing,
  loadEngineKeys,
  loadRelease,
  type Release,
  ReleaseStore,
  takeEngineKey,
} from './engine/index.js';
export {
  jobTools,
  logJobEvents,
  reservedNameProblem,
} from './jobs.js';
export { LOGGING_CAPABILITY, loggingMethods } from './logging.js';
export { type MethodEntry, registerMethods } from './methods.js';
export {
  type PipelineSurfaceOptions,
  workflowResources,
  workflowTools,
} from './pipelines.js';
export { PROMPTS_CAPABILITY, promptMethods } from './prompts.js';
export {
  type ResourceProvider,
  resourceMethods,
} from './resources.js';
export { type RunSurface, runSurface } from './runs.js';
export { type SessionsSurfaceOptions, sessionsSurface } from './sessions/index.js';
export { Subscriptions } from './subscriptions.js';
export type { Surface } from './surface.js';
export {
  type PreparedCall,
  type ToolDefinition,
  type ToolPolicy,
  type ToolResult,
  ToolTable,
  toolError,
  toolMethods,
} from './tools.js';
export { type UiSurfaceOptions, uiSurface } from './ui/index.js';

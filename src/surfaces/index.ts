/**
 * What a catalog looks like over MCP, one module per surface: the workflow tools and
 * resources (pipelines), async runs (`mhl_run_*`, `run/*`), generic jobs (`job.*`), and the
 * tool and resource tables the dispatcher serves, and the `Surface` they implement. Surfaces
 * never touch sockets.
 */
export {
  isReservedJobName,
  type JobSurfaceOptions,
  jobTools,
  logJobEvents,
  reservedNameProblem,
} from './jobs.js';
export {
  checkCall,
  type PipelineSurfaceOptions,
  workflowResources,
  workflowTools,
} from './pipelines.js';
export {
  type ResourceProvider,
  type ResourceTemplate,
  registerResourceMethods,
} from './resources.js';
export { type RunSurface, type RunSurfaceOptions, runSurface } from './runs.js';
export type { Surface } from './surface.js';
export {
  type PreparedCall,
  registerToolMethods,
  type ToolDefinition,
  type ToolMethodsOptions,
  type ToolResult,
  ToolTable,
  toolError,
} from './tools.js';

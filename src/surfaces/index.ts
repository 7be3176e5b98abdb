/**
 * What a catalog looks like over MCP, one module per surface: the workflow tools and
 * resources (pipelines), async runs (`mhl_run_*`, `run/*`), generic jobs (`job.*`), and the
 * tool and resource tables the dispatcher serves. Surfaces never touch sockets. The async run
 * surface (`runs.ts`) is a second face, loaded lazily with the HTTP parts.
 */
export {
  isReservedJobName,
  type JobSurfaceOptions,
  jobTools,
  logJobEvents,
  reservedNameProblem,
} from './jobs.js';
export {
  type CallContext,
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
export {
  type PreparedCall,
  registerToolMethods,
  type ToolDefinition,
  type ToolMethodsOptions,
  type ToolResult,
  ToolTable,
  toolError,
} from './tools.js';

/**
 * The managed per-user service (`mhl service`, docs/service.md): a systemd user unit that runs
 * `mhl serve mcp --http`, with its durable state, lifecycle lock, status and drift. Above the
 * server: it talks to the server only over loopback HTTP, as any client would.
 */
export { type ServiceContext, serviceContext } from './context.js';
export {
  CONFIGURATION_ID,
  configurationId,
  endpointOf,
  hasControl,
  type ServiceDefinition,
  ServiceDefinitionSchema,
} from './definition.js';
export { SERVICE_CODES, type ServiceCode, ServiceError } from './errors.js';
export { installService } from './install.js';
export { restartService, startService, stopService } from './lifecycle.js';
export { acquireLifecycleLock, type LifecycleLock, lockHolder } from './lock.js';
export { type Mutation, mutationText } from './output.js';
export { type ServicePaths, servicePaths, UNIT_NAME } from './paths.js';
export { probeReadiness, type Readiness, readinessOf } from './readiness.js';
export { LifecycleSchema, now, writeState } from './state.js';
export { type ServiceStatus, serviceStatus } from './status.js';
export { uninstallService } from './uninstall.js';
export { parseUnit, quoteArg, renderUnit, serveArgv, unitDrift } from './unit-file.js';

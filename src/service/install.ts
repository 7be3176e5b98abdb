/**
 * install: writes the immutable definition, reconciles the unit (written only when its bytes
 * differ, never over a unit without our marker), reloads and enables it (wanted by
 * default.target), repoints `current.json`, then starts unless `--no-start`; an equal repeated
 * install changes nothing. Callers hold the lifecycle lock.
 */
import { writeFileAtomic } from '../store/index.js';
import type { ServiceContext } from './context.js';
import { endpointOf, readText, type ServiceDefinition, writeDefinition } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { ensureStarted } from './lifecycle.js';
import { installedView, type Mutation, mutation, type RuntimeView, STOPPED } from './output.js';
import { probeReadiness } from './readiness.js';
import { assertOwned, checkWorker, type Installed } from './registration.js';
import { type Current, CurrentSchema, now, readState, writeState } from './state.js';
import { renderUnit } from './unit-file.js';

/** `mhl service install`. */
export async function installService(
  ctx: ServiceContext,
  definition: ServiceDefinition,
  options: { readonly noStart: boolean },
): Promise<Mutation> {
  await checkWorker(definition);
  const { installed, changed, action } = await reconcile(ctx, definition);
  let runtime: RuntimeView;
  let started = false;
  if (options.noStart) {
    runtime = await observedRuntime(ctx, definition.port);
  } else {
    const run = await ensureStarted(ctx, installed, await ctx.systemctl.show());
    started = run.started;
    const { pid, instanceId, version } = run.instance;
    runtime = { state: 'ready', pid, instance_id: instanceId, version };
  }
  return mutation({
    command: 'install',
    changed: changed || started,
    action,
    service_id: ctx.serviceId,
    configuration_id: installed.configurationId,
    task_path: ctx.paths.unitPath,
    endpoint: endpointOf(definition),
    registration: installedView(changed),
    runtime,
  });
}

/**
 * Makes the registration match `definition`, touching only what differs: the definition file,
 * the unit, the manager's loaded copy, the `default.target.wants` link, `current.json`.
 * @throws ServiceError MCP_SERVICE_SCHEDULER_FAILED (before anything is written when the
 *   manager cannot be reached), MCP_SERVICE_TASK_CONFLICT, MCP_SERVICE_INSTALLATION_CONFLICT.
 */
async function reconcile(ctx: ServiceContext, definition: ServiceDefinition) {
  const before = await ctx.systemctl.show();
  const unitText = await readText(ctx.paths.unitPath);
  if (unitText !== undefined) assertOwned(unitText, ctx.serviceId);
  const previous = await readCurrent(ctx);
  const id = await writeDefinition(ctx.paths.definitions, definition);
  const desired = renderUnit(definition);
  const unitChanged = unitText !== desired;
  if (unitChanged) await writeFileAtomic(ctx.paths.unitPath, desired);
  const reloaded = unitChanged || before.needDaemonReload || before.loadState === 'not-found';
  if (reloaded) await ctx.systemctl.daemonReload();
  const after = reloaded ? await ctx.systemctl.show() : before;
  const enabled = after.unitFileState !== 'enabled';
  if (enabled) await ctx.systemctl.enable();
  const current: Current = {
    schema_version: 1,
    service_id: ctx.serviceId,
    configuration_id: id,
    updated_at: now(),
  };
  const currentChanged = previous?.configuration_id !== id;
  if (currentChanged) await writeState(ctx.paths.current, current);
  const changed = unitChanged || reloaded || enabled || currentChanged;
  const fresh = previous === undefined && unitText === undefined;
  const installed: Installed = { current, definition, configurationId: id };
  return { installed, changed, action: fresh ? 'installed' : changed ? 'updated' : 'unchanged' };
}

/** `current.json`, or undefined when missing or corrupt: install repairs the index. */
async function readCurrent(ctx: ServiceContext): Promise<Current | undefined> {
  try {
    const current = await readState(ctx.paths.current, CurrentSchema);
    return current?.service_id === ctx.serviceId ? current : undefined;
  } catch (error) {
    if (error instanceof ServiceError && error.code === SERVICE_CODES.STATE_INVALID)
      return undefined;
    throw error;
  }
}

/** What the manager says runs, without proving or changing anything (install --no-start). */
async function observedRuntime(ctx: ServiceContext, port: number): Promise<RuntimeView> {
  const props = await ctx.systemctl.show();
  if (props.mainPid === 0) return STOPPED;
  const ready = await probeReadiness(port);
  if (ready.kind === 'ready' && ready.pid === props.mainPid) {
    return {
      state: 'running',
      pid: ready.pid,
      instance_id: ready.instanceId,
      version: ready.version,
    };
  }
  return { state: 'starting', pid: props.mainPid, instance_id: null, version: null };
}

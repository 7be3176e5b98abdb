/**
 * uninstall: stops the exact instance, then removes only what it owns: our unit and its
 * `default.target.wants` link, and our state files (runtime.json, this service's definitions,
 * current.json, lifecycle.json). It never removes the lock anchor, the user's workflows or
 * configuration, or a file it does not know. Idempotent. Callers hold the lifecycle lock.
 */
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceContext } from './context.js';
import {
  configurationId,
  endpointOf,
  parseDefinition,
  readText,
  type ServiceDefinition,
} from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { stopExact } from './lifecycle.js';
import { type Mutation, mutation, STOPPED } from './output.js';
import { UNIT_NAME } from './paths.js';
import { probeReadiness, requestShutdown } from './readiness.js';
import {
  type Installed,
  installedFromUnit,
  isStateInvalid,
  loadInstalled,
  unitOwner,
} from './registration.js';
import { waitPortFree } from './runtime.js';
import { type Current, CurrentSchema, RuntimeSchema, readState, removeState } from './state.js';

const ORPHAN_STOP_MS = 5_000;

/** `mhl service uninstall`. */
export async function uninstallService(ctx: ServiceContext): Promise<Mutation> {
  const unitText = await readText(ctx.paths.unitPath);
  const owned = unitText !== undefined && unitOwner(unitText) === ctx.serviceId;
  const { current, installed } = await readIndex(ctx, unitText);
  const runtime = await readState(ctx.paths.runtime, RuntimeSchema);
  const base = {
    command: 'uninstall' as const,
    service_id: current?.service_id ?? (owned ? ctx.serviceId : null),
    configuration_id: current?.configuration_id ?? null,
    task_path: ctx.paths.unitPath,
    endpoint:
      installed === undefined ? (runtime?.endpoint ?? null) : endpointOf(installed.definition),
  };
  if (!owned && current === undefined && runtime === undefined) {
    return mutation({
      ...base,
      changed: false,
      action: 'already_uninstalled',
      registration: { state: 'not_installed', unit: UNIT_NAME, enabled: false, changed: false },
      runtime: STOPPED,
    });
  }
  if (owned && installed !== undefined) await stopExact(ctx, installed);
  else if (owned && (await ctx.systemctl.show()).mainPid > 0) {
    // Without its definition the running process cannot be proven ours: it is not stopped.
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      'the unit runs but current.json is missing, so its process cannot be proven; stop it with systemctl --user stop mhl-managed-mcp.service',
    );
  } else if (runtime !== undefined) await stopOrphan(runtime);
  try {
    if (owned) await removeUnit(ctx, unitText);
    await removeState(ctx.paths.runtime);
    await removeDefinitions(ctx);
    await removeState(ctx.paths.current);
    await removeState(ctx.paths.lifecycle);
  } catch (error) {
    if (error instanceof ServiceError && error.code === SERVICE_CODES.UNINSTALL_INCOMPLETE)
      throw error;
    throw new ServiceError(
      SERVICE_CODES.UNINSTALL_INCOMPLETE,
      `uninstall stopped part way (${error instanceof Error ? error.message : String(error)}); run it again`,
      { cause: error },
    );
  }
  return mutation({
    ...base,
    changed: true,
    action: 'uninstalled',
    registration: { state: 'not_installed', unit: UNIT_NAME, enabled: false, changed: true },
    runtime: STOPPED,
  });
}

/**
 * `current.json` and its definition. A damaged index does not block uninstall when our own
 * unit names a definition that verifies (`installedFromUnit`): the instance is then proven and
 * stopped exactly as with a sound index, and the index is removed with the rest.
 * @throws ServiceError MCP_SERVICE_STATE_INVALID when neither can be trusted.
 */
async function readIndex(
  ctx: ServiceContext,
  unitText: string | undefined,
): Promise<{ current: Current | undefined; installed: Installed | undefined }> {
  try {
    const current = await readState(ctx.paths.current, CurrentSchema);
    if (current === undefined) return { current, installed: undefined };
    return { current, installed: await loadInstalled(ctx.paths, ctx.serviceId) };
  } catch (error) {
    if (!isStateInvalid(error)) throw error;
    const installed = await installedFromUnit(ctx.paths, ctx.serviceId, unitText);
    if (installed === undefined) throw error;
    return { current: installed.current, installed };
  }
}

/**
 * With no unit left, the last proven instance may still run: it is stopped through control
 * shutdown only if readiness still names exactly that pid and instance; never through the
 * manager.
 */
async function stopOrphan(runtime: { pid: number; instance_id: string; endpoint: string }) {
  const port = Number(new URL(runtime.endpoint).port);
  const ready = await probeReadiness(port);
  if (
    ready.kind !== 'ready' ||
    ready.pid !== runtime.pid ||
    ready.instanceId !== runtime.instance_id
  ) {
    return;
  }
  if (await requestShutdown(port, runtime.instance_id)) {
    await waitPortFree(port, Date.now() + ORPHAN_STOP_MS);
  }
}

/** Disables and removes our unit, only while it still holds the bytes read at the start. */
async function removeUnit(ctx: ServiceContext, read: string | undefined): Promise<void> {
  await ctx.systemctl.disable();
  if ((await readText(ctx.paths.unitPath)) !== read) {
    throw new ServiceError(
      SERVICE_CODES.UNINSTALL_INCOMPLETE,
      'the unit changed during uninstall; it was left in place',
    );
  }
  await unlink(ctx.paths.unitPath).catch(() => undefined);
  await ctx.systemctl.daemonReload();
}

/** Removes the definitions of this service; files that are not one are left alone. */
async function removeDefinitions(ctx: ServiceContext): Promise<void> {
  let names: string[];
  try {
    names = await readdir(ctx.paths.definitions);
  } catch {
    // No definitions folder: nothing to remove.
    return;
  }
  for (const name of names) {
    if (!/^[0-9a-f]{32}\.json$/.test(name)) continue;
    const path = join(ctx.paths.definitions, name);
    let definition: ServiceDefinition;
    try {
      definition = parseDefinition((await readText(path)) ?? '', name);
    } catch {
      // Not a definition this command wrote: an unexpected file stays.
      continue;
    }
    if (definition.service_id !== ctx.serviceId) continue;
    if (`${configurationId(definition)}.json` !== name) continue;
    await removeState(path);
  }
}

/**
 * start, stop and restart of the installed service. start returns only once the unit's own
 * process answers readiness with the definition's version and configuration identity, and
 * never adopts a server it did not start. stop proves the unit's process through readiness and
 * stops it through identity-checked `/control/shutdown` (5 s), and only then, within 15 s in
 * all, asks the manager to stop that exact unit. Callers hold the lifecycle lock.
 */
import type { ServiceContext } from './context.js';
import { endpointOf, readText } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { installedView, type Mutation, mutation, STOPPED } from './output.js';
import { probeReadiness, requestShutdown } from './readiness.js';
import { checkRegistration, checkUnit, type Installed, loadInstalled } from './registration.js';
import { isRunning, type ProvenInstance, waitReady, waitStopped } from './runtime.js';
import { now, RuntimeSchema, readState, removeState, writeState } from './state.js';
import type { UnitProperties } from './systemctl.js';

const START_MS = 15_000;
const GRACEFUL_MS = 5_000;
const STOP_TOTAL_MS = 15_000;

/** The outcome of a stop: its action, and the instance it stopped (null when none ran). */
export interface Stopped {
  readonly action: 'already_stopped' | 'stopped' | 'forced_stopped';
  readonly instance: ProvenInstance | null;
}

/** `mhl service start`. */
export async function startService(ctx: ServiceContext): Promise<Mutation> {
  const installed = await loadInstalled(ctx.paths, ctx.serviceId);
  const props = await ctx.systemctl.show();
  await checkRegistration(ctx.paths, ctx.serviceId, installed, props);
  const { instance, started } = await ensureStarted(ctx, installed, props);
  return result(
    ctx,
    installed,
    'start',
    started,
    started ? 'started' : 'already_running',
    instance,
  );
}

/**
 * Starts the unit unless its own process is already ready; the instance and whether it
 * started one. A running unit of another configuration is not restarted.
 * @throws ServiceError MCP_SERVICE_RESTART_REQUIRED, MCP_SERVICE_IDENTITY_MISMATCH,
 *   MCP_SERVICE_START_TIMEOUT, MCP_SERVICE_SCHEDULER_FAILED.
 */
export async function ensureStarted(
  ctx: ServiceContext,
  installed: Installed,
  props: UnitProperties,
): Promise<{ instance: ProvenInstance; started: boolean }> {
  const { definition, configurationId } = installed;
  const deadline = Date.now() + START_MS;
  if (isRunning(props)) {
    const ready = await probeReadiness(definition.port);
    if (ready.kind === 'ready' && ready.pid === props.mainPid) {
      if (ready.configurationId !== configurationId || ready.version !== definition.version) {
        throw new ServiceError(
          SERVICE_CODES.RESTART_REQUIRED,
          'the running service was started from another definition; run mhl service restart',
        );
      }
    }
    // Running already (started at login, or still starting): wait for it, start nothing.
    const instance = await waitReady(ctx.systemctl, definition, configurationId, deadline);
    await recordRuntime(ctx, installed, instance);
    return { instance, started: false };
  }
  const instance = await submitStart(ctx, installed, deadline);
  return { instance, started: true };
}

/** Asks the manager to start the unit once the port is free, and waits for readiness. */
async function submitStart(
  ctx: ServiceContext,
  installed: Installed,
  deadline: number,
  notInstance?: string,
): Promise<ProvenInstance> {
  const { definition, configurationId } = installed;
  const occupant = await probeReadiness(definition.port);
  if (occupant.kind !== 'absent') {
    throw new ServiceError(
      SERVICE_CODES.IDENTITY_MISMATCH,
      `another server answers on 127.0.0.1:${definition.port}; it is neither adopted nor stopped`,
    );
  }
  // A failed state left by an earlier run would read as this start failing.
  await ctx.systemctl.resetFailed();
  await ctx.systemctl.start();
  const instance = await waitReady(
    ctx.systemctl,
    definition,
    configurationId,
    deadline,
    notInstance,
  );
  await recordRuntime(ctx, installed, instance);
  return instance;
}

async function recordRuntime(ctx: ServiceContext, installed: Installed, i: ProvenInstance) {
  await writeState(
    ctx.paths.runtime,
    RuntimeSchema.parse({
      schema_version: 1,
      configuration_id: installed.configurationId,
      pid: i.pid,
      instance_id: i.instanceId,
      version: i.version,
      endpoint: endpointOf(installed.definition),
      ready_at: now(),
    }),
  );
}

/** `mhl service stop`. */
export async function stopService(ctx: ServiceContext): Promise<Mutation> {
  const installed = await loadInstalled(ctx.paths, ctx.serviceId);
  const stopped = await stopExact(ctx, installed);
  return result(ctx, installed, 'stop', stopped.action !== 'already_stopped', stopped.action, null);
}

/**
 * Stops the unit's own process: proof through readiness, identity-checked control shutdown,
 * and the manager's stop of the exact unit only past the graceful 5 s and only for a unit as
 * the definition renders it.
 * @throws ServiceError MCP_SERVICE_STOP_UNSAFE, MCP_SERVICE_STOP_TIMEOUT.
 */
export async function stopExact(ctx: ServiceContext, installed: Installed): Promise<Stopped> {
  const start = Date.now();
  const props = await ctx.systemctl.show();
  if (!isRunning(props)) {
    // Between retries (auto-restart) no process runs: cancelling the queued start of this
    // exact unit stops nothing else.
    const queued = isQueued(props);
    if (queued) await ctx.systemctl.stop(STOP_TOTAL_MS);
    await removeState(ctx.paths.runtime);
    return { action: queued ? 'stopped' : 'already_stopped', instance: null };
  }
  // A drifted unit runs something other than the definition: it is never stopped.
  await checkUnit(ctx.paths, ctx.serviceId, installed, props);
  const durable = await readState(ctx.paths.runtime, RuntimeSchema);
  const ready = await probeReadiness(installed.definition.port);
  if (ready.kind !== 'ready' || ready.pid !== props.mainPid) {
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      `the unit's process (pid ${props.mainPid}) does not answer readiness on port ` +
        `${installed.definition.port}; nothing was stopped`,
    );
  }
  // The durable proof: the pid, instance and configuration runtime.json recorded when the
  // instance was proven ready, all three as readiness reports them now. The configuration may
  // be an earlier definition of this service (a restart after install with new flags).
  if (
    durable === undefined ||
    durable.pid !== ready.pid ||
    durable.instance_id !== ready.instanceId ||
    ready.configurationId !== durable.configuration_id
  ) {
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      'the process answering readiness is not the instance runtime.json recorded (pid, ' +
        'instance id and configuration id must all match); nothing was stopped ' +
        '(mhl service start records the running instance of this unit)',
    );
  }
  const instance = { pid: ready.pid, instanceId: ready.instanceId, version: ready.version };
  if (!(await requestShutdown(installed.definition.port, ready.instanceId))) {
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      'the server refused an identity-checked shutdown (another instance answers now); nothing was stopped',
    );
  }
  if (await waitStopped(ctx.systemctl, start + GRACEFUL_MS)) {
    // A server whose shutdown overran its budget exits 1, which the manager would retry in a
    // minute: that queued, process-free start of this unit is cancelled.
    if (isQueued(await ctx.systemctl.show())) await ctx.systemctl.stop(STOP_TOTAL_MS);
    await removeState(ctx.paths.runtime);
    return { action: 'stopped', instance };
  }
  // Forced: only the exact unit, only while its main process is still the one proven above,
  // and only while the unit is still the one the definition renders.
  const now = await ctx.systemctl.show();
  if (now.mainPid !== instance.pid) {
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      `the unit's process changed (pid ${instance.pid} became ${now.mainPid}) while it stopped; it was not forced`,
    );
  }
  await checkRegistration(ctx.paths, ctx.serviceId, installed, now).catch((error: unknown) => {
    throw new ServiceError(
      SERVICE_CODES.STOP_UNSAFE,
      'the server did not stop within 5 s and its unit has changed; it was not forced',
      { cause: error },
    );
  });
  const remaining = start + STOP_TOTAL_MS - Date.now();
  await ctx.systemctl.stop(Math.max(remaining, 1000)).catch(() => undefined);
  if (!(await waitStopped(ctx.systemctl, start + STOP_TOTAL_MS))) {
    throw new ServiceError(
      SERVICE_CODES.STOP_TIMEOUT,
      'the service did not stop within 15 s; it is still running',
    );
  }
  await removeState(ctx.paths.runtime);
  return { action: 'forced_stopped', instance };
}

/** True when the unit has a start queued (a retry) but no process. */
function isQueued(props: UnitProperties): boolean {
  return (
    !isRunning(props) && (props.activeState === 'activating' || props.subState === 'auto-restart')
  );
}

/** `mhl service restart`: stop, revalidate, start, and wait for a new instance. */
export async function restartService(ctx: ServiceContext): Promise<Mutation> {
  const installed = await loadInstalled(ctx.paths, ctx.serviceId);
  const unitBefore = await checkRegistration(
    ctx.paths,
    ctx.serviceId,
    installed,
    await ctx.systemctl.show(),
  );
  const stopped = await stopExact(ctx, installed);
  let instance: ProvenInstance;
  try {
    // Revalidated before the start is submitted: a unit edited while the old process stopped
    // is not started, however it reads now.
    if ((await readText(ctx.paths.unitPath)) !== unitBefore) {
      throw new ServiceError(
        SERVICE_CODES.TASK_CHANGED,
        'the unit changed while the service stopped; it was not started (mhl service install restores it)',
      );
    }
    await checkRegistration(ctx.paths, ctx.serviceId, installed, await ctx.systemctl.show());
    instance = await submitStart(
      ctx,
      installed,
      Date.now() + START_MS,
      stopped.instance?.instanceId,
    );
  } catch (error) {
    const code = error instanceof ServiceError ? error.code : 'error';
    const why = error instanceof Error ? error.message : String(error);
    const failure =
      error instanceof ServiceError && error.code === SERVICE_CODES.TASK_CHANGED
        ? error
        : new ServiceError(
            SERVICE_CODES.RESTART_FAILED,
            `stopped, but the start failed (${code}: ${why}); the service stays installed, ` +
              'run mhl service start to retry',
            { cause: error },
          );
    throw failure;
  }
  const action = stopped.action === 'already_stopped' ? 'started' : 'restarted';
  return result(ctx, installed, 'restart', true, action, instance);
}

function result(
  ctx: ServiceContext,
  installed: Installed,
  command: 'start' | 'stop' | 'restart',
  changed: boolean,
  action: string,
  instance: ProvenInstance | null,
): Mutation {
  return mutation({
    command,
    changed,
    action,
    service_id: ctx.serviceId,
    configuration_id: installed.configurationId,
    task_path: ctx.paths.unitPath,
    endpoint: endpointOf(installed.definition),
    registration: installedView(false),
    runtime:
      instance === null
        ? STOPPED
        : {
            state: 'ready',
            pid: instance.pid,
            instance_id: instance.instanceId,
            version: instance.version,
          },
  });
}

/**
 * `mhl service status`: every layer as it is, repairing and starting nothing. Registration
 * (current.json, definition, unit file), manager (what systemctl says, or its own message when
 * it cannot be reached), runtime (the unit's process and the last proven instance), readiness
 * (what answers on the port, and whether it is exactly ours), lifecycle (the lock holder and
 * the last command) and sorted drift. Schema version 1; every field present, null when not
 * known. A damaged `current.json` (a repairable index) is reported as the `state` layer and
 * state `state_invalid`, beside every other layer; any other corrupt state file stops it with
 * MCP_SERVICE_STATE_INVALID.
 */
import type { ServiceContext } from './context.js';
import { endpointOf, readText, type ServiceDefinition } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { type LockHolder, lockHolder } from './lock.js';
import { UNIT_NAME } from './paths.js';
import { probeReadiness, type Readiness } from './readiness.js';
import {
  type Drift,
  driftOf,
  type Installed,
  installedFromUnit,
  isStateInvalid,
  loadInstalled,
  sortDrift,
  unitOwner,
} from './registration.js';
import {
  type Current,
  CurrentSchema,
  type Lifecycle,
  LifecycleSchema,
  type Runtime,
  RuntimeSchema,
  readState,
} from './state.js';
import type { UnitProperties } from './systemctl.js';

/** The status document, schema version 1. */
export interface ServiceStatus {
  readonly command: 'status';
  readonly schema_version: 1;
  readonly state: string;
  readonly diagnostic_code: string | null;
  readonly service_id: string;
  readonly configuration_id: string | null;
  readonly task_path: string;
  readonly endpoint: string | null;
  readonly registration: {
    readonly state: 'not_installed' | 'installed' | 'unit_missing' | 'foreign_unit';
    readonly unit: string;
    readonly unit_present: boolean;
    readonly owned: boolean;
    readonly enabled: boolean | null;
  };
  readonly manager: {
    readonly state: 'reachable' | 'unreachable';
    readonly message: string | null;
    readonly load_state: string | null;
    readonly active_state: string | null;
    readonly sub_state: string | null;
    readonly main_pid: number | null;
    readonly unit_file_state: string | null;
    readonly exec_main_status: number | null;
  };
  readonly runtime: {
    readonly state: 'stopped' | 'starting' | 'running' | 'restart_backoff' | 'failed';
    readonly pid: number | null;
    readonly instance_id: string | null;
    readonly version: string | null;
    readonly configuration_id: string | null;
    readonly ready_at: string | null;
  };
  readonly readiness: {
    readonly state: 'ready' | 'absent' | 'other' | 'not_checked';
    readonly owned: boolean | null;
    readonly version: string | null;
    readonly pid: number | null;
    readonly instance_id: string | null;
    readonly configuration_id: string | null;
  };
  readonly lifecycle: {
    readonly state: 'idle' | 'busy';
    readonly holder_pid: number | null;
    readonly holder_command: string | null;
    readonly last_command: string | null;
    readonly last_action: string | null;
    readonly last_diagnostic_code: string | null;
    readonly at: string | null;
  };
  readonly drift: readonly Drift[];
}

/**
 * The status snapshot.
 * @throws ServiceError MCP_SERVICE_STATE_INVALID for a corrupt runtime.json, lifecycle.json or
 *   definition.
 */
export async function serviceStatus(ctx: ServiceContext): Promise<ServiceStatus> {
  const unitText = await readText(ctx.paths.unitPath);
  const index = await readIndex(ctx, unitText);
  const { current } = index;
  const definition = index.installed?.definition;
  const runtimeFile = await readState(ctx.paths.runtime, RuntimeSchema);
  const last = await readState(ctx.paths.lifecycle, LifecycleSchema);
  const holder = await lockHolder(ctx.paths.lock);
  const owner = unitText === undefined ? null : unitOwner(unitText);
  let props: UnitProperties | undefined;
  let managerMessage: string | null = null;
  try {
    props = await ctx.systemctl.show();
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    managerMessage = error.message;
  }
  const port =
    definition?.port ?? (runtimeFile ? Number(new URL(runtimeFile.endpoint).port) : undefined);
  const ready: Readiness | undefined = port === undefined ? undefined : await probeReadiness(port);
  const drift =
    definition === undefined ? [] : driftOf(definition, ctx.paths.unitPath, unitText, props);
  if (index.damaged) {
    // The repairable index is damaged; every other layer is still reported (install repairs it).
    drift.push({ layer: 'state', property: 'current.json', expected: 'valid', actual: 'invalid' });
    sortDrift(drift);
  }
  const owned = ownedReadiness(ready, props, current?.configuration_id, definition);
  // The unit's own process, answering as another definition: it needs a restart.
  if (owned === false && ready?.kind === 'ready' && props && ready.pid === props.mainPid) {
    const expected = current?.configuration_id ?? null;
    drift.push({
      layer: 'runtime',
      property: 'configuration_id',
      expected,
      actual: ready.configurationId,
    });
    sortDrift(drift);
  }
  const registration = registrationOf(
    current !== undefined || index.damaged,
    unitText !== undefined,
    owner,
    ctx,
    props,
  );
  const runtime = runtimeOf(props, runtimeFile, ready, owned);
  const reduced = reduce(registration.state, managerMessage, runtime.state, ready, owned, drift);
  return {
    command: 'status',
    schema_version: 1,
    state: reduced.state,
    diagnostic_code: reduced.code,
    service_id: ctx.serviceId,
    configuration_id: current?.configuration_id ?? null,
    task_path: ctx.paths.unitPath,
    endpoint: definition === undefined ? (runtimeFile?.endpoint ?? null) : endpointOf(definition),
    registration,
    manager: managerView(props, managerMessage),
    runtime,
    readiness: readinessView(ready, owned),
    lifecycle: lifecycleView(holder, last),
    drift,
  };
}

/**
 * `current.json` and the definition it names; when it is damaged, the definition our unit
 * names instead (`installedFromUnit`), and `damaged` says so.
 */
async function readIndex(
  ctx: ServiceContext,
  unitText: string | undefined,
): Promise<{ current: Current | undefined; installed: Installed | undefined; damaged: boolean }> {
  let current: Current | undefined;
  try {
    current = await readState(ctx.paths.current, CurrentSchema);
  } catch (error) {
    if (!isStateInvalid(error)) throw error;
    const installed = await installedFromUnit(ctx.paths, ctx.serviceId, unitText);
    return { current: installed?.current, installed, damaged: true };
  }
  if (current === undefined) return { current, installed: undefined, damaged: false };
  return { current, installed: await loadInstalled(ctx.paths, ctx.serviceId), damaged: false };
}

function managerView(
  props: UnitProperties | undefined,
  message: string | null,
): ServiceStatus['manager'] {
  return {
    state: props === undefined ? 'unreachable' : 'reachable',
    message,
    load_state: props?.loadState ?? null,
    active_state: props?.activeState ?? null,
    sub_state: props?.subState ?? null,
    main_pid: props === undefined ? null : props.mainPid,
    unit_file_state: props === undefined || props.unitFileState === '' ? null : props.unitFileState,
    exec_main_status: props?.execMainStatus ?? null,
  };
}

function readinessView(
  ready: Readiness | undefined,
  owned: boolean | null,
): ServiceStatus['readiness'] {
  const answer = ready?.kind === 'ready' ? ready : undefined;
  return {
    state: ready === undefined ? 'not_checked' : ready.kind,
    owned,
    version: answer?.version ?? null,
    pid: answer?.pid ?? null,
    instance_id: answer?.instanceId ?? null,
    configuration_id: answer?.configurationId ?? null,
  };
}

function lifecycleView(
  holder: LockHolder | null,
  last: Lifecycle | undefined,
): ServiceStatus['lifecycle'] {
  return {
    state: holder === null ? 'idle' : 'busy',
    holder_pid: holder?.pid ?? null,
    holder_command: holder?.command ?? null,
    last_command: last?.command ?? null,
    last_action: last?.action ?? null,
    last_diagnostic_code: last?.diagnostic_code ?? null,
    at: last?.at ?? null,
  };
}

/** Whether what answers is exactly the installed server; null when nothing answers or it is unknown. */
function ownedReadiness(
  ready: Readiness | undefined,
  props: UnitProperties | undefined,
  id: string | undefined,
  definition: ServiceDefinition | undefined,
): boolean | null {
  if (ready?.kind !== 'ready') return ready?.kind === 'other' ? false : null;
  if (props === undefined || definition === undefined) return null;
  return (
    ready.pid === props.mainPid &&
    ready.configurationId === id &&
    ready.version === definition.version
  );
}

function registrationOf(
  installed: boolean,
  present: boolean,
  owner: string | null,
  ctx: ServiceContext,
  props: UnitProperties | undefined,
): ServiceStatus['registration'] {
  const owned = present && owner === ctx.serviceId;
  const state =
    present && !owned
      ? 'foreign_unit'
      : installed
        ? present
          ? 'installed'
          : 'unit_missing'
        : owned
          ? 'installed'
          : 'not_installed';
  return {
    state,
    unit: UNIT_NAME,
    unit_present: present,
    owned,
    enabled: props === undefined || !owned ? null : props.unitFileState === 'enabled',
  };
}

function runtimeOf(
  props: UnitProperties | undefined,
  file: Runtime | undefined,
  ready: Readiness | undefined,
  owned: boolean | null,
): ServiceStatus['runtime'] {
  const known = file !== undefined && props !== undefined && file.pid === props.mainPid;
  const state = !props
    ? 'stopped'
    : props.mainPid > 0
      ? owned === true || (ready?.kind === 'ready' && ready.pid === props.mainPid)
        ? 'running'
        : 'starting'
      : props.subState === 'auto-restart'
        ? 'restart_backoff'
        : props.activeState === 'failed'
          ? 'failed'
          : 'stopped';
  return {
    state,
    pid: props && props.mainPid > 0 ? props.mainPid : null,
    instance_id: known
      ? file.instance_id
      : ready?.kind === 'ready' && owned
        ? ready.instanceId
        : null,
    version: known ? file.version : null,
    configuration_id: known ? file.configuration_id : null,
    ready_at: known ? file.ready_at : null,
  };
}

/** One state for automation, and the diagnostic it maps to (null when all is well). */
function reduce(
  registration: ServiceStatus['registration']['state'],
  managerMessage: string | null,
  runtime: ServiceStatus['runtime']['state'],
  ready: Readiness | undefined,
  owned: boolean | null,
  drift: readonly Drift[],
): { state: string; code: string | null } {
  if (registration === 'foreign_unit')
    return { state: 'conflict', code: SERVICE_CODES.TASK_CONFLICT };
  if (registration === 'not_installed')
    return { state: 'not_installed', code: SERVICE_CODES.NOT_INSTALLED };
  if (managerMessage !== null)
    return { state: 'manager_unreachable', code: SERVICE_CODES.SCHEDULER_FAILED };
  if (drift.some((d) => d.layer === 'state')) {
    return { state: 'state_invalid', code: SERVICE_CODES.STATE_INVALID };
  }
  if (drift.some((d) => d.layer === 'runtime')) {
    return { state: 'restart_required', code: SERVICE_CODES.RESTART_REQUIRED };
  }
  if (drift.length > 0) return { state: 'drifted', code: SERVICE_CODES.CONFIGURATION_DRIFT };
  if (runtime === 'running' && owned === true) return { state: 'ready', code: null };
  if (runtime === 'stopped' && ready !== undefined && ready.kind !== 'absent') {
    return { state: 'port_conflict', code: SERVICE_CODES.IDENTITY_MISMATCH };
  }
  return { state: runtime, code: null };
}

/**
 * The installed registration and its checks: which definition `current.json` names, the unit
 * file and whether it is ours, property-level drift between the unit (and what the manager
 * loaded) and the definition, and whether the `node` and `mhl` it runs still exist. Lifecycle
 * commands call `checkRegistration` before they act; status calls `driftOf` and reports.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { readDefinition, readText, type ServiceDefinition } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import type { ServicePaths } from './paths.js';
import { type Current, CurrentSchema, readState } from './state.js';
import type { UnitProperties } from './systemctl.js';
import { CONFIGURATION_KEY, OWNER_KEY, parseUnit, renderUnit, unitDrift } from './unit-file.js';

/** One property that is not what the definition says, in the layer it was found. */
export interface Drift {
  readonly layer: 'manager' | 'runtime' | 'state' | 'unit';
  readonly property: string;
  readonly expected: string | null;
  readonly actual: string | null;
}

/**
 * `current.json` is a repairable index; the unit is the authority. When the index is damaged,
 * the definition our own unit names (`X-MhlConfigurationId`) is what is installed, trusted only
 * when its bytes match that identity. Undefined when the unit is not ours or names nothing
 * readable.
 */
export async function installedFromUnit(
  paths: ServicePaths,
  serviceId: string,
  unitText: string | undefined,
): Promise<Installed | undefined> {
  if (unitText === undefined || unitOwner(unitText) !== serviceId) return undefined;
  const id = parseUnit(unitText).get(CONFIGURATION_KEY);
  if (id === undefined) return undefined;
  try {
    const definition = await readDefinition(paths.definitions, id);
    const current: Current = {
      schema_version: 1,
      service_id: serviceId,
      configuration_id: id,
      updated_at: new Date().toISOString(),
    };
    return { current, definition, configurationId: id };
  } catch (error) {
    if (error instanceof ServiceError) return undefined;
    throw error;
  }
}

/** True for the refusal of a damaged state file. */
export function isStateInvalid(error: unknown): error is ServiceError {
  return error instanceof ServiceError && error.code === SERVICE_CODES.STATE_INVALID;
}

/** What `current.json` names, with its definition. */
export interface Installed {
  readonly current: Current;
  readonly definition: ServiceDefinition;
  readonly configurationId: string;
}

/**
 * The installed definition.
 * @throws ServiceError MCP_SERVICE_NOT_INSTALLED without `current.json`;
 *   MCP_SERVICE_STATE_INVALID when it or its definition is corrupt.
 */
export async function loadInstalled(paths: ServicePaths, serviceId: string): Promise<Installed> {
  const current = await readState(paths.current, CurrentSchema);
  if (current === undefined) {
    throw new ServiceError(
      SERVICE_CODES.NOT_INSTALLED,
      'the managed service is not installed; run mhl service install',
    );
  }
  if (current.service_id !== serviceId) {
    throw new ServiceError(
      SERVICE_CODES.INSTALLATION_CONFLICT,
      `current.json belongs to service ${current.service_id}, not ${serviceId}`,
    );
  }
  const definition = await readDefinition(paths.definitions, current.configuration_id);
  return { current, definition, configurationId: current.configuration_id };
}

/** Who owns a unit file's text: the service id in its marker, or null for a foreign unit. */
export function unitOwner(text: string): string | null {
  return parseUnit(text).get(OWNER_KEY) ?? null;
}

/**
 * Refuses a unit this service does not own.
 * @throws ServiceError MCP_SERVICE_TASK_CONFLICT (no marker: someone else's unit);
 *   MCP_SERVICE_INSTALLATION_CONFLICT (another installation's marker).
 */
export function assertOwned(text: string, serviceId: string): void {
  const owner = unitOwner(text);
  if (owner === null) {
    throw new ServiceError(
      SERVICE_CODES.TASK_CONFLICT,
      'mhl-managed-mcp.service exists and was not written by mhl service; it is left as is',
    );
  }
  if (owner !== serviceId) {
    throw new ServiceError(
      SERVICE_CODES.INSTALLATION_CONFLICT,
      `mhl-managed-mcp.service belongs to another installation (${owner})`,
    );
  }
}

/** Drift of the unit file and of what the manager loaded, sorted by layer and property. */
export function driftOf(
  definition: ServiceDefinition,
  unitPath: string,
  unitText: string | undefined,
  props: UnitProperties | undefined,
): Drift[] {
  const drift: Drift[] = [];
  if (unitText === undefined) {
    drift.push({ layer: 'unit', property: 'file', expected: 'present', actual: 'missing' });
  } else {
    for (const d of unitDrift(renderUnit(definition), unitText))
      drift.push({ layer: 'unit', ...d });
  }
  if (props !== undefined && props.loadState !== 'not-found') {
    const manager = (property: string, expected: string, actual: string) => {
      if (expected !== actual) drift.push({ layer: 'manager', property, expected, actual });
    };
    manager('NeedDaemonReload', 'no', props.needDaemonReload ? 'yes' : 'no');
    manager('UnitFileState', 'enabled', props.unitFileState);
    if (props.fragmentPath !== '') manager('FragmentPath', unitPath, props.fragmentPath);
    // A drop-in changes what the unit runs without touching its file: drift, like an edit.
    manager('DropInPaths', 'none', props.dropInPaths.join(' ') || 'none');
  }
  return sortDrift(drift);
}

/** Drift sorted by layer, then property. */
export function sortDrift(drift: Drift[]): Drift[] {
  return drift.sort((a, b) =>
    a.layer === b.layer
      ? a.property < b.property
        ? -1
        : a.property > b.property
          ? 1
          : 0
      : a.layer < b.layer
        ? -1
        : 1,
  );
}

/**
 * Everything a lifecycle command needs before it acts: our unit, as the definition renders it,
 * loaded as written, and the executables it names present.
 * @throws ServiceError MCP_SERVICE_CONFIGURATION_DRIFT, MCP_SERVICE_TASK_CONFLICT,
 *   MCP_SERVICE_INSTALLATION_CONFLICT, MCP_SERVICE_WORKER_MISSING.
 */
export async function checkRegistration(
  paths: ServicePaths,
  serviceId: string,
  installed: Installed,
  props: UnitProperties,
): Promise<string> {
  const text = await checkUnit(paths, serviceId, installed, props);
  await checkWorker(installed.definition);
  return text;
}

/**
 * Our unit, as the definition renders it and loaded as written (what a stop needs: a process
 * whose executable is gone may still be stopped, a drifted unit never).
 * @throws ServiceError MCP_SERVICE_CONFIGURATION_DRIFT, MCP_SERVICE_TASK_CONFLICT,
 *   MCP_SERVICE_INSTALLATION_CONFLICT.
 */
export async function checkUnit(
  paths: ServicePaths,
  serviceId: string,
  installed: Installed,
  props: UnitProperties,
): Promise<string> {
  const text = await readText(paths.unitPath);
  if (text !== undefined) assertOwned(text, serviceId);
  const drift = driftOf(installed.definition, paths.unitPath, text, props).filter(
    (d) => d.property !== 'UnitFileState',
  );
  if (drift.length > 0) {
    throw new ServiceError(
      SERVICE_CODES.CONFIGURATION_DRIFT,
      `the registration differs from its definition (${drift
        .map((d) => `${d.layer} ${d.property}`)
        .join(', ')}); ${
        drift.some((d) => d.property === 'DropInPaths')
          ? 'remove the drop-in (mhl service install never removes a file it did not write), then systemctl --user daemon-reload'
          : 'run mhl service install to restore it'
      }`,
    );
  }
  return text as string;
}

/**
 * The executables a definition runs still exist.
 * @throws ServiceError MCP_SERVICE_WORKER_MISSING naming the missing one.
 */
export async function checkWorker(definition: ServiceDefinition): Promise<void> {
  for (const [what, path, mode] of [
    ['node', definition.node, constants.X_OK],
    ['mhl', definition.mhl, constants.R_OK],
  ] as const) {
    try {
      await access(path, mode);
    } catch {
      throw new ServiceError(
        SERVICE_CODES.WORKER_MISSING,
        `the ${what} executable the service runs (${path}) is gone; install again`,
      );
    }
  }
}

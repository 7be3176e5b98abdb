/**
 * Waiting on the managed server: until its unit's main process answers readiness as exactly the
 * expected server (start, restart), and until the unit has no process left (stop). Both poll
 * the manager and the port on a short interval within one deadline; neither acts on what it
 * sees.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ServiceDefinition } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';
import { matches, probeReadiness } from './readiness.js';
import type { Systemctl, UnitProperties } from './systemctl.js';

const POLL_MS = 100;

/** A server proven to be the unit's main process, with the identity it reported. */
export interface ProvenInstance {
  readonly pid: number;
  readonly instanceId: string;
  readonly version: string;
}

/** True while the manager runs (or is about to run) the unit's process. */
export function isRunning(props: UnitProperties): boolean {
  return props.mainPid > 0;
}

/**
 * Resolves once the unit's main process answers readiness with the definition's version and
 * configuration identity (and an instance id other than `notInstance`).
 * @throws ServiceError MCP_SERVICE_START_TIMEOUT past `deadline`;
 *   MCP_SERVICE_SCHEDULER_FAILED when the unit fails first.
 */
export async function waitReady(
  systemctl: Systemctl,
  definition: ServiceDefinition,
  configurationId: string,
  deadline: number,
  notInstance?: string,
): Promise<ProvenInstance> {
  for (;;) {
    const props = await systemctl.show();
    if (props.activeState === 'failed') {
      throw new ServiceError(
        SERVICE_CODES.SCHEDULER_FAILED,
        `the unit failed before it was ready (exit status ${props.execMainStatus ?? 'unknown'}); ` +
          'see journalctl --user -u mhl-managed-mcp.service',
      );
    }
    if (isRunning(props)) {
      const ready = await probeReadiness(definition.port);
      const expected = { version: definition.version, pid: props.mainPid, configurationId };
      if (ready.kind === 'ready' && matches(ready, expected) && ready.instanceId !== notInstance) {
        return { pid: ready.pid, instanceId: ready.instanceId, version: ready.version };
      }
    }
    if (Date.now() >= deadline) {
      throw new ServiceError(
        SERVICE_CODES.START_TIMEOUT,
        `the service did not answer readiness as its own instance within 15 s on port ${definition.port}`,
      );
    }
    await delay(POLL_MS);
  }
}

/** Resolves true once the unit has no main process, false at `deadline`. */
export async function waitStopped(systemctl: Systemctl, deadline: number): Promise<boolean> {
  for (;;) {
    const props = await systemctl.show();
    if (!isRunning(props) && props.activeState !== 'deactivating') return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

/** Resolves true once nothing answers on `port`, false at `deadline`. */
export async function waitPortFree(port: number, deadline: number): Promise<boolean> {
  for (;;) {
    if ((await probeReadiness(port)).kind === 'absent') return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

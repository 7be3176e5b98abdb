/**
 * What every lifecycle command is handed: the paths, the manager driver, this user's service
 * id and this CLI's version, built once from the environment. Nothing below reads
 * `process.env` itself.
 */
import { userInfo } from 'node:os';
import { type ServicePaths, servicePaths, UNIT_NAME } from './paths.js';
import { Systemctl } from './systemctl.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ServiceContext {
  readonly paths: ServicePaths;
  readonly systemctl: Systemctl;
  /** `mhl-managed-mcp.service@<uid>`: which per-user service this is. */
  readonly serviceId: string;
  /** The version of the running CLI, which a definition records and readiness must report. */
  readonly version: string;
}

/** The context for this process's user and environment. */
export function serviceContext(env: Env, version: string): ServiceContext {
  return {
    paths: servicePaths(env),
    systemctl: new Systemctl(env),
    serviceId: `${UNIT_NAME}@${userInfo().uid}`,
    version,
  };
}

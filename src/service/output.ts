/**
 * The deterministic mutation schema (version 1) that install, start, stop, restart and
 * uninstall print: always the same fields in the same order, explicit nulls where a value is
 * not known, and the one-line text form of the same result.
 */
import { UNIT_NAME } from './paths.js';

/** The runtime layer after a command. */
export interface RuntimeView {
  readonly state: 'ready' | 'stopped' | 'running' | 'starting' | 'restart_backoff' | 'failed';
  readonly pid: number | null;
  readonly instance_id: string | null;
  readonly version: string | null;
}

/** The registration layer after a command. */
export interface RegistrationView {
  readonly state: 'installed' | 'not_installed';
  readonly unit: string;
  readonly enabled: boolean;
  readonly changed: boolean;
}

/** What a lifecycle command did. */
export interface Mutation {
  readonly command: 'install' | 'start' | 'stop' | 'restart' | 'uninstall';
  readonly schema_version: 1;
  readonly changed: boolean;
  readonly action: string;
  readonly service_id: string | null;
  readonly configuration_id: string | null;
  readonly task_path: string;
  readonly endpoint: string | null;
  readonly registration: RegistrationView;
  readonly runtime: RuntimeView;
}

/** The fields of a mutation, in the schema's order (whatever order they were built in). */
export function mutation(fields: Omit<Mutation, 'schema_version'>): Mutation {
  return {
    command: fields.command,
    schema_version: 1,
    changed: fields.changed,
    action: fields.action,
    service_id: fields.service_id,
    configuration_id: fields.configuration_id,
    task_path: fields.task_path,
    endpoint: fields.endpoint,
    registration: {
      state: fields.registration.state,
      unit: fields.registration.unit,
      enabled: fields.registration.enabled,
      changed: fields.registration.changed,
    },
    runtime: {
      state: fields.runtime.state,
      pid: fields.runtime.pid,
      instance_id: fields.runtime.instance_id,
      version: fields.runtime.version,
    },
  };
}

export const STOPPED: RuntimeView = {
  state: 'stopped',
  pid: null,
  instance_id: null,
  version: null,
};

/** A registration view of an installed unit. */
export function installedView(changed: boolean, enabled = true): RegistrationView {
  return { state: 'installed', unit: UNIT_NAME, enabled, changed };
}

/** The one-line text form. */
export function mutationText(result: Mutation): string {
  const runtime =
    result.runtime.state === 'ready'
      ? `ready at ${result.endpoint} (pid ${result.runtime.pid}, instance ${result.runtime.instance_id})`
      : result.runtime.state;
  return `${result.command}: ${result.action}: ${UNIT_NAME} ${runtime}`;
}

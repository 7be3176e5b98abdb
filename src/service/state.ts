/**
 * The durable lifecycle state under the state folder: `current.json` (which definition is
 * installed: a repairable index, the unit being the authority), `runtime.json` (the instance
 * last proven ready: pid, instance id, version, configuration id) and `lifecycle.json` (the
 * last command's outcome). Every file is parsed with zod on read (a corrupt file is
 * MCP_SERVICE_STATE_INVALID naming it) and written atomically, 0600.
 */
import { unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { errnoCode, writeFileAtomic } from '../store/index.js';
import { CONFIGURATION_ID, parseStateText, readText } from './definition.js';

const Timestamp = z.string().min(1).max(64);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const CurrentSchema = z
  .object({
    schema_version: z.literal(1).describe('the format of current.json'),
    service_id: z.string().min(1).max(200).describe('the per-user service installed'),
    configuration_id: z.string().regex(CONFIGURATION_ID).describe('the installed definition'),
    updated_at: Timestamp.describe('when install last changed it'),
  })
  .strict();
export type Current = z.infer<typeof CurrentSchema>;

export const RuntimeSchema = z
  .object({
    schema_version: z.literal(1).describe('the format of runtime.json'),
    configuration_id: z.string().regex(CONFIGURATION_ID).describe('what the instance runs'),
    pid: z.number().int().positive().describe('the unit main process'),
    instance_id: z.string().regex(UUID).describe('the instance readiness reported'),
    version: z.string().min(1).max(100).describe('the version readiness reported'),
    endpoint: z.string().min(1).max(200).describe('where it serves MCP'),
    ready_at: Timestamp.describe('when it was proven ready'),
  })
  .strict();
export type Runtime = z.infer<typeof RuntimeSchema>;

export const LifecycleSchema = z
  .object({
    schema_version: z.literal(1).describe('the format of lifecycle.json'),
    command: z.string().min(1).max(20).describe('the last lifecycle command'),
    action: z.string().max(40).nullable().describe('its action, null when it failed'),
    diagnostic_code: z.string().max(60).nullable().describe('its diagnostic, null on success'),
    at: Timestamp.describe('when it finished'),
  })
  .strict();
export type Lifecycle = z.infer<typeof LifecycleSchema>;

/**
 * A state file, or undefined when it does not exist.
 * @throws ServiceError MCP_SERVICE_STATE_INVALID naming the file when it is not valid.
 */
export async function readState<T>(path: string, schema: z.ZodType<T>): Promise<T | undefined> {
  const text = await readText(path);
  if (text === undefined) return undefined;
  return parseStateText(text, schema, basename(path));
}

/** Writes a state file atomically, 0600. */
export function writeState(path: string, value: object): Promise<void> {
  return writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Removes a state file; true when it was there. */
export async function removeState(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/** Now, as state files spell it. */
export function now(): string {
  return new Date().toISOString();
}

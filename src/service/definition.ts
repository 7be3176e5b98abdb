/**
 * The service definition: everything the managed server is started with (the absolute `node`
 * and `mhl` paths, the mhl version, the workflows folder, the serve flags, the configuration
 * directory), its configuration identity (the first 128 bits of the SHA-256 of its canonical
 * JSON), and its immutable file `definitions/<configuration-id>.json`. Equal inputs give an
 * equal identity, so a repeated install finds its definition already written. Knows nothing of
 * systemd.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { errnoCode, writeFileAtomic } from '../store/index.js';
import { SERVICE_CODES, ServiceError } from './errors.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;

/** True when `text` holds a control character, which would end a unit file's line. */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/** An absolute path a unit file can carry: no control characters (a newline would add a key). */
const UnitPathSchema = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => isAbsolute(p) && !hasControl(p), 'an absolute path');

export const ServiceDefinitionSchema = z
  .object({
    schema_version: z.literal(1).describe('the definition format'),
    service_id: z.string().min(1).max(200).describe('which per-user service this defines'),
    version: z.string().min(1).max(100).describe('the mhl version readiness must report'),
    node: UnitPathSchema.describe('absolute path of the node executable'),
    mhl: UnitPathSchema.describe('absolute path of the mhl executable script'),
    workflows: UnitPathSchema.describe('absolute path of the served folder'),
    cwd: UnitPathSchema.describe('working directory of calls without context.cwd'),
    port: z.number().int().min(1).max(65535).describe('the loopback port'),
    max_active: z.number().int().min(1).max(4096).describe('--max-active'),
    default_timeout_ms: z.number().int().min(1).describe('--default-timeout-ms'),
    config_home: UnitPathSchema.describe('XDG_CONFIG_HOME the server resolves its config in'),
    state_dir: UnitPathSchema.optional().describe(
      '--state-dir of the served process: durable async runs (absent in definitions written before it)',
    ),
  })
  .strict();

/** What a managed server runs with; immutable once written. */
export type ServiceDefinition = z.infer<typeof ServiceDefinitionSchema>;

/** A configuration identity: 32 lowercase hex digits. */
export const CONFIGURATION_ID = /^[0-9a-f]{32}$/;

/** The definition's keys in a fixed order, so its JSON (and so its identity) is canonical. */
function canonical(definition: ServiceDefinition): string {
  const ordered = Object.fromEntries(
    Object.keys(ServiceDefinitionSchema.shape).map((key) => [
      key,
      definition[key as keyof ServiceDefinition],
    ]),
  );
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** The configuration identity of a definition. */
export function configurationId(definition: ServiceDefinition): string {
  return createHash('sha256').update(canonical(definition)).digest('hex').slice(0, 32);
}

/** The loopback MCP endpoint a definition serves. */
export function endpointOf(definition: ServiceDefinition): string {
  return `http://127.0.0.1:${definition.port}/mcp`;
}

function definitionPath(dir: string, id: string): string {
  return join(dir, `${id}.json`);
}

/**
 * Writes the definition under its identity, once: an existing file must hold exactly these
 * bytes (definitions are immutable).
 * @throws ServiceError MCP_SERVICE_STATE_INVALID when the file holds anything else.
 */
export async function writeDefinition(dir: string, definition: ServiceDefinition): Promise<string> {
  const id = configurationId(definition);
  const path = definitionPath(dir, id);
  const text = canonical(definition);
  const existing = await readText(path);
  if (existing === text) return id;
  if (existing !== undefined) {
    throw new ServiceError(
      SERVICE_CODES.STATE_INVALID,
      `definitions/${id}.json does not match its configuration identity; remove it and install again`,
    );
  }
  await writeFileAtomic(path, text);
  return id;
}

/**
 * The definition of identity `id`, checked against that identity.
 * @throws ServiceError MCP_SERVICE_STATE_INVALID when missing, malformed or not matching `id`.
 */
export async function readDefinition(dir: string, id: string): Promise<ServiceDefinition> {
  const name = `definitions/${id}.json`;
  const text = await readText(definitionPath(dir, id));
  if (text === undefined) {
    throw new ServiceError(SERVICE_CODES.STATE_INVALID, `${name} is missing; install again`);
  }
  const definition = parseDefinition(text, name);
  if (configurationId(definition) !== id) {
    throw new ServiceError(
      SERVICE_CODES.STATE_INVALID,
      `${name} does not match its configuration identity; install again`,
    );
  }
  return definition;
}

/** A definition from its JSON text; `name` says which file in a refusal. */
export function parseDefinition(text: string, name: string): ServiceDefinition {
  return parseStateText(text, ServiceDefinitionSchema, name);
}

/** A state document from its JSON text, checked against `schema`; `name` says which file in a refusal. */
export function parseStateText<T>(text: string, schema: z.ZodType<T>, name: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServiceError(SERVICE_CODES.STATE_INVALID, `${name} is not valid JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ServiceError(
      SERVICE_CODES.STATE_INVALID,
      `${name}: invalid ${issue?.path.join('.') || 'document'}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/** A file's text, or undefined when it does not exist. */
export async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

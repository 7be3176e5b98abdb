/**
 * Secret records: what the vault holds per secret and the rules for each field. A record has a
 * random id (what MCP calls pass under `credentials.<slot>`), a name (what `vault("name")` and
 * the CLI use), a kind, a label for people, its creation and update times, and its value. Only
 * `metadataOf` leaves this module towards a listing, and it has no value field.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SECRETS_ERROR_CODES as CODES, SecretsError } from './errors.js';

/** The kinds a secret may have; a credential slot lists the kinds it accepts. */
export const SECRET_KINDS = [
  'generic',
  'password',
  'token',
  'api_key',
  'basic',
  'private_key',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

/** A name: what `vault("…")` and `mhl secrets add NAME` take. */
export const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;
/** A record id: `sec_` and 32 hex digits (128 random bits). */
export const RECORD_ID = /^sec_[0-9a-f]{32}$/;
/**
 * Shortest value accepted: the run's redactor ignores shorter strings (replacing "abc"
 * everywhere would destroy output), and a vault value must always be redacted.
 */
export const MIN_VALUE_CHARS = 4;
export const MAX_VALUE_BYTES = 64 * 1024;
export const MAX_LABEL_CHARS = 200;
export const MAX_RECORDS = 10_000;

/**
 * The vault's schemas, built on first use: only opening a vault file needs them, and building
 * them at import was 1.6 ms of every server's start-up (bench/serve-startup.bench.mjs).
 */
function buildSchemas() {
  const record = z
    .object({
      id: z.string().regex(RECORD_ID).describe('random record id, what calls pass'),
      name: z.string().regex(SECRET_NAME).describe('the name vault() and the CLI use'),
      kind: z.enum(SECRET_KINDS).describe('what kind of secret this is'),
      label: z.string().max(MAX_LABEL_CHARS).describe('a description for people'),
      created: z.string().describe('ISO 8601 time the record was added'),
      updated: z.string().describe('ISO 8601 time the value or label last changed'),
      value: z.string().describe('the secret itself'),
    })
    .strict();
  const content = z
    .object({ records: z.array(record).max(MAX_RECORDS).describe('every record') })
    .strict();
  return { record, content };
}
type Schemas = ReturnType<typeof buildSchemas>;
let built: Schemas | undefined;

export function vaultSchemas(): Schemas {
  built ??= buildSchemas();
  return built;
}
export type SecretRecord = z.infer<Schemas['record']>;
export type VaultContent = z.infer<Schemas['content']>;

/** A record as listings show it: never the value. */
export interface SecretMetadata {
  readonly id: string;
  readonly name: string;
  readonly kind: SecretKind;
  readonly label: string;
  readonly created: string;
  readonly updated: string;
}

export function metadataOf(record: SecretRecord): SecretMetadata {
  const { id, name, kind, label, created, updated } = record;
  return { id, name, kind, label, created, updated };
}

export function newRecordId(): string {
  return `sec_${randomBytes(16).toString('hex')}`;
}

export function checkName(name: string): string {
  if (!SECRET_NAME.test(name)) {
    throw new SecretsError(
      CODES.NAME_INVALID,
      'a secret name is 1 to 128 characters: letters, digits, ".", "_", "/" and "-", starting with a letter or digit',
    );
  }
  return name;
}

export function checkKind(kind: string): SecretKind {
  if (!(SECRET_KINDS as readonly string[]).includes(kind)) {
    throw new SecretsError(
      CODES.KIND_INVALID,
      `a secret kind is one of ${SECRET_KINDS.join(', ')}`,
    );
  }
  return kind as SecretKind;
}

/** A label: printable text without line breaks, at most 200 characters. */
export function checkLabel(label: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (label.length > MAX_LABEL_CHARS || /[\u0000-\u001f\u007f]/.test(label)) {
    throw new SecretsError(
      CODES.LABEL_INVALID,
      `a label is at most ${MAX_LABEL_CHARS} characters, without control characters or line breaks`,
    );
  }
  return label;
}

/** A value: at least 4 characters, at most 64 KiB, no NUL; the message never quotes it. */
export function checkValue(value: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (value.length < MIN_VALUE_CHARS || bytes > MAX_VALUE_BYTES || value.includes('\u0000')) {
    throw new SecretsError(
      CODES.VALUE_INVALID,
      `a secret value is ${MIN_VALUE_CHARS} characters to ${MAX_VALUE_BYTES / 1024} KiB, without NUL characters (this one is ${bytes} bytes)`,
    );
  }
  return value;
}

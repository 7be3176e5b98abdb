/**
 * The vault file format, version 1: one JSON object
 * `{"format":"mhl-vault","version":1,"cipher":"aes-256-gcm","key_id","nonce","data","tag"}`
 * whose `data` is the AES-256-GCM sealing of the records (`{"records":[…]}` as JSON) under a
 * fresh 96-bit nonce per write, with the header fields as additional data. The whole file is
 * sealed, not each record, so no record can be removed, swapped or rolled back alone, and
 * nothing but the key id and the size is readable without the key. `key_id` tells a wrong key
 * (`VAULT_WRONG_KEY`) from a changed byte (`VAULT_CORRUPT`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SECRETS_ERROR_CODES as CODES, SecretsError } from './errors.js';
import { keyId } from './key.js';
import { type VaultContent, vaultSchemas } from './records.js';

export const VAULT_FORMAT = 'mhl-vault';
export const VAULT_VERSION = 1;
/** Largest vault file read or written (a write past it is `VAULT_FULL`). */
export const MAX_VAULT_BYTES = 64 * 1024 * 1024;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The vault file's envelope; built on the first open, not at every server's start-up. */
function buildEnvelopeSchema() {
  return z
    .object({
      format: z.literal(VAULT_FORMAT).describe('always "mhl-vault"'),
      version: z.literal(VAULT_VERSION).describe('the format version'),
      cipher: z.literal('aes-256-gcm').describe('the AEAD cipher'),
      key_id: z
        .string()
        .regex(/^[0-9a-f]{16}$/)
        .describe('which key sealed the data'),
      nonce: z.string().regex(BASE64URL).describe('96-bit nonce, base64url'),
      data: z.string().regex(BASE64URL).describe('the sealed records, base64url'),
      tag: z.string().regex(BASE64URL).describe('128-bit GCM tag, base64url'),
    })
    .strict();
}
let envelopeSchema: ReturnType<typeof buildEnvelopeSchema> | undefined;

function additionalData(id: string): Buffer {
  return Buffer.from(`${VAULT_FORMAT}/${VAULT_VERSION}/aes-256-gcm/${id}`, 'utf8');
}

/** Seals `content` into the file's text. */
export function sealVault(content: VaultContent, key: Buffer): string {
  const id = keyId(key);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(additionalData(id));
  const data = Buffer.concat([cipher.update(JSON.stringify(content), 'utf8'), cipher.final()]);
  const envelope = {
    format: VAULT_FORMAT,
    version: VAULT_VERSION,
    cipher: 'aes-256-gcm',
    key_id: id,
    nonce: nonce.toString('base64url'),
    data: data.toString('base64url'),
    tag: cipher.getAuthTag().toString('base64url'),
  };
  return `${JSON.stringify(envelope, null, 2)}\n`;
}

/**
 * Opens a vault file's text. Throws `VAULT_CORRUPT` (naming `file` and what is wrong) for
 * anything that is not a sealed vault or whose bytes were changed, `VAULT_WRONG_KEY` when
 * another key sealed it.
 */
export function openVault(text: string, key: Buffer, file: string): VaultContent {
  const envelope = parseEnvelope(text, file);
  if (envelope.key_id !== keyId(key)) {
    throw new SecretsError(
      CODES.WRONG_KEY,
      `${file}: sealed with another key than the one in vault.key (key id ${envelope.key_id}); restore the key that sealed it`,
    );
  }
  const nonce = Buffer.from(envelope.nonce, 'base64url');
  const tag = Buffer.from(envelope.tag, 'base64url');
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) {
    throw corrupt(file, 'its nonce or tag has the wrong length');
  }
  let plain: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(additionalData(envelope.key_id));
    decipher.setAuthTag(tag);
    const data = Buffer.from(envelope.data, 'base64url');
    plain = Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch (error) {
    throw corrupt(file, 'its sealed data does not authenticate (the file was changed)', error);
  }
  const content = vaultSchemas().content.safeParse(safeJson(plain));
  if (!content.success) throw corrupt(file, 'its records are not valid');
  return content.data;
}

function parseEnvelope(
  text: string,
  file: string,
): z.infer<ReturnType<typeof buildEnvelopeSchema>> {
  const value = safeJson(text);
  if (value === undefined) throw corrupt(file, 'it is not JSON');
  envelopeSchema ??= buildEnvelopeSchema();
  const envelope = envelopeSchema.safeParse(value);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    throw corrupt(file, `field ${issue?.path.join('.') || '(top)'}: ${issue?.message}`);
  }
  return envelope.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not JSON: the caller reports the file as corrupt.
    return undefined;
  }
}

function corrupt(file: string, what: string, cause?: unknown): SecretsError {
  return new SecretsError(
    CODES.CORRUPT,
    `${file}: not a readable vault: ${what}; it was left as it is (restore it from a backup, or move it away to start an empty vault)`,
    cause === undefined ? undefined : { cause },
  );
}

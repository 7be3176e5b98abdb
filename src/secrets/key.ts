/**
 * The vault key: 32 random bytes in a file of its own, mode 0600 in a 0700 folder, one line
 * `mhl-vault-key-v1:<43 base64url characters>`. It is made only when neither it nor a vault
 * exists (a missing key beside an existing vault is an error, never a reason to make a new
 * one, which would lose every record), and refused when others can read it. Two values are
 * derived from it, each with its own label, so neither reveals the key: the key id stored in
 * the vault (to tell a wrong key from a damaged file) and the control proof the CLI answers the
 * local server's challenge with to mint a setup capability (only the key's owner can compute it).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { writeFileAtomic } from '../store/index.js';
import { SECRETS_ERROR_CODES as CODES, SecretsError, systemCode } from './errors.js';

export const KEY_BYTES = 32;
const PREFIX = 'mhl-vault-key-v1:';
const KEY_LINE = /^mhl-vault-key-v1:([A-Za-z0-9_-]{43})\n?$/;

/** The key's text form, as its file holds it. */
export function formatVaultKey(key: Buffer): string {
  return `${PREFIX}${key.toString('base64url')}\n`;
}

/** Parses a key file's text; the refusal describes its shape, never its characters. */
export function parseVaultKey(text: string, file: string): Buffer {
  const found = KEY_LINE.exec(text);
  const bytes = found?.[1] === undefined ? undefined : Buffer.from(found[1], 'base64url');
  if (bytes?.length !== KEY_BYTES) {
    throw new SecretsError(
      CODES.KEY_INVALID,
      `${file}: not a vault key (expected one line "${PREFIX}" and 43 base64url characters)`,
    );
  }
  return bytes;
}

/** Reads the key, or undefined when its file does not exist. */
export function readVaultKey(file: string): Buffer | undefined {
  let text: string;
  try {
    const info = statSync(file);
    if ((info.mode & 0o077) !== 0) {
      throw new SecretsError(
        CODES.KEY_PERMISSIONS,
        `${file}: others can read the vault key (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 on it`,
      );
    }
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof SecretsError) throw error;
    if (systemCode(error) === 'ENOENT') return undefined;
    throw new SecretsError(CODES.IO, `${file}: cannot read the vault key (${systemCode(error)})`, {
      cause: error,
    });
  }
  return parseVaultKey(text, file);
}

/** Makes and writes a fresh key (0600, atomically). Call only under the vault's lock. */
export async function createVaultKey(file: string): Promise<Buffer> {
  const key = randomBytes(KEY_BYTES);
  await writeFileAtomic(file, formatVaultKey(key));
  return key;
}

/** The key id stored in the vault file: 16 hex digits of an HMAC of a fixed label. */
export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('mhl vault key id v1').digest('hex').slice(0, 16);
}

/** What a control proof is for; a proof made for another purpose never verifies as this one. */
export const MINT_PURPOSE = 'mint-setup-capability';

/** What a control proof answers: the server's fresh nonce, its identity and its origin. */
export interface ControlChallenge {
  /** The single-use nonce the server issued (43 base64url characters). */
  readonly nonce: string;
  /** The serving process's `instance_id`, as `/health/ready` reports it. */
  readonly instanceId: string;
  /** The origin the request is sent to, `http://127.0.0.1:<port>`. */
  readonly origin: string;
}

/**
 * The control proof: what `mhl secrets --open` sends to mint a setup capability, an HMAC of
 * the vault key over one challenge (nonce, server instance, origin, purpose). Only someone who
 * can read the key file can compute it, and it is good for that one challenge only: a server
 * that records it (a look-alike on the port) holds nothing it can use later or elsewhere.
 * None of the parts can contain a newline, so the joined text is unambiguous.
 */
export function controlProof(key: Buffer, challenge: ControlChallenge): string {
  const text = [
    'mhl secrets control v2',
    MINT_PURPOSE,
    challenge.nonce,
    challenge.instanceId,
    challenge.origin,
  ].join('\n');
  return createHmac('sha256', key).update(text).digest('base64url');
}

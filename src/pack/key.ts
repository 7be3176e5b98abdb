/**
 * The pack key and its one text form: exactly 64 hex digits (32 bytes; upper or lower case,
 * `mhl pack --new-key` prints lower case), with nothing around them. Every other spelling,
 * base64 included, is refused, so one key never has two spellings that an operator has to
 * keep in sync. Refusals describe the shape of what was given, never its characters.
 */
import { randomBytes } from 'node:crypto';
import { KEY_BYTES } from './dmpk.js';
import { PACK_ERROR_CODES, PackError } from './errors.js';

/** The environment variable both `mhl pack` and `mhl serve mcp --workflows-pack` read. */
export const WORKFLOWS_KEY_ENV = 'MHL_SERVE_WORKFLOWS_KEY';

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;

/**
 * Parses a key in its canonical form. Throws `PackError` `PACK_KEY_MISSING` for undefined or
 * an empty string, `PACK_KEY_MALFORMED` for anything that is not 64 hex digits.
 */
export function parseWorkflowsKey(text: string | undefined): Buffer {
  if (text === undefined || text === '') {
    throw new PackError(
      PACK_ERROR_CODES.KEY_MISSING,
      `${WORKFLOWS_KEY_ENV} is not set; give it the 64 hex digits mhl pack --new-key printed`,
    );
  }
  if (!HEX_KEY.test(text)) {
    throw new PackError(
      PACK_ERROR_CODES.KEY_MALFORMED,
      `${WORKFLOWS_KEY_ENV} is malformed: ${shapeProblem(text)}; a key is exactly 64 hex digits (32 bytes), as mhl pack --new-key prints it`,
    );
  }
  return Buffer.from(text, 'hex');
}

/** What is wrong with a key's text, in words that reveal none of its characters. */
function shapeProblem(text: string): string {
  if (HEX_KEY.test(text.trim())) return 'it has whitespace around it';
  if (BASE64_KEY.test(text)) {
    return 'it looks like base64, which is not accepted; convert it with printf %s "$KEY" | base64 -d | od -An -vtx1 | tr -d " \\n"';
  }
  if (text.length !== 64) return `it is ${text.length} characters long`;
  return 'it contains characters that are not hex digits';
}

/** A fresh random key. */
export function newWorkflowsKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** A key's canonical text: 64 lower-case hex digits. */
export function formatWorkflowsKey(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex');
}

/**
 * Reads the key's text from `env` and deletes the variable from it, so that when `env` is
 * `process.env` no child process inherits the key and `env()` cannot read it. The process's
 * own initial environment block (`/proc/<pid>/environ`) is not changed by this.
 */
export function takeWorkflowsKey(env: Record<string, string | undefined>): string | undefined {
  const text = env[WORKFLOWS_KEY_ENV];
  delete env[WORKFLOWS_KEY_ENV];
  return text;
}

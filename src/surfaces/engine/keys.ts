/**
 * Where the engine's signing key comes from: `MHL_ENGINE_KEY` (taken out of the process
 * environment first thing, like the pack key, so no child or log ever sees it), else a key
 * file `engine.key` in the state dir, created once with mode 0600 and refused when anyone but
 * its owner could read it (or when it is a symlink). Without either, a random key lives in
 * memory only and tokens do not outlive the process (logged as a warning by the caller).
 *
 * One text, one key, wherever it is written: an even run of at least 64 hex digits is the
 * bytes it spells (what `openssl rand -hex 32` and the key file hold), any other text in
 * `MHL_ENGINE_KEY` is its UTF-8 bytes. So a key moved from the file to the variable, or back,
 * still verifies the tokens it signed.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/** The variable the key is read from. */
export const ENGINE_KEY_ENV = 'MHL_ENGINE_KEY';
/** The key file's name inside the state dir. */
export const KEY_FILE = 'engine.key';
const MIN_KEY_BYTES = 32;
const HEX_KEY = /^(?:[0-9a-fA-F]{2}){32,}$/;

/** The key a text names: hex digits decoded (see the header), else the text's UTF-8 bytes. */
export function keyFromText(text: string): Buffer {
  return HEX_KEY.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'utf8');
}

/** Removes `MHL_ENGINE_KEY` from `env` and returns its text. Call it before anything runs. */
export function takeEngineKey(env: Record<string, string | undefined>): string | undefined {
  const text = env[ENGINE_KEY_ENV];
  delete env[ENGINE_KEY_ENV];
  return text;
}

/** Where the keys came from, for the start-up log (never the keys themselves). */
export type KeySource = 'env' | 'file' | 'ephemeral';

export type KeysResult =
  | { readonly ok: true; readonly keys: Buffer[]; readonly source: KeySource }
  | { readonly ok: false; readonly problem: string };

/**
 * The keys: `MHL_ENGINE_KEY` as comma-separated keys of at least 32 bytes each (the first
 * signs), else the state dir's key file (made on first start), else one ephemeral key.
 */
export function loadEngineKeys(text: string | undefined, stateDir: string | undefined): KeysResult {
  if (text !== undefined && text !== '') {
    const keys = text.split(',').map((part) => keyFromText(part.trim()));
    if (keys.some((key) => key.length < MIN_KEY_BYTES)) {
      return { ok: false, problem: `${ENGINE_KEY_ENV} keys must be at least 32 bytes each` };
    }
    return { ok: true, keys, source: 'env' };
  }
  if (stateDir === undefined) return { ok: true, keys: [randomBytes(32)], source: 'ephemeral' };
  try {
    return { ok: true, keys: [readOrCreateKeyFile(stateDir)], source: 'file' };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** Reads `<dir>/engine.key`, creating it (0600, written whole, then linked into place). */
function readOrCreateKeyFile(dir: string): Buffer {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, KEY_FILE);
  try {
    return readKeyFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const temp = join(dir, `.tmp-${KEY_FILE}-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // link, not rename: a second server starting at the same moment keeps the first one's key.
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
  return readKeyFile(path);
}

function readKeyFile(path: string): Buffer {
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink could point the server at a key someone else controls or can read.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new Error(`the engine key file ${KEY_FILE} in the state dir must not be a symlink`);
    }
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new Error(`the engine key file ${KEY_FILE} in the state dir is not a regular file`);
    }
    if ((stat.mode & 0o077) !== 0) {
      throw new Error(`the engine key file ${KEY_FILE} in the state dir must be mode 0600`);
    }
    const hex = readFileSync(fd, 'utf8').trim();
    if (!HEX_KEY.test(hex)) {
      throw new Error(
        `the engine key file ${KEY_FILE} in the state dir is not 64 or more hex digits`,
      );
    }
    return keyFromText(hex);
  } finally {
    closeSync(fd);
  }
}

/**
 * The HMAC key of sessions, seals and trace tokens (spec session-profile §2.1): `<dir>/secret`,
 * exactly 32 random bytes, in `WORKFLOW_SERVER_KEY_DIR`, else `WORKFLOW_SERVER_STATE_DIR`, else
 * `~/.workflow-server`. Created once (0600, directory 0700): written whole to a private temporary
 * file, then published by a hard link, which never replaces an existing file. So a process that
 * loses the creation race reads the winner's complete key, never a file still being written. Sharing the file with the public server makes
 * seals portable between the two. The key is never logged.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SESSION_CODES, SessionStoreError } from './errors.js';

const KEY_BYTES = 32;

/** The key directory the environment names (the lookup order above). */
export function keyDir(env: Readonly<Record<string, string | undefined>>): string {
  const named = env['WORKFLOW_SERVER_KEY_DIR'] || env['WORKFLOW_SERVER_STATE_DIR'];
  return named !== undefined && named !== '' ? named : join(homedir(), '.workflow-server');
}

/** Reads the key in `dir`, creating it first when absent. @throws SessionStoreError KEY_INVALID */
export function loadKey(dir: string): Buffer {
  const file = join(dir, 'secret');
  try {
    return check(readFileSync(file), file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw wrap(e);
  }
  const temp = join(dir, `.secret-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const key = randomBytes(KEY_BYTES);
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, key);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, file);
    return key;
  } catch (e) {
    // Another process published its key between our read and our link: use that one.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return check(readFileSync(file), file);
    throw wrap(e);
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Never created (mkdir or open failed): nothing to remove.
    }
  }
}

function check(key: Buffer, file: string): Buffer {
  if (key.length !== KEY_BYTES) {
    throw new SessionStoreError(
      SESSION_CODES.KEY_INVALID,
      `expected ${KEY_BYTES} bytes, found ${key.length}`,
    );
  }
  if (process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0) {
    throw new SessionStoreError(
      SESSION_CODES.KEY_INVALID,
      'the key file is readable by others: chmod 600 it',
    );
  }
  return key;
}

function wrap(e: unknown): Error {
  if (e instanceof SessionStoreError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const hint =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied: make the key directory writable by this user'
      : String(code);
  return new SessionStoreError(SESSION_CODES.KEY_INVALID, hint, { cause: e });
}

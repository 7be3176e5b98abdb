/**
 * The vault's write lock: a file created exclusively (`wx`) holding the owner's pid, so the CLI
 * and a server's setup page never interleave a read-modify-write of the vault. A lock whose
 * process is gone (killed mid-write) is taken over; a live holder makes the caller wait a
 * little, then fail with `VAULT_BUSY` rather than wait forever.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { SECRETS_ERROR_CODES as CODES, SecretsError, systemCode } from './errors.js';

/** How long a caller waits for another writer, in all. */
const WAIT_MS = 3000;
const RETRY_MS = 25;

/** Runs `task` holding the lock at `file` (whose folder must exist). */
export async function withVaultLock<T>(file: string, task: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await tryLock(file)) break;
    if (Date.now() > deadline) {
      throw new SecretsError(CODES.BUSY, `${file}: another mhl command is changing the vault`);
    }
    // A writer holds it for a few milliseconds; polling is the only portable wait on a file.
    await delay(RETRY_MS);
  }
  try {
    return await task();
  } finally {
    await unlink(file).catch(() => undefined);
  }
}

async function tryLock(file: string): Promise<boolean> {
  try {
    const handle = await open(file, 'wx', 0o600);
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if (systemCode(error) !== 'EEXIST') {
      throw new SecretsError(
        CODES.IO,
        `${file}: cannot take the vault lock (${systemCode(error)})`,
        {
          cause: error,
        },
      );
    }
  }
  if (await holderGone(file)) await unlink(file).catch(() => undefined);
  return false;
}

/** True when the lock names a process that no longer exists. */
async function holderGone(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const pid = Number(text);
  // An empty file is a holder between its create and its write: alive.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return systemCode(error) === 'ESRCH';
  }
}

/**
 * The vault's write lock: a file created exclusively (`wx`) holding the owner's pid, so the CLI
 * and a server's setup page never interleave a read-modify-write of the vault. A lock whose
 * process is gone (killed mid-write) is taken over; a live holder makes the caller wait a
 * little, then fail with `VAULT_BUSY` rather than wait forever.
 *
 * Takeover is atomic: a waiter that finds a dead holder's pid D hard-links the lock to
 * `<lock>.stale-D` first. `link` creates exclusively, so of several waiters behind the same
 * dead holder exactly one wins; the winner removes the lock only if the file it linked still
 * holds D (a fresh lock taken in between holds another pid and is left alone), and no other
 * waiter can remove the lock meanwhile, since it would need the same tomb. Without this, a slow
 * waiter could read D, lose the race, and unlink the lock a faster waiter had just taken.
 */
import { link, open, readFile, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { SECRETS_ERROR_CODES as CODES, SecretsError, systemCode } from './errors.js';

/** How long a caller waits for another writer, in all. */
const WAIT_MS = 3000;
const RETRY_MS = 25;

/** The file operations the lock uses; injected by tests to order a race. */
export interface LockFs {
  readonly open: typeof open;
  readonly readFile: (path: string, encoding: 'utf8') => Promise<string>;
  readonly unlink: typeof unlink;
  readonly link: typeof link;
}

const NODE_FS: LockFs = { open, readFile, unlink, link };

/** Runs `task` holding the lock at `file` (whose folder must exist). */
export async function withVaultLock<T>(
  file: string,
  task: () => Promise<T>,
  fs: LockFs = NODE_FS,
): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await tryLock(file, fs)) break;
    if (Date.now() > deadline) {
      throw new SecretsError(CODES.BUSY, `${file}: another mhl command is changing the vault`);
    }
    // A writer holds it for a few milliseconds; polling is the only portable wait on a file.
    await delay(RETRY_MS);
  }
  try {
    return await task();
  } finally {
    await fs.unlink(file).catch(() => undefined);
  }
}

async function tryLock(file: string, fs: LockFs): Promise<boolean> {
  try {
    const handle = await fs.open(file, 'wx', 0o600);
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
  const dead = await deadHolder(file, fs);
  if (dead !== undefined) await takeOver(file, dead, fs);
  return false;
}

/** The pid the lock names when that process no longer exists, else undefined. */
async function deadHolder(file: string, fs: LockFs): Promise<string | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  const pid = Number(text);
  // An empty file is a holder between its create and its write: alive.
  if (!Number.isInteger(pid) || pid <= 0 || String(pid) !== text) return undefined;
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return systemCode(error) === 'ESRCH' ? text : undefined;
  }
}

/**
 * Removes the lock of dead holder `pid` if this waiter wins its tomb and the lock is still
 * that holder's; otherwise does nothing (the caller retries the exclusive create).
 */
async function takeOver(file: string, pid: string, fs: LockFs): Promise<void> {
  const tomb = `${file}.stale-${pid}`;
  try {
    await fs.link(file, tomb);
  } catch {
    // EEXIST: another waiter is taking this holder's lock over; ENOENT: the lock is gone.
    return;
  }
  try {
    if ((await fs.readFile(tomb, 'utf8').catch(() => '')) === pid) await fs.unlink(file);
  } catch {
    // Already gone: nothing to take over.
  } finally {
    await fs.unlink(tomb).catch(() => undefined);
  }
}

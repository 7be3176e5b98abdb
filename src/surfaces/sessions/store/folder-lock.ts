/**
 * The cross-process lock of one session folder: `.session.lock`, created with O_EXCL (0600) and
 * holding `<pid> <random token>`. Two server processes on one workspace serialise their
 * read-modify-write calls on it (the in-process queue of `withFolder` only orders one process).
 *
 * A holder that died leaves its file behind. A waiter that finds the holder's pid gone breaks
 * the lock by renaming the file to a name of its own (rename moves one directory entry, so only
 * one waiter can win it), then re-reads what it moved: if that is the stale content it saw, it
 * deletes it and competes again; if it is a fresh lock taken in between, it links it back
 * (link never replaces an entry). Pids are checked with signal 0, on this host only: a workspace
 * shared between hosts is not supported. Waiting polls with a growing delay, bounded.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SESSION_CODES, SessionStoreError } from './errors.js';

export const LOCK_FILE = '.session.lock';
const WAIT_MS = 15_000;

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the pid exists under another user, so it is alive.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryCreate(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Breaks the lock at `path` if it still holds `stale`. */
function breakStale(path: string, stale: string): void {
  const aside = `${path}.${randomBytes(6).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // Someone else moved it first.
  }
  if (readOr(aside) === stale) {
    unlinkSync(aside);
    return;
  }
  // A live lock taken after we read the stale one: put it back where its holder left it.
  try {
    linkSync(aside, path);
  } catch {
    // Only EEXIST can land here, after a third process took the free name: nothing to restore.
  }
  unlinkSync(aside);
}

/** Takes the lock of `folder`; resolves to the release function. @throws WORKSPACE_INVALID */
export async function lockFolder(folder: string): Promise<() => void> {
  const path = join(folder, LOCK_FILE);
  const mine = `${process.pid} ${randomBytes(12).toString('hex')}\n`;
  const deadline = Date.now() + WAIT_MS;
  let wait = 1;
  while (!tryCreate(path, mine)) {
    const held = readOr(path);
    if (held !== undefined && !alive(Number(held.split(' ')[0]))) {
      breakStale(path, held);
      continue;
    }
    if (Date.now() > deadline)
      throw new SessionStoreError(SESSION_CODES.WORKSPACE_INVALID, 'session folder stays locked');
    await delay(wait);
    wait = Math.min(wait * 2, 25);
  }
  return () => {
    // Only our own file is removed: a lock broken from under us is someone else's now.
    if (readOr(path) === mine) unlinkSync(path);
  };
}

/**
 * The lifecycle lock: one mutating `mhl service` command at a time per state folder. The
 * permanent anchor `lifecycle.lock` (0600, never removed) holds a random name; holding the lock
 * is listening on the Linux abstract socket of that name, which the kernel releases when the
 * holder exits however it exits, so a killed command never leaves a stale lock. A connection
 * to the socket is answered with the holder's pid and command, which status shows.
 */
import { randomBytes } from 'node:crypto';
import { link, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { errnoCode, writeFileAtomic } from '../store/index.js';
import { readText } from './definition.js';
import { SERVICE_CODES, ServiceError } from './errors.js';

const ANCHOR = /^mhl-lifecycle-lock v1 ([0-9a-f]{32})\n$/;
/** How long status waits for a holder to say who it is. */
const HOLDER_QUERY_MS = 1000;

/** Who holds the lock, as the holder reports it. */
export interface LockHolder {
  readonly pid: number | null;
  readonly command: string | null;
}

/** A held lock; `release()` is idempotent. */
export interface LifecycleLock {
  release(): Promise<void>;
}

/**
 * The anchor's name, creating the anchor when missing.
 * @throws ServiceError MCP_SERVICE_STATE_INVALID when the anchor holds anything else.
 */
async function anchorName(path: string, create: boolean): Promise<string | undefined> {
  let text = await readText(path);
  if (text === undefined) {
    if (!create) return undefined;
    await createAnchor(path);
    text = (await readText(path)) ?? '';
  }
  const match = ANCHOR.exec(text);
  if (!match) {
    throw new ServiceError(
      SERVICE_CODES.STATE_INVALID,
      'lifecycle.lock is not a lock anchor written by mhl; remove it and try again',
    );
  }
  return `\0mhl/managed-mcp/${match[1]}`;
}

/**
 * Writes the anchor whole under a temp name, then links it into place: `link` fails when the
 * anchor exists, so two first commands racing agree on the one that won, and no reader sees a
 * half-written anchor.
 */
async function createAnchor(path: string): Promise<void> {
  const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  await writeFileAtomic(temp, `mhl-lifecycle-lock v1 ${randomBytes(16).toString('hex')}\n`);
  try {
    await link(temp, path);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw error;
  } finally {
    await unlink(temp);
  }
}

/**
 * Takes the lock for `command`.
 * @throws ServiceError MCP_SERVICE_BUSY when another command holds it;
 *   MCP_SERVICE_STATE_INVALID for a corrupt anchor.
 */
export async function acquireLifecycleLock(
  anchor: string,
  command: string,
): Promise<LifecycleLock> {
  const name = (await anchorName(anchor, true)) as string;
  const server: Server = createServer((socket) => {
    socket.end(JSON.stringify({ pid: process.pid, command }));
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (error) => {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        fail(new ServiceError(SERVICE_CODES.BUSY, 'another mhl service command is running'));
      } else fail(error);
    });
    server.listen(name, () => done());
  });
  // The lock must not keep a finished command alive.
  server.unref();
  let released: Promise<void> | undefined;
  return {
    release: () => {
      released ??= new Promise<void>((done) => server.close(() => done()));
      return released;
    },
  };
}

/** Who holds the lock, or null when nobody does (never creates the anchor). */
export async function lockHolder(anchor: string): Promise<LockHolder | null> {
  const name = await anchorName(anchor, false);
  if (name === undefined) return null;
  return new Promise((done) => {
    const socket = createConnection(name);
    let text = '';
    const timer = setTimeout(() => socket.destroy(), HOLDER_QUERY_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => {
      clearTimeout(timer);
      done(null);
    });
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (hadError) return;
      done(parseHolder(text));
    });
  });
}

function parseHolder(text: string): LockHolder {
  try {
    const value = JSON.parse(text) as { pid?: unknown; command?: unknown };
    return {
      pid: typeof value.pid === 'number' ? value.pid : null,
      command: typeof value.command === 'string' ? value.command : null,
    };
  } catch {
    // A holder that answered but said nothing readable still holds the lock.
    return { pid: null, command: null };
  }
}

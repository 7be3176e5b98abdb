/**
 * Writes a session file and its seal so that a process killed at any moment leaves a pair that
 * verifies: both temp files are written and fsynced side by side; the seal file goes first and
 * names the new seal and the old one; then the session file; then the seal file is rewritten to
 * the new seal alone. At every moment the file on disk is accepted under a seal that covers its
 * exact bytes, and no state is ever accepted without one. A rename across devices falls back to
 * copying in place. Files are 0600; temp names start with `.tmp-`, which no reader looks at.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { FILE_MODE, NODE_FS, renameOrCopy, syncDir, TEMP_PREFIX } from '../../../store/index.js';

const fs = NODE_FS;

async function prepare(dir: string, data: string, durable: boolean): Promise<string> {
  const tmp = join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`);
  const handle = await fs.open(tmp, 'wx', FILE_MODE);
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } finally {
    await handle.close();
  }
  return tmp;
}

/** `tmp` onto `path`: renamed, or copied durably where the folder spans devices (bind mounts). */
function place(tmp: string, path: string, data: string): Promise<void> {
  return renameOrCopy(NODE_FS, tmp, path, Buffer.from(data));
}

/**
 * Replaces `dir/<fileName>` with `text` under seal `seal`. `previous` is the seal now on disk:
 * the new seal file names both until the file is in place, so the pair on disk verifies at
 * every moment (old file under the old seal, or new file under the new one); then the seal file
 * is rewritten to the new seal alone, the single-line form the public server reads.
 */
export async function writeSealedPair(
  dir: string,
  fileName: string,
  text: string,
  sealName: string,
  seal: string,
  previous: string | undefined,
): Promise<void> {
  const both = previous === undefined || previous === seal ? seal : `${seal}\n${previous}`;
  const temps = await Promise.allSettled([prepare(dir, text, true), prepare(dir, both, true)]);
  const [a, b] = temps as [PromiseSettledResult<string>, PromiseSettledResult<string>];
  if (a.status === 'rejected' || b.status === 'rejected') {
    for (const t of temps) if (t.status === 'fulfilled') await fs.unlink(t.value).catch(() => {});
    throw a.status === 'rejected' ? a.reason : (b as PromiseRejectedResult).reason;
  }
  // Each rename is made durable before the next one: POSIX does not order renames across a
  // power loss, and the pair only verifies at every moment if they reach the disk in this order
  // (a session file whose rename survived while the two-seal rename did not is SEAL_MISMATCH).
  try {
    await place(b.value, join(dir, sealName), both);
    await syncDir(fs, dir);
    await place(a.value, join(dir, fileName), text);
    await syncDir(fs, dir);
  } catch (err) {
    await fs.unlink(a.value).catch(() => {});
    await fs.unlink(b.value).catch(() => {});
    throw err;
  }
  if (both !== seal) {
    // Synced before its rename: a rename that survives a power loss without its data would
    // leave an empty seal file. Should the rename itself be lost, the two-seal file verifies.
    await place(await prepare(dir, seal, true), join(dir, sealName), seal);
    await syncDir(fs, dir);
  }
}

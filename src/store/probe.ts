/**
 * The start-up check of a state directory: one write made the way every write is (a temp file
 * created, written, fsynced and removed), so a read-only mount, a missing permission or a full
 * device stops a server before it accepts work it could not keep, instead of failing its first
 * run. Synchronous: it runs once, before serving.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DIR_MODE, errnoCode, FILE_MODE, TEMP_PREFIX } from './atomic-file.js';

/** Why a probe failed: the errno code and what it means in a sentence an operator reads. */
export interface ProbeFailure {
  readonly code: string;
  readonly reason: string;
}

const REASONS: Readonly<Record<string, string>> = {
  EROFS: 'it is on a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exhausted',
  ENOTDIR: 'a part of the path is not a directory',
  EEXIST: 'a file is in the way',
};

/**
 * Creates `dir` (0700, parents too) when missing and proves a durable write there; undefined
 * when it works, else why not. Leaves nothing behind when it can remove its temp file.
 */
export function probeWritable(dir: string): ProbeFailure | undefined {
  try {
    makeDir(dir);
    const temp = join(dir, `${TEMP_PREFIX}probe-${randomBytes(8).toString('hex')}`);
    const fd = openSync(temp, 'wx', FILE_MODE);
    try {
      writeSync(fd, 'probe\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
      try {
        unlinkSync(temp);
      } catch {
        // Left behind, it is a dot file no listing shows; the write's own error matters more.
      }
    }
    return undefined;
  } catch (err: unknown) {
    const code = errnoCode(err) ?? 'unknown error';
    return { code, reason: REASONS[code] ?? 'it cannot be written' };
  }
}

/**
 * `mkdir -p` that reports the real error: Node's recursive mkdir answers `ENOENT` for any
 * failure under a missing parent (a read-only mount included), so each level is made alone.
 */
function makeDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: DIR_MODE });
    return;
  } catch (err: unknown) {
    const code = errnoCode(err);
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT') throw err;
  }
  // The root always exists (EEXIST above), so this ends.
  makeDir(dirname(dir));
  try {
    mkdirSync(dir, { mode: DIR_MODE });
  } catch (err: unknown) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  }
}

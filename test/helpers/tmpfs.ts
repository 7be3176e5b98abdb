/**
 * A small real file system for fault tests: a tmpfs of a fixed size (full disks) or mounted
 * read-only, on a fresh temporary directory. Mounting needs root; where the machine refuses,
 * `mountTmpfs` says why, and `needMount` fails the test in CI (where the faults must be
 * tested) and skips it elsewhere with that reason.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, statfsSync, writeFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { tempDir } from './cli.js';

export interface Tmpfs {
  readonly dir: string;
  /** Remounts it read-only or read-write (as a failing disk turns read-only, then is fixed). */
  remount(readOnly: boolean): void;
  /** Unmounts (lazily, so a straggling child cannot keep it busy) and removes the mount point. */
  unmount(): void;
}

/** Mounts a tmpfs of `size` (`1m`) on a new directory; the reason when it cannot. */
export function mountTmpfs(size: string, readOnly = false): Tmpfs | string {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = tempDir('mhl-tmpfs-');
  const options = `size=${size},mode=0700${readOnly ? ',ro' : ''}`;
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    const why = mounted.error?.message ?? mounted.stderr.trim();
    return `mount -t tmpfs failed: ${why || `exit ${mounted.status}`}`;
  }
  return {
    dir,
    remount: (readOnly) => {
      const done = spawnSync('mount', ['-o', `remount,${readOnly ? 'ro' : 'rw'}`, dir], {
        encoding: 'utf8',
      });
      if (done.status !== 0) throw new Error(`remount of ${dir} failed: ${done.stderr}`);
    },
    unmount: () => {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The mounted tmpfs, unmounted after the test; undefined when the test was skipped because
 * the machine cannot mount one. Under `CI=true` that is a failure instead, so a CI machine
 * that lost the privilege does not pass the fault tests silently.
 */
export function needMount(t: TestContext, size: string, readOnly = false): Tmpfs | undefined {
  const mounted = mountTmpfs(size, readOnly);
  if (typeof mounted === 'string') {
    if (process.env['CI'] === 'true')
      throw new Error(`CI must run the storage fault tests: ${mounted}`);
    t.skip(`${mounted}; run as root to test storage faults`);
    return undefined;
  }
  t.after(() => mounted.unmount());
  return mounted;
}

/** Bytes a write may still take on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** Writes `file` of exactly `bytes` zero bytes (a filler that leaves a known amount free). */
export function writeFiller(file: string, bytes: number): void {
  writeFileSync(file, Buffer.alloc(Math.max(0, bytes)));
}

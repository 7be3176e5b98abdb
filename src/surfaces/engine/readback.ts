/**
 * Reads an attested file back from the host's project: the path must be project-relative
 * (no `..`, not absolute), no component under the project root may be a symlink (unless the
 * repository policy allows them, and then the real path must stay inside the root), the final
 * open refuses a symlink itself (`O_NOFOLLOW`), and at most `maxBytes + 1` bytes are read. The
 * answer is a code, never an error text with the server's paths in it.
 *
 * Only a regular file is read. Anything else at the path (a FIFO, a socket, a device) is refused
 * from its `lstat` before any open, and the open itself is `O_NONBLOCK`, so a FIFO swapped in after
 * the `lstat` cannot park the (single) event loop in `open(2)` waiting for a writer. After the open
 * the descriptor is checked again: a regular file, the same inode the walk saw, and (where
 * `/proc/self/fd` exists) at the real path the walk checked, which closes the window in which a
 * folder on the way is swapped for a symlink between the walk and the open.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { isProjectPath } from './release-check.js';

export type Readback =
  | { readonly ok: true; readonly bytes: Buffer }
  | {
      readonly ok: false;
      readonly code:
        | 'path_outside_project'
        | 'symlink_not_allowed'
        | 'output_attestation_required'
        | 'artifact_too_large';
    };

/** The project root as given, resolved to its real path; undefined when not an absolute dir. */
export function projectRoot(root: string): string | undefined {
  if (!isAbsolute(root)) return undefined;
  try {
    const real = realpathSync(root);
    return lstatSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The bytes of `rel` under the (real) project `root`. */
export function readBack(
  root: string,
  rel: string,
  maxBytes: number,
  allowSymlinks: boolean,
): Readback {
  if (!isProjectPath(rel)) return { ok: false, code: 'path_outside_project' };
  const parts = rel.split('/');
  let path = root;
  let stat: Stats | undefined;
  for (const part of parts) {
    path = join(path, part);
    try {
      stat = lstatSync(path);
    } catch {
      return { ok: false, code: 'output_attestation_required' };
    }
    if (stat.isSymbolicLink()) {
      if (!allowSymlinks) return { ok: false, code: 'symlink_not_allowed' };
      try {
        const real = realpathSync(path);
        if (real !== root && !real.startsWith(root + sep))
          return { ok: false, code: 'path_outside_project' };
      } catch {
        return { ok: false, code: 'output_attestation_required' };
      }
    }
  }
  const last = stat as Stats;
  // A followed symlink is checked on the descriptor below; anything else must be a file now.
  if (!last.isSymbolicLink() && !last.isFile())
    return { ok: false, code: 'output_attestation_required' };
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_RDONLY | constants.O_NONBLOCK | (allowSymlinks ? 0 : constants.O_NOFOLLOW),
    );
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      code: code === 'ELOOP' ? 'symlink_not_allowed' : 'output_attestation_required',
    };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, code: 'output_attestation_required' };
    if (!last.isSymbolicLink() && (stat.ino !== last.ino || stat.dev !== last.dev))
      return { ok: false, code: 'output_attestation_required' };
    const opened = openedPath(fd);
    if (opened !== undefined) {
      const inside = opened === root || opened.startsWith(root + sep);
      if (!inside) return { ok: false, code: 'path_outside_project' };
      if (!allowSymlinks && opened !== path) return { ok: false, code: 'symlink_not_allowed' };
    }
    if (stat.size > maxBytes) return { ok: false, code: 'artifact_too_large' };
    // Sized by the file, one byte more to see growth since the fstat; never more than allowed.
    const buffer = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) return { ok: false, code: 'artifact_too_large' };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } finally {
    closeSync(fd);
  }
}

/** The path the kernel opened `fd` at, where `/proc/self/fd` tells it (Linux); else undefined. */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // No procfs (macOS, a sandbox without /proc): the walk's checks and O_NOFOLLOW stand alone.
    return undefined;
  }
}

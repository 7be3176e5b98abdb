/**
 * Reads an attested file back from the host's project: the path must be project-relative
 * (no `..`, not absolute), no component under the project root may be a symlink (unless the
 * repository policy allows them, and then the real path must stay inside the root), the final
 * open refuses a symlink itself (`O_NOFOLLOW`), and at most `maxBytes + 1` bytes are read. The
 * answer is a code, never an error text with the server's paths in it.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
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
  for (const part of parts) {
    path = join(path, part);
    let stat: ReturnType<typeof lstatSync>;
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
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (allowSymlinks ? 0 : constants.O_NOFOLLOW));
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

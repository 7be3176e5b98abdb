/**
 * A pack as a source of files (the catalog builds it into workflows: catalog/pack.ts). Its
 * entries become a `SourceHost` rooted at `<dir>`, so every `.mh`,
 * `prompt … from`, `skill … from` and `schema … from` file is read from memory, and each file's
 * path is `<dir>/<its path in the pack>`: that is the path a schema's `.path` hands an agent,
 * composed and never materialised. Nothing here writes a file or reads a workflow from disk;
 * the only file read is the pack itself.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import type { SourceHost } from '../lang/index.js';
import { MAX_PACK_BYTES, type PackEntry } from './dmpk.js';
import { PACK_ERROR_CODES, PackError } from './errors.js';

/** Serves `entries` as files under `root`; anything else (the disk included) does not exist. */
export function packHost(root: string, entries: readonly PackEntry[]): SourceHost {
  const base = resolve(root);
  const files = new Map(entries.map((e) => [resolve(base, e.path), e.content]));
  return {
    readText(path: string): string | undefined {
      const content = files.get(path);
      if (content === undefined) return undefined;
      return Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
    },
  };
}

/**
 * Reads a pack file whole. Throws `PackError` `PACK_UNREADABLE` when it cannot be opened or is
 * not a regular file, `PACK_TOO_LARGE` past `MAX_PACK_BYTES` (checked before reading).
 */
export function readPackFile(file: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (cause) {
    throw new PackError(
      PACK_ERROR_CODES.UNREADABLE,
      `cannot open ${file}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new PackError(PACK_ERROR_CODES.UNREADABLE, `${file} is not a file`);
    if (stat.size > MAX_PACK_BYTES) {
      throw new PackError(
        PACK_ERROR_CODES.TOO_LARGE,
        `${file} is ${stat.size} bytes; a pack is at most ${MAX_PACK_BYTES}`,
      );
    }
    return readAll(fd, stat.size, file);
  } finally {
    closeSync(fd);
  }
}

/** Reads exactly `size` bytes; a file that changes size meanwhile is refused, not half-read. */
function readAll(fd: number, size: number, file: string): Buffer {
  const buffer = Buffer.alloc(size);
  let at = 0;
  try {
    while (at < size) {
      const n = readSync(fd, buffer, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    // One more byte means the file grew after fstat.
    if (at !== size || readSync(fd, Buffer.alloc(1), 0, 1, size) !== 0) {
      throw new Error('the file changed size while it was read');
    }
  } catch (cause) {
    throw new PackError(
      PACK_ERROR_CODES.UNREADABLE,
      `cannot read ${file}: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  return buffer;
}

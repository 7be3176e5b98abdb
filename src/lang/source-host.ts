/**
 * Where the language front end reads files from. The front end never calls `node:fs` itself:
 * a folder on disk and an in-memory pack are both just a `SourceHost`.
 */
import { readFileSync } from 'node:fs';

export interface SourceHost {
  /**
   * The UTF-8 text at an absolute path, or undefined when there is no such file.
   * Throws for other failures (permissions, a directory), which callers report as diagnostics.
   */
  readText(path: string): string | undefined;
}

/** Reads from the local file system. */
export const diskHost: SourceHost = {
  readText(path: string): string | undefined {
    try {
      return readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  },
};

/** Serves files from a map of absolute path → text (packs, tests). */
export function memoryHost(files: ReadonlyMap<string, string>): SourceHost {
  return { readText: (path) => files.get(path) };
}

/**
 * What a path inside a pack may look like: a plain relative POSIX path, so `<dir>/<path>` never
 * leaves `<dir>` and means the same on every platform. The packer and the reader apply the same
 * rule, so a pack `mhl pack` writes is always one the server accepts.
 */

/** Longest path, in UTF-8 bytes: the format stores its length as a u16. */
export const MAX_PATH_BYTES = 0xffff;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `path` cannot be a pack path, or undefined when it can. */
export function packPathProblem(path: string): string | undefined {
  if (path === '') return 'is empty';
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  if (CONTROL.test(path)) return 'contains a control character';
  if (LONE_SURROGATE.test(path)) return 'is not valid Unicode';
  if (path.includes('\\')) return 'contains a backslash (separate segments with "/")';
  if (path.startsWith('/')) return 'is absolute';
  for (const segment of path.split('/')) {
    if (segment === '') return 'has an empty segment';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment`;
  }
  return undefined;
}

/** Orders paths by their UTF-8 bytes, the order `mhl pack` writes entries in. */
export function comparePackPaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

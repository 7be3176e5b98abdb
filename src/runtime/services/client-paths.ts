/**
 * Rewrites the server's absolute paths in a message meant for a client: files under the served
 * folder (or the run's working directory) become relative to it, and the temporary and home
 * folders become `$TMPDIR` and `~`, so an error, a diagnostic or a log line never tells a client
 * where the server keeps its files.
 *
 * Pure text work on known folders: it never guesses at other absolute-looking text (a path the
 * workflow's author wrote, a URL), and never touches the file system.
 */
import { homedir, tmpdir } from 'node:os';

/** The folders a message is made relative to, most specific first. */
export interface ClientPathRoots {
  /** The served folder: files under it are shown relative to it. */
  readonly root: string;
  /** The run's working directory: files under it (and not under `root`) are shown relative to it. */
  readonly cwd?: string;
}

/** `text` with every absolute path under one of the roots (or tmp or home) made relative. */
export function clientPaths(text: string, roots: ClientPathRoots): string {
  let out = text;
  const rewrites: (readonly [string, string])[] = [[roots.root, '']];
  if (roots.cwd !== undefined) rewrites.push([roots.cwd, '']);
  rewrites.push([tmpdir(), '$TMPDIR/'], [homedir(), '~/']);
  for (const [dir, as] of rewrites) out = rewriteUnder(out, trimSlash(dir), as);
  return out;
}

/** A `clientPaths` bound to `roots`, or the identity when there are none (a local `mhl run`). */
export function clientPathsFor(roots: ClientPathRoots | undefined): (text: string) => string {
  return roots === undefined ? (text) => text : (text) => clientPaths(text, roots);
}

function rewriteUnder(text: string, dir: string, as: string): string {
  // `/` itself (or an empty folder) would rewrite every path: such a root says nothing.
  if (dir.length <= 1 || !text.includes(dir)) return text;
  const escaped = dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A whole path only: not the tail of a longer path, and not `/srv/app2` for `/srv/app`.
  // A dot ends the path unless a name goes on after it (`/srv/app.mh` is not `/srv/app`).
  const pattern = new RegExp(`(?<![\\w./-])${escaped}(/|(?![\\w-]|\\.\\w))`, 'g');
  const bare = as === '' ? '.' : as.slice(0, -1);
  return text.replace(pattern, (_match, slash: string) => (slash === '/' ? as : bare));
}

function trimSlash(dir: string): string {
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

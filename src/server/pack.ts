/**
 * The serve side of `--workflows-pack`: the key is taken out of the process environment before
 * anything else runs, and the catalog is built from the decrypted pack in memory, rooted at
 * `<dir>` (which need not exist). A failed pack check becomes one start-up problem naming the
 * check, so the server exits 1 before it listens. Nothing here writes a file.
 */
import { resolve } from 'node:path';
import { type CatalogResult, loadPackCatalog } from '../catalog/index.js';
import { PackError, parseWorkflowsKey, readPackFile, takeWorkflowsKey } from '../pack/index.js';

/**
 * Removes `MHL_SERVE_WORKFLOWS_KEY` from `process.env` (so no child process inherits it and
 * `env()` cannot read it) and returns its text. Call it first thing, pack or no pack.
 */
export function takeServeKey(): string | undefined {
  return takeWorkflowsKey(process.env);
}

/**
 * Builds the catalog from the pack at `file` under `keyText`, with `<root>/<path in the pack>`
 * as each file's path. Never throws for a bad key or pack: a failed check comes back as one
 * `UNREADABLE` problem whose message starts with the check's `PACK_…` code.
 */
export function loadServedPack(
  file: string,
  root: string,
  keyText: string | undefined,
): CatalogResult {
  const path = resolve(file);
  let key: Buffer | undefined;
  try {
    key = parseWorkflowsKey(keyText);
    return loadPackCatalog(readPackFile(path), key, root);
  } catch (e) {
    if (!(e instanceof PackError)) throw e;
    const message = `workflows pack ${file}: ${e.code}: ${e.message}`;
    return {
      ok: false,
      problems: [{ code: 'UNREADABLE', message, files: [path] }],
      warnings: [],
      texts: new Map(),
    };
  } finally {
    key?.fill(0);
  }
}

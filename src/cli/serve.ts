/**
 * `mhl serve mcp [DIR]`: reads the configuration once (flags, then `MHL_SERVE_*`), loads every
 * workflow under DIR (or from a DMPK pack) once, assembles the server (`createServer`) and
 * serves it on stdio or, with `--http`, over Streamable HTTP. Exit status: 0 after a clean
 * shutdown; 1 for a folder that does not load, an invalid setup, a bind failure or an expired
 * shutdown budget; 2 for bad flags.
 */
import { loadCatalog } from '../catalog/index.js';
import {
  createServer,
  loadServedPack,
  readServeConfig,
  type ServeFlags,
  serveStdio,
  takeServeKey,
} from '../server/index.js';
import { reportCatalogProblems } from './files.js';
import type { Output } from './lint.js';

export type ServeOptions = ServeFlags;

/** Runs `mhl serve mcp`; resolves to the exit status. */
export async function runServe(
  dir: string | undefined,
  options: ServeOptions,
  io: Output,
  version: string,
): Promise<number> {
  // First, before any child or workflow can run: no one after this point sees the key.
  const packKey = takeServeKey();
  const read = readServeConfig(dir, options, process.env);
  if (!read.ok) {
    io.err(`mhl serve mcp: ${read.message}`);
    return read.exit;
  }
  const { config } = read;
  const loaded =
    config.workflowsPack === undefined
      ? loadCatalog(config.root)
      : loadServedPack(config.workflowsPack, config.root, packKey);
  if (!loaded.ok) {
    reportCatalogProblems(loaded, io, 'mhl serve mcp');
    return 1;
  }
  const created = createServer(config, { catalog: loaded.catalog, version, env: process.env });
  if (!created.ok) {
    io.err(`mhl serve mcp: ${created.problem}`);
    return 1;
  }
  if (config.http === undefined) return serveStdio(created.server);
  // The HTTP half loads only when serving HTTP.
  const { serveHttp } = await import('../server/serve-http.js');
  return serveHttp(created.server, io);
}

/**
 * `mhl serve mcp [DIR]` and `mhl serve a2a [DIR]`: reads the configuration once (flags, then `MHL_SERVE_*`), loads every
 * workflow under DIR (or from a DMPK pack) once, assembles the server (`createServer`) and
 * serves it on stdio or, with `--http`, over Streamable HTTP. Exit status: 0 after a clean
 * shutdown; 1 for a folder that does not load, an invalid setup, a bind failure or an expired
 * shutdown budget; 2 for bad flags.
 */
import { join } from 'node:path';
import {
  type CachedCatalogResult,
  type CacheFallback,
  type CatalogResult,
  loadCatalog,
  loadCatalogCached,
  type ServedSources,
} from '../catalog/index.js';
import { checkerVersions } from '../lang/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { CAPABILITY_TTL_MS, Vault, vaultPaths } from '../secrets/index.js';
import {
  CATALOG_PROFILES,
  createServer,
  emptyCatalog,
  findDeclaredStore,
  loadServedPack,
  openServeStore,
  readServeConfig,
  type ServeFlags,
  type ServerSecrets,
  type ServeStore,
  serveStdio,
  takeServeEngineKey,
  takeServeKey,
} from '../server/index.js';
import { cacheRoot } from '../store/index.js';
import { buildId } from './build-id.js';
import { reportCatalogProblems } from './files.js';
import type { Output } from './lint.js';

export type ServeOptions = ServeFlags & {
  /** False with `--no-catalog-cache`: check the folder afresh and leave the cache alone. */
  readonly catalogCache?: boolean;
};

/**
 * On a catalog cache hit, the programs calls need are loaded this long after start-up, once the
 * first exchange (discover or initialize, tools/list) has been answered; a call that comes
 * earlier loads them itself.
 */
const MATERIALISE_DELAY_MS = 200;

/** Runs `mhl serve mcp` (or `mhl serve a2a`, HTTP only); resolves to the exit status. */
export async function runServe(
  dir: string | undefined,
  options: ServeOptions,
  io: Output,
  version: string,
  command: 'mcp' | 'a2a' = 'mcp',
): Promise<number> {
  const name = `mhl serve ${command}`;
  // First, before any child or workflow can run: no one after this point sees the key.
  const packKey = takeServeKey();
  const engineKey = takeServeEngineKey();
  const read = readServeConfig(dir, options, process.env, command);
  if (!read.ok) {
    io.err(`${name}: ${read.message}`);
    return read.exit;
  }
  const { config } = read;
  const logger = createLogger(config.logLevel);
  // A profile that does not serve `.mh` workflows reads DIR itself when it is built.
  const catalogProfile = CATALOG_PROFILES.has(config.profile);
  const pack = config.workflowsPack;
  const folder =
    catalogProfile && pack === undefined
      ? loadFolder(config.root, options, version, fallbackTo(logger, io))
      : undefined;
  const loaded =
    folder !== undefined
      ? folder.result
      : catalogProfile && pack !== undefined
        ? loadServedPack(pack, config.root, packKey)
        : ({ ok: true, catalog: emptyCatalog(config.root) } as const);
  if (!loaded.ok) {
    reportCatalogProblems(loaded, io, name);
    return 1;
  }
  const catalog = loaded.catalog;
  const secrets = serverSecrets(process.env);
  if (typeof secrets === 'string') {
    io.err(`${name}: ${secrets}`);
    return 2;
  }
  let store: ServeStore | undefined;
  const declared =
    pack === undefined
      ? findDeclaredStore(config.root, process.env, folder?.sources)
      : ({ kind: 'none' } as const);
  if (declared.kind === 'problem') {
    io.err(`${name}: ${declared.problem}`);
    return 1;
  }
  // `--store` wins over a declaration, as flags win over the environment.
  const source =
    config.store !== undefined
      ? { url: config.store, origin: '--store' }
      : declared.kind === 'store'
        ? declared.source
        : undefined;
  if (source !== undefined) {
    const opened = await openServeStore(
      source,
      {
        singleReplica: config.singleReplica,
        leaseTtlMs: config.runLockTtlMs,
        ...(config.replicaId !== undefined ? { replicaId: config.replicaId } : {}),
      },
      logger,
    );
    if (!opened.ok) {
      io.err(`${name}: ${opened.problem}`);
      return 1;
    }
    store = opened.opened;
  }
  // A2A is HTTP only: its surface loads only when serving HTTP.
  const a2a =
    config.http === undefined ? {} : { a2a: (await import('../surfaces/a2a/index.js')).a2aSurface };
  const parts = {
    catalog,
    version,
    env: process.env,
    logger,
    engineKey,
    secrets,
    ...a2a,
    ...(store !== undefined ? { store } : {}),
  };
  const created = createServer(config, parts);
  if (!created.ok) {
    await store?.store.close();
    io.err(`${name}: ${created.problem}`);
    return 1;
  }
  if (config.http === undefined) return serveStdio(created.server);
  // The HTTP half loads only when serving HTTP.
  const { serveHttp } = await import('../server/serve-http.js');
  return serveHttp(created.server, io);
}

/**
 * The user's vault (`$XDG_CONFIG_HOME/mhl`, docs/secrets.md), and the setup links' lifetime:
 * ten minutes, or shorter with `MHL_SECRETS_CAPABILITY_TTL_MS` (0 makes every link expire at
 * once, which is how the tests see an expired link without waiting). A refusal as text.
 */
function serverSecrets(env: NodeJS.ProcessEnv): ServerSecrets | string {
  const vault = new Vault(vaultPaths(env));
  const ttl = env['MHL_SECRETS_CAPABILITY_TTL_MS'];
  if (ttl === undefined || ttl === '') return { vault };
  const ms = /^\d{1,7}$/.test(ttl) ? Number(ttl) : Number.NaN;
  if (!(ms <= CAPABILITY_TTL_MS)) {
    return `MHL_SECRETS_CAPABILITY_TTL_MS must be whole milliseconds from 0 to ${CAPABILITY_TTL_MS}`;
  }
  return { vault, capabilityTtlMs: ms };
}

/**
 * The folder's catalog, through the catalog cache unless it is off (`--no-catalog-cache`,
 * `MHL_NO_CACHE`) or the build is unknown (the CLI run outside its launcher).
 */
function loadFolder(
  root: string,
  options: ServeOptions,
  version: string,
  onFallback: (fallback: CacheFallback) => void,
): { readonly result: CatalogResult; readonly sources?: ServedSources | undefined } {
  const cache = cacheRoot(process.env);
  const build = buildId();
  const dependencies = checkerVersions();
  if (
    options.catalogCache === false ||
    cache === undefined ||
    build === undefined ||
    dependencies === undefined
  ) {
    return { result: loadCatalog(root) };
  }
  const loaded: CachedCatalogResult = loadCatalogCached(root, {
    dir: join(cache, 'catalogs'),
    version,
    buildId: build,
    dependencies,
    onFallback,
  });
  if (loaded.cache === 'hit') setTimeout(loaded.materialise, MATERIALISE_DELAY_MS).unref();
  return loaded;
}

/**
 * What a server does when a cache hit's programs could not be loaded: it logs why and serves
 * from the fresh load of the folder; when that fresh load fails, it does what a start without
 * the cache does (reports the problems, exits 1), since nothing has run on the catalog yet.
 */
function fallbackTo(logger: Logger, io: Output): (fallback: CacheFallback) => void {
  return ({ entry, reason, error, result }) => {
    const fields = { code: 'CATALOG_CACHE_FALLBACK', reason, entry, loaded: result.ok };
    logger.warn(
      error === undefined ? fields : { ...fields, err: error },
      'catalog cache entry dropped',
    );
    if (result.ok) return;
    reportCatalogProblems(result, io, 'mhl serve mcp');
    process.exit(1);
  };
}

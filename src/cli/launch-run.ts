/**
 * The launcher's work once a command needs the CLI (launch.ts): compile the bundle with the code
 * cache for this command, arrange for a missing or refused entry to be written, and run it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';
// cache-file directly, not the store's index: the index would load the write worker and the
// stores on every command's way to its first line of work.
import { cacheKey, cacheRoot, readCacheEntry, writeCacheEntry } from '../store/cache-file.js';
import { BUILD_ID } from './build-id.js';

/** A long-running command (a server) writes its entry this long after start, once it is serving. */
const WRITE_DELAY_MS = 2000;
const COMMANDS = new Set(['lint', 'run', 'test', 'serve', 'pack', 'lsp', 'service']);
/**
 * The commands that serve calls until stopped. V8's allocation-site pretenuring tenured the run
 * object of every call (createRun's literal) once the first calls outlived a scavenge; each
 * later call's run, born old, then kept everything it points to alive through every scavenge
 * until the next mark-compact (about 5 KB a call), and those objects' own sites looked as if
 * they survived and were tenured too. A server's calls die young, so it allocates young; see
 * docs/benchmarks.md, "Third round".
 */
const SERVERS = new Set<string | undefined>(['serve', 'service']);

const bundleUrl = new URL('./mhl-main.cjs', import.meta.url);
/**
 * The SHA-256 of the bundle, which scripts/bundle.mjs computes once when it writes the bundle
 * and defines here, so a start does not hash 2.5 MB again (1.5 to 2 ms of every command). Outside
 * the bundled launcher (dist/cli/launch.js run directly) it is undefined and the bytes are hashed.
 */
declare const __MHL_BUNDLE_SHA256: string | undefined;
const builtDigest = typeof __MHL_BUNDLE_SHA256 === 'string' ? __MHL_BUNDLE_SHA256 : undefined;
const dynamicImports = (vm.constants as typeof vm.constants | undefined)
  ?.USE_MAIN_CONTEXT_DEFAULT_LOADER;

/** Runs the CLI bundle for `process.argv`. */
export function launch(): void {
  run(readFileSync(bundleUrl));
}

function run(source: Buffer): void {
  const root = cacheRoot(process.env);
  const dir = root === undefined ? undefined : join(root, 'code');
  const command = COMMANDS.has(process.argv[2] ?? '') ? process.argv[2] : 'other';
  // A bundle edited after the build keeps the old digest; V8 still refuses a cache whose source
  // length differs, and `npm run build` writes both files together.
  const key = cacheKey(['mhl-code-cache', process.version, process.arch, builtDigest ?? source]);
  const name = `${key}-${command}.bin`;
  const cachedData = dir === undefined ? undefined : readCacheEntry(dir, name);
  const filename = fileURLToPath(bundleUrl);
  // Before anything is compiled, so the code cache of this command is made under the same flags.
  if (SERVERS.has(command)) setFlagsFromString('--no-allocation-site-pretenuring');
  // scripts/bundle.mjs writes the bundle in ASCII: latin1 reads it without a UTF-8 decode.
  const script = new vm.Script(source.toString('latin1'), {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
    // The bundle makes no import() of its own (esbuild turned them into requires); should a
    // dependency make one, it resolves as in any module. `vm.constants` is Node 20.12+.
    ...(dynamicImports === undefined ? {} : { importModuleDynamically: dynamicImports }),
  });
  if (dir !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      writeCacheEntry(dir, name, script.createCachedData());
    };
    setTimeout(write, WRITE_DELAY_MS).unref();
    process.once('exit', write);
  }
  // The catalog cache keys on the code that checks and projects, not only on mhl's version.
  (globalThis as Record<symbol, unknown>)[BUILD_ID] = key;
  // The wrapper scripts/bundle.mjs puts around the bundle: a CommonJS module's arguments, plus
  // the URL that stands for `import.meta.url` (the bundle sits where dist/bin/mhl.js did).
  const main = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
    importMetaUrl: string,
  ) => void;
  const module = { exports: {} };
  main(
    module.exports,
    createRequire(bundleUrl),
    module,
    filename,
    dirname(filename),
    bundleUrl.href,
  );
}

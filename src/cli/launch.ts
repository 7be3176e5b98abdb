#!/usr/bin/env node
/**
 * The `mhl` executable (bundled to dist/bin/mhl.js; the work is launch-run.ts): runs the CLI bundle (dist/bin/mhl-main.cjs,
 * every command in one script) through `vm.Script` with V8's code cache. Node 20 has no compile
 * cache of its own for modules, and compiling the ~1.4 MB bundle, then each function it calls on
 * the way to a first answer, is a third of a stdio server's start-up; with the cache V8 reads
 * that bytecode back instead (bench/serve-startup.bench.mjs, docs/serve.md "Start-up time").
 *
 * One entry per command (`serve`, `lint`, …: each warms different functions), keyed by the
 * bundle's bytes, the Node version and the architecture; written once, when the entry was
 * missing or V8 refused it, after the command has done its first work. `MHL_NO_CACHE=1` turns it
 * off. Knows nothing of what the commands do.
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // What commander prints for it, without loading crypto, vm and ~1.4 MB of script first.
  process.stdout.write(`${version()}\n`);
} else {
  // Bundled lazily (esbuild): its imports load only on this path. No top-level await: the
  // launcher is a CommonJS script.
  void import('./launch-run.js').then(({ launch }) => launch());
}

function version(): string {
  const url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

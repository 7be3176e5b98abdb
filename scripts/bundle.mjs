// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/mhl.js plus the chunks of
// the commands it imports lazily. Loading ~150 ES modules file by file is most of a stdio
// server's start-up time; one file per command loads in a third of it. Ajv and yaml stay
// outside the bundle because they are loaded on first use (src/lang/lazy-modules.ts).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'dist/bin';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { mhl: 'dist/cli/main.js' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['ajv', 'ajv/*', 'yaml'],
  // CommonJS dependencies (commander, pino) call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module';\nconst require = createRequireForBundle(import.meta.url);",
  },
  logLevel: 'warning',
});

// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/mhl.js plus the chunks of
// the commands it imports lazily. Loading ~150 ES modules file by file is most of a stdio
// server's start-up time; one file per command loads in a third of it. Ajv and yaml stay
// outside the bundle because they are loaded on first use (src/lang/lazy-modules.ts).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

// esbuild escapes non-ASCII characters in code (charset ascii) but keeps comments as written. A
// single `→` in a comment makes V8 hold that whole file's source as UTF-16, twice the bytes, for
// as long as the process runs (the source stays in the heap for lazy compilation): about 1 MB
// of a server's heap for the comments of the bundled libraries and our own. Escaping them keeps
// every source one byte per character; a `\uXXXX` means the same in a string, a template, a
// regular expression or an identifier, and is harmless in a comment.
for (const file of readdirSync(outdir)) {
  if (!file.endsWith('.js')) continue;
  const path = join(outdir, file);
  const text = readFileSync(path, 'utf8');
  const ascii = text.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  if (ascii !== text) writeFileSync(path, ascii);
}

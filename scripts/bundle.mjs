// Bundles the compiled CLI (dist/, from tsc) into two files:
//   - dist/bin/mhl-main.cjs: every command in one script, wrapped in a function that takes a
//     CommonJS module's arguments plus the URL standing for `import.meta.url`. Loading ~150 ES
//     modules file by file was most of a stdio server's start-up; one script costs a third of
//     it, and a script (unlike an ES module on Node 20) can use V8's code cache.
//   - dist/bin/mhl.js: the launcher (src/cli/launch.ts, CommonJS) that compiles that script with
//     the code cache and runs it.
// Ajv and yaml stay outside the bundle because they are loaded on first use
// (src/lang/lazy-modules.ts); so do the language server's libraries (only `mhl lsp` loads them),
// undici (only an http call with `tls` or `proxy` does), the MCP and A2A client SDKs (only a
// workflow calling an `extension mcp` or `extension a2a` does) and pg (only a PostgreSQL store
// loads it, src/store/postgres.ts): every start reads the bundle, so code most commands never
// run should not be in it. zod's translated error messages are left out: mhl never selects a
// locale, and the 64 of them were a third of the bundle's bytes.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const outdir = 'dist/bin';
rmSync(outdir, { recursive: true, force: true });

/** Replaces zod's locale index (`z.locales`, unused) with the English one zod configures itself. */
const onlyEnglishZod = {
  name: 'only-english-zod',
  setup(b) {
    const require = createRequire(import.meta.url);
    const english = require.resolve('zod/v4/locales/en.js');
    b.onResolve({ filter: /locales\/index\.js$/ }, (args) =>
      args.importer.includes('/zod/')
        ? { path: 'zod-locales', namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(english)};`,
      loader: 'js',
      resolveDir: '.',
    }));
  },
};

await build({
  entryPoints: ['dist/cli/main.js'],
  outfile: `${outdir}/mhl-main.cjs`,
  charset: 'ascii',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: [
    'ajv',
    'ajv/*',
    'yaml',
    'undici',
    'pg',
    'pg/*',
    '@modelcontextprotocol/client',
    '@a2a-js/sdk',
    '@a2a-js/sdk/*',
    'vscode-languageserver',
    'vscode-languageserver/*',
    'vscode-languageserver-textdocument',
  ],
  define: { 'import.meta.url': '__mhlImportMetaUrl' },
  plugins: [onlyEnglishZod],
  // The sources are ES modules, strict by definition; the script must stay strict too.
  banner: {
    js: '(function (exports, require, module, __filename, __dirname, __mhlImportMetaUrl) {"use strict";',
  },
  footer: { js: '})' },
  logLevel: 'warning',
});

// esbuild escapes every non-ASCII character of code (charset: ascii) but copies comments as they
// are. Escaping theirs too keeps the file ASCII, so the launcher decodes it as latin1 (a copy, not
// a UTF-8 decode of 1.4 MB) into a one-byte string, and V8 holds the source (kept in the heap for
// lazy compilation as long as the process runs) at one byte per character instead of two: about
// 1 MB of every server's heap. Outside comments nothing is left to change.
const mainFile = `${outdir}/mhl-main.cjs`;
const text = readFileSync(mainFile, 'utf8');
const ascii = text.replace(
  /[\u0080-\uffff]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
);
writeFileSync(mainFile, ascii);
// The launcher keys the code cache on this digest instead of hashing the bundle at every start.
const bundleDigest = createHash('sha256').update(ascii, 'latin1').digest('hex');

// The launcher is CommonJS too: an ES module entry point loads Node's ES module loader first
// (~8 ms, measured as `node x.mjs` against `node x.cjs`). dist/bin/package.json says so, so the
// file keeps the name package.json's `bin` gives it.
writeFileSync(`${outdir}/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
await build({
  entryPoints: { mhl: 'dist/cli/launch.js' },
  outdir,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  define: {
    'import.meta.url': '__mhlLauncherUrl',
    __MHL_BUNDLE_SHA256: JSON.stringify(bundleDigest),
  },
  banner: { js: "const __mhlLauncherUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

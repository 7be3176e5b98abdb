#!/usr/bin/env node
/**
 * Builds the public m2ux/workflow-server from a git snapshot into `.cache/workflow-server/`
 * (never into src/, never committed), for the side-by-side test and bench/sessions.bench.mjs.
 *
 *   node scripts/build-workflow-server.mjs [GIT_DIR]
 *
 * GIT_DIR defaults to $WORKFLOW_SERVER_GIT, then /work/.mirror/m2ux+workflow-server/repo (a bare
 * snapshot). Its `src/` and `tsconfig.json` are exported with `git archive`, and compiled with
 * this repository's `tsc` against this repository's node_modules (linked, not installed). Two
 * build-time adjustments, none in the snapshot's logic: its `zod` ^3 imports are pointed at
 * `zod/v3` (the v3 API that zod 4 ships), `@types/express` (absent here) is replaced by an `any`
 * module declaration, and the 3 s checkpoint response minimum (a config option its own tests set
 * to 0) also reads `WS_MIN_RESPONSE_SECONDS`. Prints the path of the built entry point on stdout.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const gitDir =
  process.argv[2] ?? process.env.WORKFLOW_SERVER_GIT ?? '/work/.mirror/m2ux+workflow-server/repo';
const out = join(repo, '.cache', 'workflow-server');
if (!existsSync(gitDir)) {
  process.stderr.write(`build-workflow-server: no snapshot at ${gitDir}\n`);
  process.exit(1);
}
const commit = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'HEAD'], {
  encoding: 'utf8',
}).trim();
const stamp = join(out, 'COMMIT');
if (
  existsSync(stamp) &&
  readFileSync(stamp, 'utf8') === commit &&
  existsSync(join(out, 'dist', 'index.js'))
) {
  process.stdout.write(`${join(out, 'dist', 'index.js')}\n`);
  process.exit(0);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tar = execFileSync('git', [
  '--git-dir',
  gitDir,
  'archive',
  'HEAD',
  'src',
  'tsconfig.json',
  'package.json',
  'schemas',
]);
execFileSync('tar', ['-x', '-C', out], { input: tar });
symlinkSync(join(repo, 'node_modules'), join(out, 'node_modules'));
for (const file of walk(join(out, 'src'))) {
  if (!file.endsWith('.ts')) continue;
  const text = readFileSync(file, 'utf8');
  const patched = text
    .replace(/from (['"])zod\1/g, "from 'zod/v3'")
    // The response minimum its own tests set to 0 through config, made settable from outside.
    .replace(
      'config.minCheckpointResponseSeconds ?? 3',
      'config.minCheckpointResponseSeconds ?? Number(process.env.WS_MIN_RESPONSE_SECONDS ?? 3)',
    );
  if (patched !== text) writeFileSync(file, patched);
}
writeFileSync(join(out, 'src', 'express-shim.d.ts'), "declare module 'express';\n");
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(out, 'tsconfig.json')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
} catch (error) {
  // tsc emits despite type errors (noEmitOnError is off); report them, fail only without output.
  const text = `${error.stdout ?? ''}${error.stderr ?? ''}`;
  process.stderr.write(
    `build-workflow-server: tsc reported type errors:\n${text.slice(0, 4000)}\n`,
  );
  if (!existsSync(join(out, 'dist', 'index.js'))) process.exit(1);
}
writeFileSync(stamp, commit);
process.stdout.write(`${join(out, 'dist', 'index.js')}\n`);

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

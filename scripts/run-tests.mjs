// Runs every test/**/*.test.ts file with node's test runner, through tsx so TypeScript runs as is.
// Node 20's --test does not expand globs itself, so the files are listed here. Extra arguments
// (e.g. a file or folder) narrow the run. MHL_TEST_TIMEOUT_MS overrides the per-test bound
// (0: none; `npm run fuzz` lifts it, its properties run for minutes).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry !== 'fixtures' && entry !== 'node_modules') collect(join(path, entry), out);
    }
  } else if (path.endsWith('.test.ts')) {
    out.push(path);
  }
  return out;
}

const roots = process.argv.slice(2);
const files = (roots.length ? roots : ['test']).flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const timeout = process.env.MHL_TEST_TIMEOUT_MS || '120000';
if (!/^\d+$/.test(timeout)) {
  console.error(`MHL_TEST_TIMEOUT_MS must be a number of milliseconds, got ${timeout}`);
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  // A test that waits on an event that never comes fails after two minutes instead of hanging CI.
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    ...(timeout === '0' ? [] : [`--test-timeout=${timeout}`]),
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

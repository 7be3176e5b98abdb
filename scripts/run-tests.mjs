// Runs every test/**/*.test.ts file with node's test runner, through tsx so TypeScript runs as is.
// Node 20's --test does not expand globs itself, so the files are listed here. Extra arguments
// (e.g. a file or folder) narrow the run.
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
const result = spawnSync(
  process.execPath,
  // A test that waits on an event that never comes fails after two minutes instead of hanging CI.
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=120000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

// Runs every *.bench.mjs in this folder in its own process, one after another (they share two
// cores; running them together would measure contention). Build first: benchmarks use dist/.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
for (const file of readdirSync(here).sort()) {
  if (!file.endsWith('.bench.mjs') || (only && !file.includes(only))) continue;
  const result = spawnSync(process.execPath, [join(here, file)], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

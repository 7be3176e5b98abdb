// `npm run fuzz`: the property tests of test/fuzz with a large count (FUZZ_RUNS, default
// 20000 per property) and no per-test timeout. Every failure prints its seed and shrink path;
// `FUZZ_SEED=<seed> FUZZ_PATH=<path> npm run fuzz -- test/fuzz/<file>` replays it. Extra
// arguments narrow the run to files or folders, as with `npm test`.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const runs = process.env.FUZZ_RUNS || '20000';
const roots = process.argv.slice(2);
const result = spawnSync(
  process.execPath,
  [join(import.meta.dirname, 'run-tests.mjs'), ...(roots.length ? roots : ['test/fuzz'])],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      FUZZ_RUNS: runs,
      MHL_TEST_TIMEOUT_MS: process.env.MHL_TEST_TIMEOUT_MS || '0',
    },
  },
);
process.exit(result.status ?? 1);

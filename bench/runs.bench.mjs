// Async runs: how many runs of a 10-step no-op workflow are started and completed per second
// over HTTP, with --state-dir (state on the given disk) and without (a temporary directory), side
// by side in one run; then the memory a server holds for 1,000 terminal runs (RSS growth after
// they all completed). One JSON line per figure. Build first: this runs dist/.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, serveHttp, writeNoop } from './lib/noop-server.mjs';

const RUNS = 300;
const CONCURRENCY = 16;

const held = process.argv[2] === '--held';
const folder = held ? process.argv[3] : mkdtempSync(join(tmpdir(), 'mhl-bench-runs-'));
if (!held) writeNoop(folder);

/** Starts a run and polls it to completion. */
async function oneRun(port) {
  const { runId } = await call(port, 'run/start', {
    name: 'Noop',
    arguments: { context: { cwd: folder } },
  });
  for (;;) {
    const view = await call(port, 'run/status', { runId });
    if (view.state === 'completed') return;
    if (view.state !== 'working' && view.state !== 'queued') throw new Error(JSON.stringify(view));
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function throughput(args) {
  const { child, port } = await serveHttp(folder, args);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < RUNS) await oneRun(port);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  child.kill('SIGTERM');
  return RUNS / seconds;
}

/**
 * Heap retained by 1,000 completed runs in a registry (in a child with --expose-gc, so the
 * figure is live objects after a full collection, not garbage the GC has not reclaimed yet).
 */
function heldByTerminalRuns() {
  const child = spawn(
    process.execPath,
    ['--expose-gc', fileURLToPath(import.meta.url), '--held', folder],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((done, fail) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.on('close', (code) =>
      code === 0 ? done(JSON.parse(out)) : fail(new Error(`exit ${code}`)),
    );
  });
}

async function measureHeld(dir) {
  const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
  const { loadCatalog } = await import(dist('catalog/index.js'));
  const { RunRegistry } = await import(dist('runs/registry.js'));
  const { Admission } = await import(dist('runs/admission.js'));
  const { MemoryStore } = await import(dist('store/index.js'));
  const { createLogger } = await import(dist('log/logger.js'));
  const { checkWorkflowCall } = await import(dist('runs/call-context.js'));
  const loaded = loadCatalog(dir);
  const limits = { defaultCwd: dir, defaultTimeoutMs: 60_000, requireCwd: false };
  const registry = new RunRegistry({
    catalog: loaded.catalog,
    store: new MemoryStore(),
    admission: new Admission(32),
    logger: createLogger('silent'),
    services: { childEnv: {}, env: {}, cacheRoot: tmpdir() },
    check: (workflow, args) => {
      const { inputs, call } = checkWorkflowCall(workflow, args, limits);
      return { inputs, cwd: call.cwd };
    },
  });
  const owner = { owner: 'bench' };
  const settle = async (runId) => {
    while ((await registry.status(runId, owner)).state !== 'completed')
      await new Promise((r) => setImmediate(r));
  };
  await settle((await registry.start('Noop', {}, owner)).runId);
  global.gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 1000; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: 50 }, () => registry.start('Noop', {}, owner)),
    );
    await Promise.all(batch.map((v) => settle(v.runId)));
  }
  global.gc();
  const after = process.memoryUsage().heapUsed;
  // The run records and checkpoints sit in the memory store here; a dir store keeps them on disk.
  return {
    bench: 'runs',
    figure: 'heap_kib_held_by_1000_terminal_runs',
    value: Math.round((after - before) / 1024),
    note: 'includes their records in an in-memory store',
  };
}

if (held) {
  console.log(JSON.stringify(await measureHeld(folder)));
  process.exit(0);
}

const state = mkdtempSync(join(tmpdir(), 'mhl-bench-state-'));
const withDir = await throughput(['--state-dir', state]);
const withoutDir = await throughput([]);
console.log(
  JSON.stringify({
    bench: 'runs',
    figure: 'runs_per_s_state_dir',
    runs: RUNS,
    value: +withDir.toFixed(1),
  }),
);
console.log(
  JSON.stringify({
    bench: 'runs',
    figure: 'runs_per_s_temp_dir',
    runs: RUNS,
    value: +withoutDir.toFixed(1),
  }),
);
console.log(
  JSON.stringify({
    bench: 'runs',
    figure: 'state_dir_vs_temp_ratio',
    value: +(withDir / withoutDir).toFixed(2),
  }),
);

console.log(JSON.stringify(await heldByTerminalRuns()));
rmSync(state, { recursive: true, force: true });
rmSync(folder, { recursive: true, force: true });

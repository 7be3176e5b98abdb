// Replicas on PostgreSQL (issue 12), in one run: runs/s of a 10-step no-op workflow over HTTP on
// the dir store (--state-dir), on PostgreSQL with one replica and with three (a client
// round-robins its starts and polls over them); checkpoint write p50/p99 on each store (the
// dir store's atomic file write, PostgreSQL's fenced upsert, and three writers at once); and the
// time from a replica's SIGKILL to another reporting its run failed + resumable (lease TTL 2 s).
// Goal: PostgreSQL with one replica at least 0.8x the dir store's runs/s. Needs the database
// at MHL_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test). Build first: dist/.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, serveHttp, writeNoop } from './lib/noop-server.mjs';

const PG_URL = process.env.MHL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUNS = 200;
const CONCURRENCY = 16;
const WRITES = 400;
const schema = `mhl_bench_${randomBytes(4).toString('hex')}`;
const folder = mkdtempSync(join(tmpdir(), 'mhl-bench-replicas-'));
writeNoop(folder);
writeFileSync(
  join(folder, 'hold.mh'),
  'pipeline Hold {\n  input dir: string\n  step Wait {\n    cmd.exec(["sh", "-c", "while [ ! -e \\"$0/go\\" ]; do sleep 0.05; done", dir])\n  }\n}\n',
);
const children = [];

function serve(args, env = {}) {
  return serveHttp(folder, args, env, (child) => children.push(child));
}

/** Starts a run on one replica and polls it to completion on the next ones in turn. */
async function oneRun(ports, turn) {
  const at = (k) => ports[(turn + k) % ports.length];
  const { runId } = await call(at(0), 'run/start', {
    name: 'Noop',
    arguments: { context: { cwd: folder } },
  });
  for (let k = 1; ; k++) {
    const view = await call(at(k), 'run/status', { runId });
    if (view.state === 'completed') return;
    if (view.state !== 'working' && view.state !== 'queued') throw new Error(JSON.stringify(view));
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function throughput(argsOf, replicas) {
  const servers = await Promise.all(Array.from({ length: replicas }, (_, i) => serve(argsOf(i))));
  const ports = servers.map((s) => s.port);
  await oneRun(ports, 0);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < RUNS) await oneRun(ports, next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const s of servers) s.child.kill('SIGTERM');
  return RUNS / seconds;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** Checkpoint-sized writes (a ~1 KiB JSON record), `writers` at once; p50/p99 in ms. */
async function writeLatency(put, writers) {
  const value = JSON.stringify({ state_version: 2, variables: { text: 'x'.repeat(900) } });
  const times = [];
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < WRITES / writers; i++) {
        const started = performance.now();
        await put(w, `state/${w}${'0'.repeat(31)}/Noop.json`, value);
        times.push(performance.now() - started);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { p50: +percentile(times, 0.5).toFixed(2), p99: +percentile(times, 0.99).toFixed(2) };
}

async function checkpointWrites() {
  const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
  const { DirStore } = await import(dist('store/index.js'));
  const { openPostgresStore } = await import(dist('store/postgres.js'));
  const dir = new DirStore(mkdtempSync(join(tmpdir(), 'mhl-bench-dirstore-')));
  const out = { dir: await writeLatency((_, k, v) => dir.put(k, v), 1) };
  const stores = await Promise.all(
    [0, 1, 2].map(() => openPostgresStore({ dsn: PG_URL, table: `${schema}.writes` })),
  );
  const leases = await Promise.all(
    stores.map((s, i) => s.lease.acquire(`w${i}`, `replica-${i}`, 60_000)),
  );
  const fenced = (w, k, v) => stores[w].fence.putFenced(k, v, leases[w]);
  out.postgres_1 = await writeLatency(fenced, 1);
  out.postgres_3 = await writeLatency(fenced, 3);
  await Promise.all(stores.map((s) => s.close()));
  return out;
}

/** SIGKILL of the executing replica → another reports the run failed + resumable. */
async function deathToResumable() {
  const store = `${PG_URL}?table=${schema}.death`;
  const env = { MHL_SERVE_RUN_LOCK_TTL: '2s' };
  const [a, b] = await Promise.all([
    serve(['--store', store], env),
    serve(['--store', store], env),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'mhl-bench-hold-'));
  const { runId } = await call(a.port, 'run/start', { name: 'Hold', arguments: { dir } });
  while ((await call(b.port, 'run/status', { runId })).state !== 'working') {
    await new Promise((r) => setTimeout(r, 10));
  }
  const killed = performance.now();
  a.child.kill('SIGKILL');
  for (;;) {
    const view = await call(b.port, 'run/status', { runId });
    if (view.state === 'failed' && view.resumable) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - killed;
  writeFileSync(join(dir, 'go'), '');
  b.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

async function dropSchema() {
  const { Client } = createRequire(import.meta.url)('pg');
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

try {
  const state = mkdtempSync(join(tmpdir(), 'mhl-bench-state-'));
  const dirRate = await throughput(() => ['--state-dir', state], 1);
  const pg1 = await throughput(() => ['--store', `${PG_URL}?table=${schema}.one`], 1);
  const pg3 = await throughput(() => ['--store', `${PG_URL}?table=${schema}.three`], 3);
  for (const [figure, value] of [
    ['runs_per_s_dir', dirRate],
    ['runs_per_s_postgres_1_replica', pg1],
    ['runs_per_s_postgres_3_replicas', pg3],
  ]) {
    console.log(
      JSON.stringify({ bench: 'replicas', figure, runs: RUNS, value: +value.toFixed(1) }),
    );
  }
  const writes = await checkpointWrites();
  for (const [store, { p50, p99 }] of Object.entries(writes)) {
    console.log(
      JSON.stringify({ bench: 'replicas', figure: `checkpoint_write_ms_${store}`, p50, p99 }),
    );
  }
  const death = await deathToResumable();
  console.log(
    JSON.stringify({
      bench: 'replicas',
      figure: 'death_to_resumable_ms',
      ttl_ms: 2000,
      value: Math.round(death),
    }),
  );
  const ratio = pg1 / dirRate;
  console.log(
    JSON.stringify({
      bench: 'replicas',
      goal: 'postgres with 1 replica >= 0.8x the dir store runs/s',
      value: +ratio.toFixed(2),
      goal_met: ratio >= 0.8,
    }),
  );
  rmSync(state, { recursive: true, force: true });
} finally {
  for (const child of children) child.kill('SIGKILL');
  await dropSchema().catch(() => {});
  rmSync(folder, { recursive: true, force: true });
  if (existsSync(folder)) process.exitCode = 1;
}

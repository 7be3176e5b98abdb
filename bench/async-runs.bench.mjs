// Async runs with --state-dir: runs/s of a 10-step no-op workflow, 16 clients each starting a run
// (`run/start`) and polling `run/status` until it completes, over HTTP against `mhl serve mcp
// --http`; beside it, in the same run, the fsyncs each run costs, counted for real with strace on
// the server during a second batch, and the bare fsync rate of the same disk. The state dir is
// under bench/out/ so fsync reaches the real disk, not a tmpfs. One JSON line per figure, then a
// goal line for fsyncs per run. Build first: this runs dist/.
//
//   node bench/async-runs.bench.mjs [--target N]   (N: the fsyncs per run the goal line checks)
import { spawn } from 'node:child_process';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, startMhl } from './lib/mhl-http.mjs';

const RUNS = 300;
const TRACED_RUNS = 100;
const CONCURRENCY = 16;
const BARE_FSYNCS = 500;
/** The fsyncs a run costs after the cuts docs/runs.md describes ("What each fsync protects"). */
const TARGET = Number(process.argv[process.argv.indexOf('--target') + 1]) || 17;

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, 'out', `async-runs-${process.pid}`);
const folder = join(root, 'flows');
const state = join(root, 'state');
const line = (figure, value, extra = {}) =>
  console.log(JSON.stringify({ bench: 'async-runs', figure, value, ...extra }));

/** Starts a run and polls it to completion. */
async function oneRun(http) {
  const started = await http.modern('run/start', {
    name: 'Noop',
    arguments: { context: { cwd: folder } },
  });
  const runId = started.json?.result?.runId;
  if (!runId) throw new Error(`run/start: ${started.text}`);
  for (;;) {
    const { json, text } = await http.modern('run/status', { runId });
    const view = json?.result;
    if (view?.state === 'completed') return;
    if (view?.state !== 'working' && view?.state !== 'queued') throw new Error(text);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Runs `runs` runs on `CONCURRENCY` clients; resolves with the seconds it took. */
async function batch(http, runs) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < runs) await oneRun(http);
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Attaches strace to every thread of `pid`; resolves once it traces, with a stop function. */
function traceFsyncs(pid) {
  const out = join(root, 'strace.txt');
  const child = spawn('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync', '-o', out, '-p', pid], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((done, fail) => {
    let err = '';
    child.on('error', fail);
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      if (/attached/.test(err)) done(stop);
    });
    const stop = () =>
      new Promise((stopped) => {
        child.once('close', () => stopped(parseCounts(out)));
        child.kill('SIGINT');
      });
  });
}

/** `{fsync, fdatasync}` call counts from an `strace -c` summary. */
function parseCounts(file) {
  const counts = { fsync: 0, fdatasync: 0 };
  // Rows are "% time, seconds, usecs/call, calls, [errors,] syscall": calls is the fourth field.
  for (const row of readFileSync(file, 'utf8').split('\n')) {
    const fields = row.trim().split(/\s+/);
    const name = fields.at(-1);
    if (name === 'fsync' || name === 'fdatasync') counts[name] = Number(fields[3]);
  }
  return counts;
}

/** Sequential write + fsync of one 4 KiB block on the state dir's disk: fsyncs per second. */
function bareFsyncRate() {
  const fd = openSync(join(state, 'bare-fsync'), 'w', 0o600);
  const block = Buffer.alloc(4096, 1);
  const started = performance.now();
  for (let i = 0; i < BARE_FSYNCS; i++) {
    writeSync(fd, block, 0, block.length, 0);
    fsyncSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  rmSync(join(state, 'bare-fsync'));
  return BARE_FSYNCS / seconds;
}

rmSync(root, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });
mkdirSync(state, { recursive: true });
const steps = Array.from({ length: 10 }, (_, i) => `  step S${i} { n += 1 }`).join('\n');
writeFileSync(join(folder, 'noop.mh'), `pipeline Noop {\n  var n = 0\n${steps}\n}\n`);

const server = await startMhl({ folder, args: ['--state-dir', state] });
const http = client({ port: server.port });
try {
  await batch(http, 32); // warm-up
  const seconds = await batch(http, RUNS);
  const bare = bareFsyncRate();
  const stop = await traceFsyncs(server.pid);
  const tracedSeconds = await batch(http, TRACED_RUNS);
  const counts = await stop();
  const perRun = (counts.fsync + counts.fdatasync) / TRACED_RUNS;
  line('runs_per_s', +(RUNS / seconds).toFixed(1), { runs: RUNS, clients: CONCURRENCY });
  line('fsyncs_per_run', +perRun.toFixed(2), { runs: TRACED_RUNS, ...counts });
  line('bare_fsyncs_per_s', Math.round(bare), { fsyncs: BARE_FSYNCS });
  line('fsync_bound_runs_per_s', +(bare / perRun).toFixed(1), {
    note: 'bare fsync rate / fsyncs per run: the ceiling of one fsync at a time',
  });
  line('runs_per_s_traced', +(TRACED_RUNS / tracedSeconds).toFixed(1), {
    note: 'under strace, slower; for the count only',
  });
  console.log(
    JSON.stringify({
      bench: 'async-runs',
      goal: 'fsyncs_per_run',
      value: +perRun.toFixed(2),
      target: TARGET,
      goal_met: perRun <= TARGET,
    }),
  );
} finally {
  http.close();
  await server.stop();
  rmSync(root, { recursive: true, force: true });
}

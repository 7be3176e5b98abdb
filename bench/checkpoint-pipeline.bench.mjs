// Per-step checkpoint cost of a real run: a 1,000-step no-op pipeline run with checkpoints on,
// minus the same run with `checkpoint: {enabled: false}`, per step; beside it, in the same run,
// a bare write+fsync+rename (and + directory fsync) of the same checkpoint bytes 1,000 times,
// with synchronous calls (no thread hand-off at all), and the same loop on a worker thread
// behind each of two hand-offs (the floors of any design that keeps fsync off the event loop).
// One JSON line per figure (the median of ROUNDS rounds), then the ratios and the goal line
// (issue 11: at most 1.5 times the bare write). Build first: this imports dist/.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { diskHost } from '../dist/lang/index.js';
import { CheckpointStore } from '../dist/runtime/checkpoints/checkpoints.js';
import { loadProgram } from '../dist/runtime/pipeline/program.js';
import { runPipeline } from '../dist/runtime/pipeline/runner.js';
import { childEnvironment } from '../dist/runtime/services/child-env.js';
import { Redactor } from '../dist/runtime/services/redact.js';
import { DirStore } from '../dist/store/index.js';

const STEPS = 1000;
const ROUNDS = 5;
/** A tmpfs on most Linux machines. */
const SHM = '/dev/shm';
// Under bench/out/, so fsync reaches the real disk even where /tmp is a tmpfs.
const out = join(dirname(fileURLToPath(import.meta.url)), 'out');
mkdirSync(out, { recursive: true });
const root = mkdtempSync(join(out, 'checkpoint-pipeline-'));

function source(enabled) {
  const steps = Array.from({ length: STEPS }, (_, i) => `  step S${i} { n += 1 }`).join('\n');
  return `pipeline Noop {\n  checkpoint: { enabled: ${enabled} }\n  var n = 0\n  var label = "a no-op pipeline"\n  var items = [1, 2, 3]\n${steps}\n}\n`;
}

async function timeRun(enabled, under = root) {
  const dir = mkdtempSync(join(under, 'run-'));
  const file = join(dir, 'noop.mh');
  writeFileSync(file, source(enabled));
  const loaded = loadProgram(file, diskHost);
  if (!loaded.ok) throw new Error(loaded.diagnostics[0].message);
  const redactor = new Redactor();
  const state = new CheckpointStore(new DirStore(join(dir, '.mhl')), redactor);
  const services = {
    cwd: dir,
    childEnv: childEnvironment(),
    env: {},
    redactor,
    output: () => {},
    cacheDir: join(dir, 'cache'),
  };
  const started = process.hrtime.bigint();
  const outcome = await runPipeline(loaded.program, loaded.pipelines[0], {
    inputs: {},
    signal: new AbortController().signal,
    services,
    state,
    session: 'bench',
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (outcome.status !== 'completed')
    throw new Error(`run ${outcome.status}: ${outcome.error?.message}`);
  return { seconds, dir };
}

function bareWrites(bytes, syncDir, under = root) {
  const dir = mkdtempSync(join(under, 'bare-'));
  const target = join(dir, 'Noop.json');
  const started = process.hrtime.bigint();
  for (let i = 0; i < STEPS; i++) {
    const tmp = join(dir, `.tmp-${i}`);
    const fd = openSync(tmp, 'w', 0o600);
    writeSync(fd, bytes);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, target);
    if (syncDir) {
      const d = openSync(dir, 'r');
      fsyncSync(d);
      closeSync(d);
    }
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

// The same bare loop, one write at a time on a minimal worker thread that the main thread
// awaits (one message each way): the least any design pays that keeps fsync off the event
// loop, as issue 11 requires. What it adds over the inline loop is the hand-off alone, no
// checkpoint code at all; it bounds from below what `checkpoint_cost_per_step_us` can reach.
const HANDOFF_WORKER = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
parentPort.on('message', ({ tmp, target, bytes }) => {
  const fd = fs.openSync(tmp, 'w', 0o600);
  fs.writeSync(fd, bytes);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, target);
  parentPort.postMessage(0);
});`;
const handoff = new Worker(HANDOFF_WORKER, { eval: true });
await new Promise((resolve) => handoff.once('online', resolve));

async function bareOnWorker(bytes, under = root) {
  const dir = mkdtempSync(join(under, 'worker-'));
  const target = join(dir, 'Noop.json');
  const data = Buffer.from(bytes);
  const started = process.hrtime.bigint();
  for (let i = 0; i < STEPS; i++) {
    const done = new Promise((resolve) => handoff.once('message', resolve));
    handoff.postMessage({ tmp: join(dir, `.tmp-${i}`), target, bytes: data });
    await done;
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

// The same floor with the hand-off the write worker uses (src/store/write-worker.ts): no message
// at all, the paths and bytes copied into a shared region, the worker asleep in Atomics.wait, the
// main thread awaiting Atomics.waitAsync. The least a design like the store's can pay.
const SAB_WORKER = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const control = new Int32Array(workerData.control);
const region = Buffer.from(workerData.region);
for (;;) {
  const state = Atomics.load(control, 0);
  if (state !== 1) {
    Atomics.wait(control, 0, state);
    continue;
  }
  const tmpLen = control[1];
  const targetLen = control[2];
  const tmp = region.toString('utf8', 0, tmpLen);
  const target = region.toString('utf8', tmpLen, tmpLen + targetLen);
  const fd = fs.openSync(tmp, 'w', 0o600);
  fs.writeSync(fd, region, tmpLen + targetLen, control[3]);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, target);
  Atomics.store(control, 0, 2);
  Atomics.notify(control, 0);
}`;
const sabControl = new Int32Array(new SharedArrayBuffer(16));
const sabRegion = Buffer.from(new SharedArrayBuffer(64 * 1024));
const sabHandoff = new Worker(SAB_WORKER, {
  eval: true,
  workerData: { control: sabControl.buffer, region: sabRegion.buffer },
});
await new Promise((resolve) => sabHandoff.once('online', resolve));

async function bareOnSabWorker(bytes, under = root) {
  const dir = mkdtempSync(join(under, 'sab-'));
  const target = join(dir, 'Noop.json');
  const data = Buffer.from(bytes);
  const started = process.hrtime.bigint();
  for (let i = 0; i < STEPS; i++) {
    const tmp = join(dir, `.tmp-${i}`);
    const tmpLen = sabRegion.write(tmp, 0);
    const targetLen = sabRegion.write(target, tmpLen);
    sabRegion.set(data, tmpLen + targetLen);
    sabControl[1] = tmpLen;
    sabControl[2] = targetLen;
    sabControl[3] = data.length;
    Atomics.store(sabControl, 0, 1);
    Atomics.notify(sabControl, 0);
    const wait = Atomics.waitAsync(sabControl, 0, 1);
    if (wait.async) await wait.value;
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

// A representative checkpoint's bytes, captured from a paused copy of the same pipeline.
const sample = JSON.stringify(
  {
    pipeline: 'Noop',
    last_step: 'S499',
    next_step: 'S500',
    completed_steps: Array.from({ length: 500 }, (_, i) => `S${i}`),
    variables: {
      __last_step: 'S499',
      __mem: {},
      items: [1, 2, 3],
      label: 'a no-op pipeline',
      n: 500,
    },
    saved_at: new Date().toISOString(),
    ttl_seconds: 0,
    digest: 'x'.repeat(64),
    state_version: 1,
  },
  null,
  2,
);

/** The middle value (the upper one of an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// Rounds of the four measurements back to back, so each ratio compares figures taken under the
// same load of a shared disk; the figures printed are medians over the rounds.
await timeRun(true); // warm-up (and the write worker starts)
const rounds = [];
let lastDir;
for (let round = 0; round < ROUNDS; round++) {
  const on = await timeRun(true);
  const off = await timeRun(false);
  const bare = bareWrites(sample, false);
  const bareDir = bareWrites(sample, true);
  const onWorker = await bareOnWorker(sample);
  const onSabWorker = await bareOnSabWorker(sample);
  lastDir = on.dir;
  const perStepUs = ((on.seconds - off.seconds) / STEPS) * 1e6;
  rounds.push({
    on: (on.seconds / STEPS) * 1e6,
    off: (off.seconds / STEPS) * 1e6,
    cost: perStepUs,
    bare: (bare / STEPS) * 1e6,
    bareDir: (bareDir / STEPS) * 1e6,
    onWorker: (onWorker / STEPS) * 1e6,
    onSabWorker: (onSabWorker / STEPS) * 1e6,
    floor: onWorker / bare,
    sabFloor: onSabWorker / bare,
    ratio: perStepUs / ((bare / STEPS) * 1e6),
    ratioDir: perStepUs / ((bareDir / STEPS) * 1e6),
  });
}
const pick = (name) => median(rounds.map((r) => r[name]));
const figures = [
  { figure: 'run_with_checkpoints_per_step_us', value: pick('on') },
  { figure: 'run_without_checkpoints_per_step_us', value: pick('off') },
  { figure: 'checkpoint_cost_per_step_us', value: pick('cost') },
  { figure: 'bare_write_fsync_rename_us', value: pick('bare') },
  { figure: 'bare_write_fsync_rename_dirsync_us', value: pick('bareDir') },
  { figure: 'bare_write_on_worker_us', value: pick('onWorker') },
  { figure: 'bare_write_on_worker_sab_us', value: pick('onSabWorker') },
];
for (const f of figures)
  console.log(
    JSON.stringify({
      bench: 'checkpoint-pipeline',
      ...f,
      value: Math.round(f.value),
      rounds: ROUNDS,
    }),
  );
// The same on a tmpfs, where fsync costs nothing: what a checkpoint adds to the disk's own time
// (the hand-off to another thread and the CPU of the record), free of the shared disk's noise.
if (existsSync(SHM)) {
  const shm = mkdtempSync(join(SHM, 'mhl-bench-ckpt-'));
  try {
    const overheads = [];
    const bares = [];
    const onWorkers = [];
    const onSabWorkers = [];
    for (let round = 0; round < ROUNDS; round++) {
      const on = await timeRun(true, shm);
      const off = await timeRun(false, shm);
      overheads.push(((on.seconds - off.seconds) / STEPS) * 1e6);
      bares.push((bareWrites(sample, false, shm) / STEPS) * 1e6);
      onWorkers.push(((await bareOnWorker(sample, shm)) / STEPS) * 1e6);
      onSabWorkers.push(((await bareOnSabWorker(sample, shm)) / STEPS) * 1e6);
      rmSync(on.dir, { recursive: true, force: true });
    }
    const overhead = median(overheads);
    for (const [figure, value] of [
      ['checkpoint_cost_on_tmpfs_us', overhead],
      ['bare_write_on_tmpfs_us', median(bares)],
      ['bare_write_on_worker_on_tmpfs_us', median(onWorkers)],
      ['bare_write_on_worker_sab_on_tmpfs_us', median(onSabWorkers)],
    ])
      console.log(
        JSON.stringify({
          bench: 'checkpoint-pipeline',
          figure,
          value: Math.round(value),
          rounds: ROUNDS,
        }),
      );
    console.log(
      JSON.stringify({
        bench: 'checkpoint-pipeline',
        figure: 'ratio_vs_bare_from_tmpfs_cost',
        value: +((pick('bare') + overhead - median(bares)) / pick('bare')).toFixed(2),
        note: '(bare on disk + cost on tmpfs - bare on tmpfs) / bare on disk: a second opinion',
      }),
    );
  } finally {
    rmSync(shm, { recursive: true, force: true });
  }
}
const ratio = +pick('ratio').toFixed(2);
console.log(
  JSON.stringify({ bench: 'checkpoint-pipeline', figure: 'ratio_vs_bare', value: ratio }),
);
console.log(
  JSON.stringify({
    bench: 'checkpoint-pipeline',
    figure: 'ratio_bare_on_worker_vs_bare',
    value: +pick('floor').toFixed(2),
    note: 'the hand-off alone (a message each way): the floor of ratio_vs_bare for writes kept off the event loop',
  }),
);
console.log(
  JSON.stringify({
    bench: 'checkpoint-pipeline',
    figure: 'ratio_bare_on_worker_sab_vs_bare',
    value: +pick('sabFloor').toFixed(2),
    note: "the same with the store's hand-off (shared memory, Atomics.wait/waitAsync): its floor",
  }),
);
console.log(
  JSON.stringify({
    bench: 'checkpoint-pipeline',
    figure: 'ratio_vs_bare_dirsync',
    value: +pick('ratioDir').toFixed(2),
  }),
);
console.log(
  JSON.stringify({
    bench: 'checkpoint-pipeline',
    figure: 'checkpoint_bytes_last',
    value: readFileSync(join(lastDir, '.mhl/state/bench/result.json')).length,
  }),
);
console.log(
  JSON.stringify({
    bench: 'checkpoint-pipeline',
    goal: 'checkpoint_step_over_bare_write',
    value: ratio,
    target: 1.5,
    goal_met: ratio <= 1.5,
  }),
);
await handoff.terminate();
await sabHandoff.terminate();
rmSync(root, { recursive: true, force: true });

// Two (or more) mhl builds side by side on checkpoint-pipeline's real run: a 1,000-step no-op
// pipeline with checkpoints on, minus the same run with them off, per step, every build loaded
// into this one process (each with its own write worker) and their runs alternating (ABAB, then
// BABA). Besides wall time it prints what moves less with a shared machine's load: the event
// loop's busy time (`performance.eventLoopUtilization`), the main thread's own CPU time
// (/proc/thread-self/schedstat: time on a CPU, not time preempted) and the process's CPU over
// all threads (`process.cpuUsage`), each the median of the rounds. On a tmpfs by default, where
// the disk adds nothing. Not part of run-all: a tool for A/B work. Build each tree first.
//
//   npm run build && node bench/checkpoint-ab.mjs --baseline=<other worktree> \
//     [--rounds=12] [--dir=/dev/shm]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROUNDS = Number(flag('rounds') ?? 12);
const UNDER = flag('dir') ?? '/dev/shm';
const STEPS = 1000;
const TREES = [
  { name: 'this', root: fileURLToPath(new URL('..', import.meta.url)) },
  ...(flag('baseline') ? [{ name: 'baseline', root: resolve(flag('baseline')) }] : []),
];

/** Nanoseconds the calling thread has spent on a CPU. */
const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);

async function load(tree) {
  const from = (path) => import(pathToFileURL(join(tree.root, 'dist', path)).href);
  return {
    ...tree,
    diskHost: (await from('lang/index.js')).diskHost,
    CheckpointStore: (await from('runtime/checkpoints/checkpoints.js')).CheckpointStore,
    loadProgram: (await from('runtime/pipeline/program.js')).loadProgram,
    runPipeline: (await from('runtime/pipeline/runner.js')).runPipeline,
    childEnvironment: (await from('runtime/services/child-env.js')).childEnvironment,
    Redactor: (await from('runtime/services/redact.js')).Redactor,
    DirStore: (await from('store/index.js')).DirStore,
  };
}

function source(enabled) {
  const steps = Array.from({ length: STEPS }, (_, i) => `  step S${i} { n += 1 }`).join('\n');
  return `pipeline Noop {\n  checkpoint: { enabled: ${enabled} }\n  var n = 0\n  var label = "a no-op pipeline"\n  var items = [1, 2, 3]\n${steps}\n}\n`;
}

/** One run of `build`; per step: wall µs, event-loop busy µs, main-thread CPU µs, process CPU µs. */
async function timeRun(build, enabled) {
  const dir = mkdtempSync(join(UNDER, 'mhl-ckpt-ab-'));
  try {
    const file = join(dir, 'noop.mh');
    writeFileSync(file, source(enabled));
    const loaded = build.loadProgram(file, build.diskHost);
    if (!loaded.ok) throw new Error(loaded.diagnostics[0].message);
    const redactor = new build.Redactor();
    const state = new build.CheckpointStore(new build.DirStore(join(dir, '.mhl')), redactor);
    const services = {
      cwd: dir,
      childEnv: build.childEnvironment(),
      env: {},
      redactor,
      output: () => {},
      cacheDir: join(dir, 'cache'),
    };
    const elu = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const main = threadNs();
    const started = process.hrtime.bigint();
    const outcome = await build.runPipeline(loaded.program, loaded.pipelines[0], {
      inputs: {},
      signal: new AbortController().signal,
      services,
      state,
      session: 'bench',
    });
    const wall = Number(process.hrtime.bigint() - started) / 1e3;
    const mainUs = (threadNs() - main) / 1e3;
    const busy = performance.eventLoopUtilization(elu).active * 1e3;
    const used = process.cpuUsage(cpu);
    if (outcome.status !== 'completed') throw new Error(`run ${outcome.status}`);
    return [wall, busy, mainUs, used.user + used.system].map((v) => v / STEPS);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const builds = [];
for (const tree of TREES) builds.push(await load(tree));
// Warm-up: every build's write worker started, its code compiled.
for (const build of builds) for (const on of [true, false, true]) await timeRun(build, on);
const costs = builds.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  const order = builds.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const i of order) {
    const on = await timeRun(builds[i], true);
    const off = await timeRun(builds[i], false);
    costs[i].push(on.map((v, k) => v - (off[k] ?? 0)));
  }
}
const FIGURES = ['cost_per_step_us', 'event_loop_busy_us', 'main_thread_cpu_us', 'process_cpu_us'];
for (const [i, build] of builds.entries()) {
  const line = { bench: 'checkpoint-ab', build: build.name, root: build.root, rounds: ROUNDS };
  for (const [k, figure] of FIGURES.entries())
    line[figure] = Math.round(median(costs[i].map((c) => c[k])));
  console.log(JSON.stringify(line));
}

// Start-up, measured as a user restarting a server sees it. Every figure is the median of RUNS
// spawns, the variants interleaved round by round (bare, cold, warm, bare, …) so a load spike on
// the shared machine hits all of them alike; read the differences, not the absolute times.
//   - bare: a node process that answers one line on stdin (the floor for any stdio server);
//   - `mhl serve mcp` on 100 and 1,000 generated workflows, spawn to the server/discover answer
//     (2026-07-28 era), with a cold cache (a fresh empty MHL_CACHE_DIR per spawn: no code cache,
//     no catalog cache) and a warm one (the cache the previous start of the same folder left);
//   - a tools/call sent right behind the discover (warm, 100 workflows);
//   - `mhl --version` and `mhl lint examples` to exit, beside `node -e 0` to exit.
// The goals apply to the warm start: a server is restarted far more often than its folder or
// mhl itself changes, and a restart is what a user waits for. One JSON line per figure, then one
// goal line each. `--baseline=PATH` (another build's dist/bin/mhl.js) also times that build's
// warm starts, interleaved with the rest, as `baseline_minus_bare_ms` lines: a before and after
// in one run. Build first: this runs dist/.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISCOVER_LINE, MODERN_META, writeWorkflows } from './lib/startup-fixture.mjs';

const RUNS = Number(process.env.MHL_BENCH_RUNS ?? 11);
const CLI = fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url));
const BASELINE = process.argv.find((a) => a.startsWith('--baseline='))?.slice('--baseline='.length);
const EXAMPLES = fileURLToPath(new URL('../examples', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'mhl-bench-startup-'));

const workflows = (count) => writeWorkflows(join(scratch, `w${count}`), count);
const discover = DISCOVER_LINE;
const call = `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'Flow57', arguments: { name: 'x' }, _meta: MODERN_META } })}\n`;
const bareAnswer =
  "process.stdin.once('data', () => { process.stdout.write('{}\\n'); process.exit(0); })";

let coldSeq = 0;
/** A cache dir nobody has written to yet. */
function coldCache() {
  return join(scratch, `cold-${coldSeq++}`);
}

/**
 * CPU milliseconds a running child has used, all its threads (Linux schedstat), or NaN. On a
 * loaded shared machine wall time stretches with the load; CPU time barely moves, so it is
 * printed beside wall time as a second opinion (the goals stay on wall time).
 */
function cpuMs(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * `{ wall, cpu }`: milliseconds from spawn to the answer of `lastId` (any line when undefined),
 * or to exit, and the CPU time the child had used by its answer (NaN for `toExit`).
 */
function timeOne({ args, input, lastId, cache, toExit }) {
  return new Promise((done, fail) => {
    const env = { ...process.env };
    if (cache !== undefined) env.MHL_CACHE_DIR = typeof cache === 'function' ? cache() : cache;
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'], env });
    child.on('error', fail);
    if (toExit) {
      child.stdout.resume();
      child.on('exit', (code) =>
        code === 0 || code === 1 ? done({ wall: elapsed(), cpu: Number.NaN }) : fail(code),
      );
      child.stdin.end();
      return;
    }
    child.stdin.write(input);
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      text += d;
      const lines = text.split('\n').slice(0, -1);
      if (!lines.some((l) => lastId === undefined || JSON.parse(l).id === lastId)) return;
      const wall = elapsed();
      done({ wall, cpu: cpuMs(child.pid) });
      // End of stdin is a clean shutdown: a cold start writes its caches on the way out.
      child.stdin.end();
    });
  });
}

/** Waits for a child spawned by `timeOne` to have exited (its cache written) before the next. */
async function settle(variant) {
  const sample = await timeOne(variant);
  await new Promise((r) => setTimeout(r, 20));
  return sample;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function medians(variants) {
  const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let i = 0; i < RUNS; i++) {
    for (const [name, v] of Object.entries(variants)) samples[name].push(await settle(v));
  }
  const wall = {};
  const cpu = {};
  for (const [name, s] of Object.entries(samples)) {
    wall[name] = median(s.map((x) => x.wall));
    cpu[name] = median(s.map((x) => x.cpu));
  }
  return { wall, cpu };
}

const w100 = workflows(100);
const w1000 = workflows(1000);
const warmCache = join(scratch, 'warm');
const baseCache = join(scratch, 'baseline-warm');
const serve = (dir, cli = CLI) => [cli, 'serve', 'mcp', dir];
const bare = { args: ['-e', bareAnswer], input: discover };
// Warm the cache once per folder, as the previous start would have.
for (const dir of [w100, w1000]) {
  await settle({ args: serve(dir), input: discover, cache: warmCache });
  if (BASELINE) await settle({ args: serve(dir, BASELINE), input: discover, cache: baseCache });
}
await settle({ args: [CLI, '--version'], cache: warmCache, toExit: true });
await settle({ args: [CLI, 'lint', EXAMPLES], cache: warmCache, toExit: true });

const { wall: m, cpu } = await medians({
  bare,
  cold100: { args: serve(w100), input: discover, cache: coldCache },
  warm100: { args: serve(w100), input: discover, cache: warmCache },
  cold1000: { args: serve(w1000), input: discover, cache: coldCache },
  warm1000: { args: serve(w1000), input: discover, cache: warmCache },
  firstCall100: { args: serve(w100), input: discover + call, lastId: 2, cache: warmCache },
  nodeExit: { args: ['-e', '0'], toExit: true },
  version: { args: [CLI, '--version'], cache: warmCache, toExit: true },
  lint: { args: [CLI, 'lint', EXAMPLES], cache: warmCache, toExit: true },
  ...(BASELINE && {
    baseWarm100: { args: serve(w100, BASELINE), input: discover, cache: baseCache },
    baseWarm1000: { args: serve(w1000, BASELINE), input: discover, cache: baseCache },
  }),
});

const r = (x) => +x.toFixed(1);
const line = (o) => console.log(JSON.stringify({ bench: 'serve-startup', ...o }));
line({ figure: 'bare_node_spawn_to_answer_ms', value: r(m.bare) });
for (const [n, cold, warm] of [
  [100, m.cold100, m.warm100],
  [1000, m.cold1000, m.warm1000],
]) {
  line({ figure: 'mhl_spawn_to_discover_ms', workflows: n, cache: 'cold', value: r(cold) });
  line({ figure: 'mhl_spawn_to_discover_ms', workflows: n, cache: 'warm', value: r(warm) });
  line({ figure: 'mhl_minus_bare_ms', workflows: n, cache: 'cold', value: r(cold - m.bare) });
  line({ figure: 'mhl_minus_bare_ms', workflows: n, cache: 'warm', value: r(warm - m.bare) });
}
if (Number.isFinite(cpu.bare)) {
  line({ figure: 'bare_node_cpu_to_answer_ms', value: r(cpu.bare) });
  for (const n of [100, 1000]) {
    for (const cache of ['cold', 'warm']) {
      const over = cpu[`${cache}${n}`] - cpu.bare;
      line({ figure: 'mhl_minus_bare_cpu_ms', workflows: n, cache, value: r(over) });
    }
  }
}
line({
  figure: 'mhl_spawn_to_first_call_ms',
  workflows: 100,
  cache: 'warm',
  value: r(m.firstCall100),
});
if (Number.isFinite(cpu.firstCall100)) {
  line({
    figure: 'mhl_cpu_to_first_call_ms',
    workflows: 100,
    cache: 'warm',
    value: r(cpu.firstCall100),
  });
}
line({ figure: 'node_e0_spawn_to_exit_ms', value: r(m.nodeExit) });
line({ figure: 'mhl_version_spawn_to_exit_ms', cache: 'warm', value: r(m.version) });
line({ figure: 'mhl_version_minus_node_ms', value: r(m.version - m.nodeExit) });
line({ figure: 'mhl_lint_examples_spawn_to_exit_ms', cache: 'warm', value: r(m.lint) });
line({ figure: 'mhl_lint_examples_minus_node_ms', value: r(m.lint - m.nodeExit) });
if (BASELINE) {
  for (const n of [100, 1000]) {
    const warm = `baseWarm${n}`;
    const extra = { workflows: n, cache: 'warm', cli: BASELINE };
    line({ figure: 'baseline_minus_bare_ms', ...extra, value: r(m[warm] - m.bare) });
    if (Number.isFinite(cpu.bare)) {
      line({ figure: 'baseline_minus_bare_cpu_ms', ...extra, value: r(cpu[warm] - cpu.bare) });
    }
  }
}
for (const [goal, over, target] of [
  ['startup_100_workflows_over_bare', m.warm100 - m.bare, 50],
  ['startup_1000_workflows_over_bare', m.warm1000 - m.bare, 250],
]) {
  line({ goal, value: r(over), target, goal_met: over <= target });
}
rmSync(scratch, { recursive: true, force: true });

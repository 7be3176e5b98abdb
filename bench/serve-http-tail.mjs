// Whose tail is it? Loads the bare node:http endpoint and `mhl serve mcp --http` (modern JSON and
// SSE calls of the one-step Echo workflow) as serve-http.bench.mjs does (autocannon in this
// process, 32 keep-alive connections), and over each recorded window collects the stalls that can
// delay a request already sent:
//   server_gc    every GC pause of the server (a PerformanceObserver preloaded into it)
//   server_runq  every time the server's main thread sat runnable waiting for a CPU (perf sched)
//   client_gc    every GC pause of this process, the load generator
//   client_runq  every run-queue wait of this process's main thread (perf sched)
// Each request at or above its window's p99 is charged to the stall it overlapped longest, or to
// `none` when no stall covers a quarter of its excess over the p50. Prints one JSON line per
// target and window. Needs Linux `perf` with sched tracepoints (root); without it the run-queue
// columns are null. Not one of run-all's benchmarks:
//   npm run build && node bench/serve-http-tail.mjs [--windows=N] [--seconds=S] [--mhl=PATH]
//     [--node-flags=A,B]   (Node/V8 flags for both servers)
// See docs/benchmarks.md, serve-http, "Whose tail".
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { echoWorkspace } from './lib/echo-workspace.mjs';
import { BARE, HOST, startChild } from './lib/http-peers.mjs';

const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const WINDOWS = Number(flag('windows') ?? 3);
const SECONDS = Number(flag('seconds') ?? 3);
const CLI = resolve(flag('mhl') ?? fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url)));
const NODE_FLAGS = flag('node-flags')?.split(',').filter(Boolean) ?? [];
const CONNECTIONS = 32;
const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

const { dir, flows, cwd } = echoWorkspace('mhl-bench-tail-');

// CLOCK_MONOTONIC in ms, the clock perf sched is told to use, so both sides' intervals line up.
const mono = () => Number(process.hrtime.bigint()) / 1e6;

// Preloaded into each server: appends each GC pause as `start_ms duration_ms` (CLOCK_MONOTONIC)
// to the file in MHL_TAIL_GC.
const preload = join(dir, 'gc-log.cjs');
writeFileSync(
  preload,
  `const { PerformanceObserver, performance } = require('node:perf_hooks');
const { appendFileSync } = require('node:fs');
new PerformanceObserver((list) => {
  const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  appendFileSync(process.env.MHL_TAIL_GC, list.getEntries().map((e) => (e.startTime + offset) + ' ' + e.duration + '\\n').join(''));
}).observe({ entryTypes: ['gc'] });
`,
);

const call = (id, meta) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'Echo', arguments: { text: 'hi', context: { cwd } }, _meta: meta },
  });
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': MODERN,
  'mcp-method': 'tools/call',
  'mcp-name': 'Echo',
};

const perfWorks =
  spawnSync('perf', ['sched', 'record', '-o', join(dir, 'probe.data'), '--', 'true'], {
    stdio: 'ignore',
  }).status === 0;

/** Run-queue waits `[start_ms, ms]` of the threads `tids` in a perf sched recording. */
function runQueueWaits(data, tids) {
  const out = Object.fromEntries(tids.map((t) => [t, []]));
  const text = spawnSync('perf', ['sched', 'timehist', '-i', data], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  }).stdout;
  // `time cpu task[tid/pid] wait sch_delay run`: the task ran `run` ms up to `time`, after
  // waiting `sch_delay` ms runnable.
  const line = /^\s*([\d.]+)\s+\[\d+\]\s+.+?\[(\d+)(?:\/\d+)?\]\s+[\d.]+\s+([\d.]+)\s+([\d.]+)/;
  for (const row of text.split('\n')) {
    const m = line.exec(row);
    if (m === null || !(m[2] in out)) continue;
    const [end, delay, run] = [Number(m[1]) * 1000, Number(m[3]), Number(m[4])];
    if (delay > 0) out[m[2]].push([end - run - delay, delay]);
  }
  return out;
}

const clientGc = [];
new PerformanceObserver((list) => {
  const offset = mono() - performance.now();
  for (const e of list.getEntries()) clientGc.push([e.startTime + offset, e.duration]);
}).observe({ entryTypes: ['gc'] });

function load(port, body, seconds, record) {
  const instance = autocannon({
    url: `http://${HOST}:${port}/mcp`,
    method: 'POST',
    headers,
    body,
    idReplacement: true,
    connections: CONNECTIONS,
    duration: seconds,
  });
  if (record) {
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) record.push([mono(), ms]);
    });
  }
  return instance;
}

const overlap = (from, to, list) => {
  let sum = 0;
  for (const [start, ms] of list) {
    const end = start + ms;
    if (end > from && start < to) sum += Math.min(end, to) - Math.max(start, from);
  }
  return sum;
};
const round = (x) => Math.round(x * 100) / 100;

/** One recorded window of `target`: its figures and whom its slowest 1% are charged to. */
async function window(target, index) {
  await load(target.port, target.body, 1);
  const data = join(dir, `${target.name}-${index}.data`);
  const perf = perfWorks
    ? spawn(
        'perf',
        ['sched', 'record', '-k', 'CLOCK_MONOTONIC', '-o', data, '--', 'sleep', `${SECONDS + 1}`],
        { stdio: 'ignore' },
      )
    : undefined;
  const perfDone = perf && new Promise((done) => perf.on('close', done));
  if (perf) await new Promise((done) => setTimeout(done, 300)); // perf's own start-up
  const requests = [];
  const from = mono();
  await load(target.port, target.body, SECONDS, requests);
  const to = mono();
  await perfDone;
  const inWindow = (list) => list.filter(([start, ms]) => start + ms > from && start < to);
  const serverGc = inWindow(
    readFileSync(target.gcLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ').map(Number)),
  );
  const waits = perf ? runQueueWaits(data, [String(target.pid), String(process.pid)]) : undefined;
  const stalls = {
    server_gc: serverGc,
    server_runq: waits ? inWindow(waits[target.pid]) : null,
    client_gc: inWindow(clientGc),
    client_runq: waits ? inWindow(waits[process.pid]) : null,
  };
  const sorted = requests.map((r) => r[1]).sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  const [p50, p99] = [q(0.5), q(0.99)];
  const charged = { none: 0 };
  for (const name of Object.keys(stalls)) if (stalls[name]) charged[name] = 0;
  let slow = 0;
  for (const [end, ms] of requests) {
    if (ms < p99) continue;
    slow++;
    let best = 'none';
    let most = 0.25 * (ms - p50);
    for (const [name, list] of Object.entries(stalls)) {
      if (list === null) continue;
      const o = overlap(end - ms, end, list);
      if (o > most) [best, most] = [name, o];
    }
    charged[best]++;
  }
  const stat = (f) =>
    Object.fromEntries(Object.entries(stalls).map(([k, l]) => [k, l === null ? null : f(l)]));
  console.log(
    JSON.stringify({
      bench: 'serve-http-tail',
      server: target.name,
      window: index,
      req_per_s: Math.round(requests.length / SECONDS),
      p50_ms: round(p50),
      p99_ms: round(p99),
      p99_over_p50: round(p99 / p50),
      stall_ms: stat((l) => round(l.reduce((s, [, ms]) => s + ms, 0))),
      stall_count: stat((l) => l.length),
      longest_stall_ms: stat((l) => round(Math.max(0, ...l.map(([, ms]) => ms)))),
      at_or_above_p99: slow,
      charged_to: charged,
    }),
  );
}

const servers = [];
try {
  const bare = startChild('bare', [...NODE_FLAGS, '-r', preload, '-e', BARE], {
    ...process.env,
    MHL_TAIL_GC: join(dir, 'bare.gc'),
  });
  const mhl = startChild(
    'mhl',
    [...NODE_FLAGS, '-r', preload, CLI, 'serve', 'mcp', flows, '--http', '--port', '0'],
    {
      ...process.env,
      MHL_TAIL_GC: join(dir, 'mhl.gc'),
    },
  );
  servers.push(bare, mhl);
  for (const s of servers) writeFileSync(join(dir, `${s.name}.gc`), '');
  const [barePort, mhlPort] = [await bare.ready, await mhl.ready];
  const targets = [
    { name: 'bare', port: barePort, pid: bare.child.pid, gcLog: join(dir, 'bare.gc') },
    { name: 'modern_json', port: mhlPort, pid: mhl.child.pid, gcLog: join(dir, 'mhl.gc') },
    { name: 'modern_sse', port: mhlPort, pid: mhl.child.pid, gcLog: join(dir, 'mhl.gc') },
  ];
  targets[0].body = call('[<id>]', META);
  targets[1].body = call('[<id>]', META);
  targets[2].body = call('[<id>]', { ...META, progressToken: '[<id>]' });
  for (let i = 0; i < WINDOWS; i++) for (const target of targets) await window(target, i);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}

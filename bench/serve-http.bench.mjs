// Closed-loop HTTP load with autocannon (32 keep-alive connections, each sending its next request
// as soon as the previous answer arrives) against, in one run, each a child process on a free
// port of 127.0.0.1, in three rounds of one 1 s warm-up and one recorded 3 s window per target
// (a target's line: the median rate of its windows, latencies over all of them, and the server's
// own CPU per answered request, which other work on the shared cores barely moves):
//   bare     a bare node:http endpoint that parses the body and answers a JSON-RPC result
//   sdk-v1   official SDK v1 stateless (StreamableHTTPServerTransport, fresh server per request)
//   sdk-v2   official SDK v2 (createMcpHandler, modern requests)
//   mhl      `mhl serve mcp --http` on a one-step Echo workflow, in four modes: modern
//            (2026-07-28, no session) and legacy (2025-11-25 initialize + Mcp-Session-Id), each
//            answered as JSON, and as SSE (`_meta.progressToken` + `Accept: text/event-stream`:
//            one progress event, then the response)
// Every reply's status is checked (non-2xx, socket errors and timeouts count as errors); before
// each load one call's body is checked whole (a 200 carrying the result, in the expected form).
// One JSON line per figure, then the goal lines. Latency figures are the median over the windows
// of each window's p50 and p99 (and of its p99/p50, the goal's figure), as the rate is: one burst
// of other work on the shared cores lands in one window, and the pooled p99 (`p99_pooled_ms`) is
// that window's. Beside them, whose time a window lost: `server_runq_wait_pct`, the share of it
// the server's main thread sat runnable waiting for a CPU, and `client_loop_delay_p99_ms`, the
// load generator's own event-loop lateness (autocannon runs in this process).
// Flags: `--client=node` loads with the older node:http client loop instead (a second opinion,
// heavier on the shared CPU, and checking every body); `--client=wrk` with wrk (C, one thread, no
// collector: what is left of the tail is not a JS client's); `--pin` puts every server on CPU 1
// and the load generator on CPU 0; `--node-flags=A,B` passes Node/V8 flags to every server alike;
// `--rounds=N` (3); `--mhl=PATH` serves another build's CLI; `--baseline=PATH` also loads a
// second mhl build (figures only, named `base-…`) in the same run, to compare builds. Build
// first: this runs dist/. Whose tail it is, stall by stall: serve-http-tail.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { echoWorkspace } from './lib/echo-workspace.mjs';
import { checkReply, Histogram, nodeLoad } from './lib/http-loop.mjs';
import { BARE, HOST, sdkV1Source, sdkV2Source, startChild } from './lib/http-peers.mjs';

const CONNECTIONS = 32;
const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ROUNDS = Number(flag('rounds') ?? 3);
const WARMUP_S = 1;
const DURATION_S = 3;
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const CLIENT = flag('client') ?? 'autocannon';
if (!['autocannon', 'node', 'wrk'].includes(CLIENT))
  throw new Error(`--client=${CLIENT}: autocannon, node or wrk`);
// `--pin`: every server on CPU 1, the load generator on CPU 0 (taskset), so neither is moved onto
// the other's core. Off by default: on a machine shared with other work it lengthened the tail
// (a pinned process cannot leave a core another job is busy on); see docs/benchmarks.md.
const PIN = process.argv.includes('--pin');
const CLI = resolve(flag('mhl') ?? fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url)));
const BASELINE = flag('baseline');

const { dir, flows, cwd } = echoWorkspace('mhl-bench-http-');

const ACCEPT = 'application/json, text/event-stream';
const JSON_TYPE = 'application/json';
/** A `tools/call` of Echo; `meta` is its `_meta` (none for a legacy JSON call). */
const call = (id, meta) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'Echo',
      arguments: { text: 'hi', context: { cwd } },
      ...(meta === undefined ? {} : { _meta: meta }),
    },
  });
const modernHeaders = {
  'content-type': JSON_TYPE,
  accept: ACCEPT,
  'mcp-protocol-version': MODERN,
  'mcp-method': 'tools/call',
  'mcp-name': 'Echo',
};

/** Opens a legacy session on `port`: initialize, then notifications/initialized. */
async function openSession(port) {
  const url = `http://${HOST}:${port}/mcp`;
  const post = (body, headers = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': JSON_TYPE, accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'bench', version: '1' },
    },
  });
  await init.text();
  const id = init.headers.get('mcp-session-id');
  if (init.status !== 200 || id === null) throw new Error(`initialize answered ${init.status}`);
  const headers = { 'mcp-session-id': id, 'mcp-protocol-version': LEGACY };
  const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  await note.text();
  return headers;
}

/** The four mhl modes on `port`, named `PREFIX…`. */
async function mhlTargets(prefix, port, pid) {
  const legacy = await openSession(port);
  const legacyHeaders = { 'content-type': JSON_TYPE, accept: ACCEPT, ...legacy };
  const progress = (id) => ({ ...META, progressToken: id });
  const targets = [
    { name: `${prefix}modern_json`, port, headers: modernHeaders, body: (id) => call(id, META) },
    {
      name: `${prefix}modern_sse`,
      port,
      headers: modernHeaders,
      body: (id) => call(id, progress(id)),
      streamed: true,
    },
    { name: `${prefix}legacy_json`, port, headers: legacyHeaders, body: (id) => call(id) },
    {
      name: `${prefix}legacy_sse`,
      port,
      headers: legacyHeaders,
      body: (id) => call(id, { progressToken: id }),
      streamed: true,
    },
  ];
  for (const target of targets) target.pid = pid;
  return targets;
}

/** One checked call of `target` before it is loaded, so a 200 that is not a result is caught. */
async function check(target) {
  const id = `check-${target.name}`;
  const res = await fetch(`http://${HOST}:${target.port}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: target.body(id),
  });
  const error = checkReply(
    res.status,
    res.headers.get('content-type') ?? undefined,
    await res.text(),
    id,
    target.streamed === true,
  );
  if (error !== null) throw new Error(`${target.name}: ${error}`);
}

/** One autocannon window over `target`; latencies of 2xx replies go to `hist` when given. */
async function cannon(target, seconds, hist) {
  let ok = 0;
  const instance = autocannon({
    url: `http://${HOST}:${target.port}${target.path}`,
    method: 'POST',
    headers: target.headers,
    body: target.body('[<id>]'),
    idReplacement: true,
    connections: CONNECTIONS,
    duration: seconds,
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status < 200 || status > 299) return;
    ok++;
    hist?.add(ms);
  });
  const result = await instance;
  const errors = result.non2xx + result.errors + result.timeouts;
  return {
    ok,
    errors,
    seconds: result.duration,
    firstError: errors ? result.statusCodeStats : undefined,
  };
}

/**
 * A wrk script for `target`: its headers, a fresh id per request (where autocannon puts
 * `[<id>]`), and at the end one line with the counts and every latency wrk recorded.
 */
function wrkScript(target) {
  const lua = (text) => JSON.stringify(text); // ASCII without control characters: a Lua string too
  const parts = target.body('[<id>]').split('[<id>]');
  return [
    'wrk.method = "POST"',
    ...Object.entries(target.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(String(v))}`),
    `local parts = { ${parts.map(lua).join(', ')} }`,
    'local n = 0',
    'request = function()',
    '  n = n + 1',
    `  return wrk.format(nil, ${lua(target.path)}, nil, table.concat(parts, "w" .. n))`,
    'end',
    'done = function(summary, latency)',
    '  local e = summary.errors',
    '  local seen = {}',
    '  for i = 1, #latency do local us, count = latency(i); seen[#seen + 1] = us .. ":" .. count end',
    '  io.write("mhl-bench ", summary.requests, " ", e.connect + e.read + e.write + e.timeout,',
    '    " ", e.status, " ", summary.duration, " ", table.concat(seen, ","), "\\n")',
    'end',
    '',
  ].join('\n');
}

/**
 * One wrk window (one thread, CONNECTIONS keep-alive connections, a C event loop with no
 * collector of its own) over `target`; latencies go to `hist` when given. wrk counts a status
 * of 400 and up as an error, and a reply that is not HTTP as a read error.
 */
function wrkLoad(target, seconds, hist) {
  const script = join(dir, `${target.name}.lua`);
  writeFileSync(script, wrkScript(target));
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '10s', '-s', script];
  const url = `http://${HOST}:${target.port}${target.path}`;
  const [command, argv] = PIN
    ? ['taskset', ['-c', '0', 'wrk', ...args, url]]
    : ['wrk', [...args, url]];
  return new Promise((done, fail) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.on('error', fail);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('mhl-bench '));
      if (code !== 0 || line === undefined) return fail(new Error(`wrk exited ${code}: ${out}`));
      const [, requests, socketErrors, statusErrors, us, seen] = line.split(' ');
      for (const pair of seen.split(',')) {
        const [value, count] = pair.split(':').map(Number);
        for (let i = 0; i < count; i++) hist?.add(value / 1000);
      }
      const errors = Number(socketErrors) + Number(statusErrors);
      done({
        ok: Number(requests) - errors,
        errors,
        seconds: Number(us) / 1e6,
        firstError: errors ? { socketErrors, statusErrors } : undefined,
      });
    });
  });
}

// Server CPU (user + system) over the recorded window, per answered request: unlike req/s it
// barely moves when other work shares the cores, so it tells builds apart on a busy machine.
// Linux only (/proc); null elsewhere.
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
function cpuTicks(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

// Nanoseconds the main thread of `pid` has spent runnable but waiting for a CPU (the second
// field of /proc/PID/schedstat): over a window, the share of it the server could not run
// because other work held the cores. The figure that says whose tail a tail is. Linux only.
function runQueueNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return null;
  }
}

const figures = {};
const tallies = new Map();
// The load generator's own stalls (autocannon and the node loop run in this process): a late
// event loop here adds to every latency in flight, whichever server answers.
const clientDelay = monitorEventLoopDelay({ resolution: 1 });
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const median = (values) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
/** One warm-up and one recorded window of `target`, added to its tally. */
async function measure(target) {
  target.path ??= '/mcp';
  let tally = tallies.get(target.name);
  if (tally === undefined) {
    await check(target);
    tally = {
      hist: new Histogram(),
      rates: [],
      windows: [],
      ok: 0,
      errors: 0,
      ticks: 0,
      waitNs: 0,
      wallNs: 0,
      firstError: undefined,
    };
    tallies.set(target.name, tally);
  }
  const load =
    CLIENT === 'node'
      ? async (seconds, hist) => ({
          ...(await nodeLoad(target, CONNECTIONS, seconds * 1000, hist)),
          seconds,
        })
      : CLIENT === 'wrk'
        ? (seconds, hist) => wrkLoad(target, seconds, hist)
        : (seconds, hist) => cannon(target, seconds, hist);
  await load(WARMUP_S);
  const window = new Histogram();
  const ticks = cpuTicks(target.pid);
  const wait = runQueueNs(target.pid);
  const wall = process.hrtime.bigint();
  clientDelay.reset();
  clientDelay.enable();
  const run = await load(DURATION_S, window);
  clientDelay.disable();
  const after = cpuTicks(target.pid);
  const waitAfter = runQueueNs(target.pid);
  tally.wallNs += Number(process.hrtime.bigint() - wall);
  tally.waitNs = wait === null || waitAfter === null ? null : tally.waitNs + waitAfter - wait;
  tally.ticks =
    ticks === null || after === null || tally.ticks === null ? null : tally.ticks + after - ticks;
  for (let i = 0; i < window.buckets.length; i++) {
    if (window.buckets[i] === 0) continue;
    tally.hist.buckets[i] += window.buckets[i];
    tally.hist.count += window.buckets[i];
  }
  tally.windows.push({
    p50: window.quantile(0.5),
    p99: window.quantile(0.99),
    clientDelayP99: CLIENT === 'wrk' ? null : clientDelay.percentile(99) / 1e6,
  });
  tally.rates.push(run.ok / run.seconds);
  tally.ok += run.ok;
  tally.errors += run.errors;
  tally.firstError ??= run.firstError;
}

/**
 * Prints `name`'s line. Each figure is the median over its windows, as the rate is: a burst of
 * other work on the shared cores lands in one window, and the p99 over all windows pooled
 * (printed beside, `p99_pooled_ms`) is that window's.
 */
function report(name) {
  const tally = tallies.get(name);
  const { windows } = tally;
  const line = {
    bench: 'serve-http',
    server: name,
    client: CLIENT,
    ...(PIN ? { pinned: true } : {}),
    ...(NODE_FLAGS.length ? { node_flags: NODE_FLAGS } : {}),
    connections: CONNECTIONS,
    windows: windows.length,
    req_per_s: Math.round(median(tally.rates)),
    p50_ms: median(windows.map((w) => w.p50)),
    p99_ms: median(windows.map((w) => w.p99)),
    p99_over_p50: +median(windows.map((w) => w.p99 / w.p50)).toFixed(2),
    p99_pooled_ms: tally.hist.quantile(0.99),
    server_cpu_us_per_req:
      tally.ticks === null || tally.ok === 0
        ? null
        : Math.round((tally.ticks / TICKS_PER_S / tally.ok) * 1e7) / 10,
    server_runq_wait_pct:
      tally.waitNs === null ? null : +((100 * tally.waitNs) / tally.wallNs).toFixed(1),
    client_loop_delay_p99_ms:
      CLIENT === 'wrk' ? null : +median(windows.map((w) => w.clientDelayP99)).toFixed(2),
    errors: tally.errors,
    ...(tally.firstError === undefined ? {} : { first_error: tally.firstError }),
  };
  figures[name] = line;
  console.log(JSON.stringify(line));
}

const mhlArgs = (cli) => [cli, 'serve', 'mcp', flows, '--http', '--port', '0'];
// `--node-flags=A,B`: Node/V8 flags for every server process alike (bare and SDKs too), e.g.
// `--max-semi-space-size=8` to compare young-generation sizes.
const NODE_FLAGS = flag('node-flags')?.split(',').filter(Boolean) ?? [];
const node = (name, args) => startChild(name, [...NODE_FLAGS, ...args]);
const servers = {
  bare: node('bare', ['-e', BARE]),
  v1: node('sdk-v1', ['--input-type=module', '-e', sdkV1Source()]),
  v2: node('sdk-v2', ['--input-type=module', '-e', sdkV2Source()]),
  mhl: node('mhl', mhlArgs(CLI)),
  ...(BASELINE ? { base: node('base', mhlArgs(resolve(BASELINE))) } : {}),
};
const V1_HEADERS = { 'content-type': JSON_TYPE, accept: ACCEPT, 'mcp-protocol-version': LEGACY };
try {
  const peers = [
    {
      name: 'bare',
      port: await servers.bare.ready,
      pid: servers.bare.child.pid,
      headers: modernHeaders,
      body: (id) => call(id, META),
    },
    {
      name: 'sdk-v1',
      port: await servers.v1.ready,
      pid: servers.v1.child.pid,
      headers: V1_HEADERS,
      body: (id) => call(id),
    },
    {
      name: 'sdk-v2',
      port: await servers.v2.ready,
      pid: servers.v2.child.pid,
      headers: modernHeaders,
      body: (id) => call(id, META),
    },
  ];
  const modes = await mhlTargets('', await servers.mhl.ready, servers.mhl.child.pid);
  const base = servers.base
    ? await mhlTargets('base-', await servers.base.ready, servers.base.child.pid)
    : [];
  if (PIN) {
    // Every thread of every server (V8's and libuv's helpers too) on CPU 1, this process (the
    // load generator, or wrk's parent) on CPU 0.
    for (const { child } of Object.values(servers)) {
      spawnSync('taskset', ['-a', '-p', '-c', '1', String(child.pid)], { stdio: 'ignore' });
    }
    spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  }
  // Every target once per round, ROUNDS rounds: a burst of other work on the shared cores hits
  // one window of each, and the median leaves it out. A baseline build's mode runs right after
  // the same mode of the build under test.
  const order = [...peers, ...modes.flatMap((mode, i) => (base[i] ? [mode, base[i]] : [mode]))];
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of order) await measure(target);
  }
  for (const target of order) report(target.name);
  const rate = (name) => figures[name].req_per_s;
  const bestSdk = Math.max(rate('sdk-v1'), rate('sdk-v2'));
  const goal = (name, value, target, met) =>
    console.log(
      JSON.stringify({
        bench: 'serve-http',
        goal: name,
        value: +value.toFixed(2),
        target,
        goal_met: met,
      }),
    );
  for (const { name } of modes) {
    const f = figures[name];
    // A figure with errors, or beside a peer with errors, meets no goal.
    const clean = [f, figures.bare, figures['sdk-v1'], figures['sdk-v2']].every(
      (g) => g.errors === 0 && g.req_per_s > 0,
    );
    goal(`${name}_over_best_sdk`, f.req_per_s / bestSdk, 5, clean && f.req_per_s >= 5 * bestSdk);
    goal(
      `${name}_over_bare`,
      f.req_per_s / rate('bare'),
      0.5,
      clean && f.req_per_s >= 0.5 * rate('bare'),
    );
    goal(`${name}_p99_over_p50`, f.p99_over_p50, 2, clean && f.p99_over_p50 <= 2);
  }
  // The peers' own tails, measured the same way in the same run: what the machine and the load
  // generator leave of the p99/p50 goal whatever the server (bare does next to nothing per call).
  for (const { name } of peers) {
    const value = figures[name].p99_over_p50;
    console.log(JSON.stringify({ bench: 'serve-http', figure: `${name}_p99_over_p50`, value }));
  }
  // The same ratio in server CPU per request: what each answer costs the server itself.
  const cpu = (name) => figures[name].server_cpu_us_per_req;
  for (const { name } of [...modes, ...base]) {
    if (cpu(name) === null || cpu('bare') === null) continue;
    const value = +(cpu(name) / cpu('bare')).toFixed(2);
    console.log(JSON.stringify({ bench: 'serve-http', figure: `${name}_cpu_over_bare`, value }));
  }
  for (const { name } of base) {
    const f = figures[name];
    console.log(
      JSON.stringify({
        bench: 'serve-http',
        figure: `${name}_over_bare`,
        value: +(f.req_per_s / rate('bare')).toFixed(2),
      }),
    );
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}

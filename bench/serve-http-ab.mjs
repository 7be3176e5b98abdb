// Two mhl builds side by side on the four modes of serve-http.bench.mjs (modern and legacy, JSON
// and SSE, a one-step Echo workflow), for telling builds apart by what barely moves with the load
// of a shared machine: the server's CPU per answered call (from /proc, each window alone) and,
// with --heap, its allocation per call (V8's sampling heap profiler at a 1 KB interval, objects
// collected by minor and major GC included, started and stopped around each window by SIGUSR2
// through a preloaded script). Windows alternate between the builds (ABAB, then BABA), each
// build's figure is the median of its windows. Not part of run-all: a tool for A/B work.
//
//   npm run build && node bench/serve-http-ab.mjs --baseline=<other build>/dist/bin/mhl.js \
//     [--heap] [--windows=6] [--seconds=2] [--modes=modern_json,modern_sse]
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { echoWorkspace } from './lib/echo-workspace.mjs';
import { HOST, startChild } from './lib/http-peers.mjs';

const flag = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const HEAP = process.argv.includes('--heap');
const WINDOWS = Number(flag('windows') ?? 6);
const SECONDS = Number(flag('seconds') ?? 2);
const MODES = (flag('modes') ?? 'modern_json,modern_sse,legacy_json,legacy_sse').split(',');
const BUILDS = [
  { name: 'this', cli: fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url)) },
  ...(flag('baseline') ? [{ name: 'baseline', cli: resolve(flag('baseline')) }] : []),
];
const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const ACCEPT = 'application/json, text/event-stream';
const TICKS_PER_S = 100;

const { dir, flows, cwd } = echoWorkspace('mhl-bench-ab-');
// The preload: SIGUSR2 starts sampling, the next one writes the profile to HEAP_DIR.
const preload = join(dir, 'heap-sampler.cjs');
writeFileSync(
  preload,
  `const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
let on = false;
let n = 0;
process.on('SIGUSR2', () => {
  on = !on;
  if (on) {
    session.post('HeapProfiler.startSampling', { samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    return;
  }
  session.post('HeapProfiler.stopSampling', (error, result) => {
    const out = process.env.HEAP_DIR + '/heap-' + process.pid + '-' + n++ + '.json';
    let bytes = 0;
    if (!error) for (const s of result.profile.samples) bytes += s.size;
    fs.writeFileSync(out + '.tmp', JSON.stringify({ bytes }));
    fs.renameSync(out + '.tmp', out);
  });
});
`,
);

const call = (meta) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: '[<id>]',
    method: 'tools/call',
    params: {
      name: 'Echo',
      arguments: { text: 'hi', context: { cwd } },
      ...(meta === undefined ? {} : { _meta: meta }),
    },
  });

/** The four modes' headers and bodies on `port` (a legacy session opened for the legacy ones). */
async function modesOf(port) {
  const url = `http://${HOST}:${port}/mcp`;
  const post = (body, headers = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    });
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'ab', version: '1' } },
  });
  await init.text();
  const session = {
    'mcp-session-id': init.headers.get('mcp-session-id'),
    'mcp-protocol-version': LEGACY,
  };
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
  const modern = {
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': 'Echo',
  };
  const legacy = { 'content-type': 'application/json', accept: ACCEPT, ...session };
  return {
    modern_json: { headers: modern, body: call(META) },
    modern_sse: { headers: modern, body: call({ ...META, progressToken: '[<id>]' }) },
    legacy_json: { headers: legacy, body: call(undefined) },
    legacy_sse: { headers: legacy, body: call({ progressToken: '[<id>]' }) },
  };
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function load(port, { headers, body }, seconds) {
  let ok = 0;
  const instance = autocannon({
    url: `http://${HOST}:${port}/mcp`,
    method: 'POST',
    headers,
    body,
    idReplacement: true,
    connections: 32,
    duration: seconds,
  });
  instance.on('response', (_client, status) => {
    if (status >= 200 && status < 300) ok++;
  });
  const result = await instance;
  return {
    ok,
    errors: result.non2xx + result.errors + result.timeouts,
    tail: result.latency.p99 / result.latency.p50,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const env = HEAP
  ? { ...process.env, NODE_OPTIONS: `--require ${preload}`, HEAP_DIR: dir }
  : process.env;
const servers = BUILDS.map((b) =>
  startChild(b.name, [b.cli, 'serve', 'mcp', flows, '--http', '--port', '0'], env),
);
try {
  const targets = [];
  for (const [i, server] of servers.entries()) {
    const port = await server.ready;
    targets.push({
      ...BUILDS[i],
      port,
      pid: server.child.pid,
      modes: await modesOf(port),
      heaps: 0,
    });
  }
  for (const mode of MODES) {
    for (const t of targets) await load(t.port, t.modes[mode], 1);
    const tallies = new Map(targets.map((t) => [t, { cpu: [], kb: [], tail: [], errors: 0 }]));
    for (let w = 0; w < WINDOWS; w++) {
      for (const t of w % 2 ? [...targets].reverse() : targets) {
        const tally = tallies.get(t);
        if (HEAP) process.kill(t.pid, 'SIGUSR2');
        const before = cpuTicks(t.pid);
        const { ok, errors, tail } = await load(t.port, t.modes[mode], SECONDS);
        tally.tail.push(tail);
        tally.cpu.push(((cpuTicks(t.pid) - before) / TICKS_PER_S / ok) * 1e6);
        tally.errors += errors;
        if (!HEAP) continue;
        process.kill(t.pid, 'SIGUSR2');
        const file = join(dir, `heap-${t.pid}-${t.heaps++}.json`);
        while (!existsSync(file)) await sleep(20);
        tally.kb.push(JSON.parse(readFileSync(file, 'utf8')).bytes / ok / 1024);
      }
    }
    for (const t of targets) {
      const { cpu, kb, tail, errors } = tallies.get(t);
      const line = {
        bench: 'serve-http-ab',
        build: t.name,
        mode,
        windows: WINDOWS,
        server_cpu_us_per_req: Math.round(median(cpu) * 10) / 10,
        ...(HEAP ? { kb_per_req: Math.round(median(kb) * 10) / 10 } : {}),
        p99_over_p50: Math.round(median(tail) * 100) / 100,
        errors,
      };
      console.log(JSON.stringify(line));
    }
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(dir, { recursive: true, force: true });
}

// What one refused `initialize` costs the server, with the table nearly empty and with it full:
// the review finding that a client hammering at its per-client cap made the server scan every
// session for each refusal (153 us each at 10,000 sessions against 17 us at 1,000).
//
//   node bench/session-refusal.bench.mjs                       # this build (dist/)
//   node bench/session-refusal.bench.mjs --build before=/old/dist/bin/mhl.js --build after=dist/bin/mhl.js
//
// Each build gets a fresh `mhl serve mcp examples --http` with the default caps (10,000
// sessions, 100 per client). One client (127.0.0.2) opens its 100 sessions, then sends REFUSALS
// more `initialize`s, each of which must be refused `CLIENT_SESSION_LIMIT`; the server's CPU
// (user + system, /proc/<pid>/stat) over them, per refusal, is the figure. Then 99 more clients
// (127.0.0.3 and up) fill the table to 10,000 and the same is measured again, then for a client
// with no session, refused `SESSION_CAPACITY_FULL` at the full table. Name a build twice
// (before, after, before, after) to alternate them. One JSON line per figure; Linux only. Read
// the ratio between builds and table sizes, not the absolute figures: other work shares the cores.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLI, client, startMhl } from './lib/mhl-http.mjs';

const FOLDER = fileURLToPath(new URL('../examples', import.meta.url));
const REFUSALS = Number(process.env.MHL_BENCH_REFUSALS ?? 20_000);
/** Refusals before each measured window, so the JIT has settled. */
const WARMUP = 2000;
const PER_CLIENT = 100;
const CLIENTS = 100;
const CONCURRENCY = 16;
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

const { values } = parseArgs({ options: { build: { type: 'string', multiple: true } } });
const builds = (values.build ?? [`this=${CLI}`]).map((spec) => {
  const at = spec.indexOf('=');
  return { label: spec.slice(0, at), cli: resolve(spec.slice(at + 1)) };
});
const emit = (line) => console.log(JSON.stringify({ bench: 'session-refusal', ...line }));

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Runs `task()` `count` times, at most CONCURRENCY at a time. */
async function pool(count, task) {
  let next = 0;
  const worker = async () => {
    while (next++ < count) await task();
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
}

const CAPS = {
  client: { status: 429, code: 'CLIENT_SESSION_LIMIT' },
  server: { status: 503, code: 'SESSION_CAPACITY_FULL' },
};

/** `count` initializes from `caller`, each of which must be refused at `cap`. */
async function refusals(caller, count, cap) {
  const want = CAPS[cap];
  await pool(count, async () => {
    const { refused } = await caller.session();
    const code = refused && JSON.parse(refused.text).error?.data?.code;
    if (refused?.status !== want.status || code !== want.code) {
      throw new Error(`expected ${want.status} ${want.code}, got ${refused?.status} ${code}`);
    }
  });
}

/** Opens PER_CLIENT sessions from `caller`, each of which must be admitted. */
async function fill(caller) {
  await pool(PER_CLIENT, async () => {
    const { refused } = await caller.session();
    if (refused) throw new Error(`session refused: ${refused.status} ${refused.text}`);
  });
}

async function measure(build, server, hammer, sessions, cap = 'client') {
  await refusals(hammer, WARMUP, cap);
  const before = cpuTicks(server.pid);
  await refusals(hammer, REFUSALS, cap);
  const us = (((cpuTicks(server.pid) - before) / TICKS_PER_S) * 1e6) / REFUSALS;
  emit({
    figure: 'cpu_us_per_refused_initialize',
    build: build.label,
    sessions,
    cap,
    value: +us.toFixed(1),
  });
}

for (const build of builds) {
  const server = await startMhl({ folder: FOLDER, cli: build.cli });
  const callers = Array.from({ length: CLIENTS }, (_, i) =>
    client({ port: server.port, localAddress: `127.0.0.${2 + i}` }),
  );
  try {
    await fill(callers[0]);
    await measure(build, server, callers[0], PER_CLIENT);
    // Each filler's connections closed once its sessions are open: the server allows 512 at once.
    for (const caller of callers.slice(1)) {
      await fill(caller);
      caller.close();
    }
    await measure(build, server, callers[0], PER_CLIENT * CLIENTS);
    // A client with no session, refused at the full table: every session is looked at.
    const newcomer = client({ port: server.port, localAddress: `127.0.0.${2 + CLIENTS}` });
    try {
      await measure(build, server, newcomer, PER_CLIENT * CLIENTS, 'server');
    } finally {
      newcomer.close();
    }
  } finally {
    for (const caller of callers) caller.close();
    await server.stop();
  }
}

// `npm run soak`: mixed load on a real `mhl serve mcp --http` for a while, then the server's own
// health (from /metrics) at the start and at the end, compared against stated bounds.
//
//   npm run soak                      # 10 minutes
//   npm run soak -- --minutes 30      # or SOAK_MINUTES=30
//
// The load, all at once: direct tool calls, async runs polled to completion, runs cancelled while
// their step's process runs, legacy sessions opened and then deleted or abandoned, and slow
// clients that stall in their headers or body. Both measurements are taken with the load stopped
// and the server idle (no request in flight, no run active), after a warm-up, so they compare
// like with like. Prints one JSON line per figure; exits 1 when a bound is broken or a request
// got an answer it should not have.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { client, parse, startMhl } from './lib/mhl-http.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '10' },
    'warmup-seconds': { type: 'string', default: '30' },
  },
});
const minutes = Number(values.minutes);
const warmupSeconds = Number(values['warmup-seconds']);
if (!(minutes > 0) || !(warmupSeconds >= 0)) {
  console.error('soak: --minutes takes a positive number, --warmup-seconds a number ≥ 0');
  process.exit(2);
}

/** Growth allowed between the two idle measurements. */
const BOUNDS = {
  rssBytes: 32 * 1024 * 1024,
  heapUsedBytes: 16 * 1024 * 1024,
  openFds: 8,
  activeResources: 8,
  // The idle event loop's 99th percentile, absolute.
  idleDelayP99Seconds: 0.05,
};

const scratch = mkdtempSync(join(tmpdir(), 'mhl-soak-'));
const token = randomBytes(24).toString('hex');
const server = await startMhl({
  folder: join(here, 'soak'),
  args: [
    ...['--token', token, '--principal-header', 'x-user'],
    ...['--state-dir', scratch, '--cwd', scratch],
  ],
  // Finished runs are forgotten at the next sweep (each minute) instead of after the default
  // hour, so each idle measurement can wait until none is held.
  env: { MHL_SERVE_TERMINAL_RUN_TTL: '1s' },
});
const { port } = server;
const http = client({ port, token });

/** Counts of what the load saw, by kind; `unexpected` must stay empty. */
const seen = {};
const unexpected = [];
const count = (kind) => {
  seen[kind] = (seen[kind] ?? 0) + 1;
};
const wrong = (what) => {
  count('unexpected');
  if (unexpected.length < 20) unexpected.push(what);
};

/** A stateless call's result, or undefined after recording what went wrong. */
async function modern(method, params, user) {
  const reply = await http.modern(method, params, { user });
  if (reply.status !== 200 || reply.json?.id !== reply.id || reply.json.result === undefined) {
    wrong(`${method}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
    return undefined;
  }
  return reply.json.result;
}

let running = true;
const until = (deadline) => running && Date.now() < deadline;
const pause = (ms) => new Promise((done) => setTimeout(done, ms));

async function syncCalls(user, deadline) {
  while (until(deadline)) {
    const result = await modern('tools/call', { name: 'Echo', arguments: { text: user } }, user);
    if (result && result.isError !== true) count('sync call');
    else if (result) wrong(`Echo: ${JSON.stringify(result).slice(0, 200)}`);
  }
}

async function asyncRuns(user, deadline) {
  while (until(deadline)) {
    const started = await modern('run/start', { name: 'Steps', arguments: {} }, user);
    if (!started) continue;
    let view = started;
    while (!['completed', 'failed', 'canceled'].includes(view?.state)) {
      await pause(20);
      view = await modern('run/status', { runId: started.runId }, user);
      if (!view) break;
    }
    if (view?.state === 'completed') count('async run');
    else if (view) wrong(`run ended ${view.state}`);
    await pause(100);
  }
}

async function cancels(user, deadline) {
  while (until(deadline)) {
    const started = await modern('run/start', { name: 'Sleeper', arguments: {} }, user);
    if (!started) continue;
    let view = started;
    while (view && view.state !== 'working') {
      await pause(20);
      view = await modern('run/status', { runId: started.runId }, user);
    }
    const canceled = await modern('run/cancel', { runId: started.runId }, user);
    if (canceled?.state === 'canceled') count('cancelled run');
    else if (canceled) wrong(`cancel answered ${canceled.state}`);
    await pause(250);
  }
}

/** Legacy sessions, one every two seconds: half deleted, half abandoned to the idle sweep. */
async function sessions(deadline) {
  for (let n = 0; until(deadline); n++, await pause(2000)) {
    const session = await http.session({ user: `session-${n % 50}` });
    if (session.refused) {
      // A session cap refusing a new session is the server holding, not failing.
      if (parse(session.refused.text)?.error) count('session refused');
      else
        wrong(`initialize: HTTP ${session.refused.status} ${session.refused.text.slice(0, 200)}`);
      continue;
    }
    const list = await session.call('tools/list');
    if (list.status !== 200) wrong(`tools/list in a session: HTTP ${list.status}`);
    if (n % 2 === 0) {
      await session.end();
      count('session deleted');
    } else count('session abandoned');
  }
}

/** Slow clients: connections that stall in their headers or body, replaced when closed. */
const slowSockets = new Set();
async function slowClients(deadline) {
  const open = (kind) => {
    const socket = connect(port, '127.0.0.1');
    slowSockets.add(socket);
    socket.on('error', () => {});
    // Read what the server answers (a 408), or its close would wait behind the unread bytes.
    socket.resume();
    socket.on('close', () => {
      slowSockets.delete(socket);
      count(`slow ${kind} closed`);
    });
    if (kind === 'headers') socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ');
    // 128 KiB of a declared 1 MiB, then nothing: twenty of them hold 2.5 MiB of the budget.
    else
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 1048575\r\n\r\n${' '.repeat(128 * 1024)}`,
      );
  };
  for (let n = 0; until(deadline); await pause(500)) {
    while (slowSockets.size < 40) open(n++ % 2 === 0 ? 'headers' : 'body');
  }
}

async function load(seconds) {
  const deadline = Date.now() + seconds * 1000;
  await Promise.all([
    ...[0, 1, 2].map((i) => syncCalls(`sync-${i}`, deadline)),
    ...[0, 1].map((i) => asyncRuns(`async-${i}`, deadline)),
    cancels('cancel-0', deadline),
    sessions(deadline),
    slowClients(deadline),
  ]);
  for (const socket of slowSockets) socket.destroy();
}

async function metrics() {
  const { text } = await http.send({ method: 'GET', path: '/metrics' });
  const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    rssBytes: read('process_resident_memory_bytes'),
    heapUsedBytes: read('nodejs_heap_used_bytes'),
    openFds: read('process_open_fds'),
    activeResources: read('nodejs_active_resources'),
    delayP99Seconds: read('nodejs_eventloop_delay_seconds\\{quantile="0.99"\\}'),
    delayMaxSeconds: read('nodejs_eventloop_delay_seconds\\{quantile="max"\\}'),
    runsHeld: read('mhl_runs_held'),
    slots: read('mhl_execution_slots_active'),
  };
}

/**
 * Waits until nothing runs and the sweep has forgotten every finished run, then measures over a
 * quiet few seconds (lowest of three reads).
 */
async function idleSample() {
  for (;;) {
    const now = await metrics();
    if (now.runsHeld === 0 && now.slots === 0) break;
    await pause(500);
  }
  const reads = [];
  for (let i = 0; i < 3; i++) {
    await pause(1000);
    reads.push(await metrics());
  }
  const low = (key) => Math.min(...reads.map((r) => r[key]));
  return {
    rssBytes: low('rssBytes'),
    heapUsedBytes: low('heapUsedBytes'),
    openFds: low('openFds'),
    activeResources: low('activeResources'),
    delayP99Seconds: reads[2].delayP99Seconds,
  };
}

const underLoad = { rssBytes: 0, delayP99Seconds: 0, delayMaxSeconds: 0 };
let watching = true;
const watcher = (async () => {
  while (watching) {
    await pause(10_000);
    if (!watching) break;
    const now = await metrics();
    for (const key of Object.keys(underLoad)) underLoad[key] = Math.max(underLoad[key], now[key]);
  }
})();

console.error(`soak: ${warmupSeconds}s warm-up, then ${minutes} min of load on port ${port}`);
await load(warmupSeconds);
const start = await idleSample();
await load(minutes * 60);
watching = false;
await watcher;
const end = await idleSample();
running = false;

let failed = unexpected.length > 0;
const figure = (name, startValue, endValue, bound, growth = true) => {
  const ok = growth ? endValue - startValue <= bound : endValue <= bound;
  if (!ok) failed = true;
  console.log(
    JSON.stringify({ figure: name, start: startValue, end: endValue, bound, growth, ok }),
  );
};
figure('soak_rss_bytes', start.rssBytes, end.rssBytes, BOUNDS.rssBytes);
figure('soak_heap_used_bytes', start.heapUsedBytes, end.heapUsedBytes, BOUNDS.heapUsedBytes);
figure('soak_open_fds', start.openFds, end.openFds, BOUNDS.openFds);
figure('soak_active_resources', start.activeResources, end.activeResources, BOUNDS.activeResources);
figure(
  'soak_idle_eventloop_p99_seconds',
  start.delayP99Seconds,
  end.delayP99Seconds,
  BOUNDS.idleDelayP99Seconds,
  false,
);
console.log(JSON.stringify({ figure: 'soak_under_load_max', minutes, ...underLoad }));
console.log(JSON.stringify({ figure: 'soak_counts', ...seen }));
if (unexpected.length > 0) console.error(`soak: unexpected answers:\n${unexpected.join('\n')}`);

await server.stop();
http.close();
rmSync(scratch, { recursive: true, force: true });
process.exit(failed ? 1 : 0);

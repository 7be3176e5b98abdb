// The hostile local user of issue 18, replayed against one or more builds side by side, so
// docs/reliability.md can show each figure before and after:
//
//   node bench/abuse.mjs                                   # this build (dist/)
//   node bench/abuse.mjs --build before=/old/dist/bin/mhl.js --build after=dist/bin/mhl.js
//
// Five scenarios, each on a fresh server: a session flood beside a victim session with a call in
// flight and a run working; one owner starting runs until refused, then another owner's start;
// stopping and scraping a --token server without the token; 250 connections that each send a
// 1 MiB body but its last byte, beside an honest client; a non-owner's run/status of a run with
// 250 KiB of arguments against an unknown id. One JSON line per figure.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLI, client, rssBytes, startMhl } from './lib/mhl-http.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FOLDER = join(here, 'soak');
const { values } = parseArgs({ options: { build: { type: 'string', multiple: true } } });
const builds = (values.build ?? [`this=${CLI}`]).map((spec) => {
  const at = spec.indexOf('=');
  return { label: spec.slice(0, at), cli: resolve(spec.slice(at + 1)) };
});
const MIB = 1024 * 1024;
const pause = (ms) => new Promise((done) => setTimeout(done, ms));
const print = (figure, build, fields) => console.log(JSON.stringify({ figure, build, ...fields }));

/** What a JSON-RPC reply was: answered (result or error, with its id), or what came instead. */
function outcome(reply) {
  if (reply.json?.id === reply.id)
    return reply.json.error
      ? `error ${reply.json.error.data?.code ?? reply.json.error.code}`
      : 'answered';
  return `HTTP ${reply.status}${reply.text === '' ? ' with no body' : ''}`;
}

async function withServer(cli, args, body) {
  const scratch = mkdtempSync(join(tmpdir(), 'mhl-abuse-'));
  const server = await startMhl({ cli, folder: FOLDER, args: ['--cwd', scratch, ...args] });
  try {
    return await body(server);
  } finally {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** 1. A victim session with a call in flight and a run working, then 1,000 sessions opened. */
async function sessionFlood({ label, cli }) {
  await withServer(cli, [], async ({ port }) => {
    const http = client({ port });
    const victim = await http.session();
    const run = await victim.call('run/start', { name: 'Sleeper', arguments: { seconds: 5 } });
    const inFlight = victim.call('tools/call', { name: 'Sleeper', arguments: { seconds: 2 } });
    const started = performance.now();
    let refused = 0;
    for (let i = 0; i < 1000; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => http.session()));
      refused += batch.filter((s) => s.refused).length;
    }
    const floodMs = Math.round(performance.now() - started);
    const call = await inFlight;
    const after = await victim.call('tools/list');
    const status = await victim.call('run/status', { runId: run.json?.result?.runId });
    print('session_flood', label, {
      sessions_opened: 1000 - refused,
      refused,
      flood_ms: floodMs,
      victim_call_in_flight: outcome(call),
      victim_session_after: outcome(after),
      victim_run_after: outcome(status),
    });
    http.close();
  });
}

/** 2. One owner starts runs that finish at once until refused; then another owner starts one. */
async function runTable({ label, cli }) {
  const token = randomBytes(16).toString('hex');
  await withServer(cli, ['--token', token, '--principal-header', 'x-user'], async ({ port }) => {
    const http = client({ port, token });
    const started = performance.now();
    let starts = 0;
    let refusal;
    const worker = async () => {
      while (refusal === undefined && starts < 10_500) {
        const reply = await http.modern(
          'run/start',
          { name: 'Steps', arguments: {} },
          { user: 'mallory' },
        );
        if (reply.json?.result) starts++;
        else refusal = outcome(reply);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    const other = await http.modern(
      'run/start',
      { name: 'Steps', arguments: {} },
      { user: 'victim' },
    );
    print('run_table', label, {
      attacker_starts: starts,
      attacker_refused_with: refusal ?? 'never',
      seconds,
      other_owner_start: other.json?.result ? 'started' : outcome(other),
    });
    http.close();
  });
}

/** 3. A --token server: stop it and read its counters without the token. */
async function tokenGuard({ label, cli }) {
  const token = randomBytes(16).toString('hex');
  await withServer(cli, ['--token', token], async ({ port }) => {
    const anyone = client({ port });
    const ready = JSON.parse((await anyone.send({ method: 'GET', path: '/health/ready' })).text);
    const metrics = await anyone.send({ method: 'GET', path: '/metrics' });
    const shutdown = await anyone.send({
      path: '/control/shutdown',
      body: { instance_id: ready.instance_id },
    });
    print('token_guard', label, {
      metrics_without_token: metrics.status,
      shutdown_without_token: shutdown.status,
    });
    anyone.close();
  });
}

/** 4. 250 connections each send a 1 MiB body but its last byte, beside an honest client. */
async function stalledBodies({ label, cli }) {
  await withServer(cli, [], async ({ port, pid }) => {
    const honest = client({ port });
    await honest.modern('tools/call', { name: 'Echo', arguments: { text: 'warm' } });
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(pid));
    }, 20);
    try {
      const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${MIB}\r\n\r\n`;
      const almost = Buffer.alloc(MIB - 1, 0x20);
      const sockets = await Promise.all(
        Array.from(
          { length: 250 },
          () =>
            new Promise((done) => {
              const socket = connect(port, '127.0.0.1', () =>
                socket.write(head + almost.toString(), () => done(socket)),
              );
              socket.on('error', () => done(socket));
              // Read the server's answer (503, 408), or its close would wait behind it.
              socket.resume();
            }),
        ),
      );
      await pause(3000);
      const call = await honest.modern('tools/call', { name: 'Echo', arguments: { text: 'hi' } });
      clearInterval(sampler);
      const open = sockets.filter((s) => !s.destroyed).length;
      print('stalled_bodies', label, {
        connections: 250,
        rss_growth_mib: Math.round((peak - before) / MIB),
        still_open_after_3s: open,
        honest_call_meanwhile: outcome(call),
      });
      for (const socket of sockets) socket.destroy();
    } finally {
      clearInterval(sampler);
      honest.close();
    }
  });
}

/** 5. A non-owner's run/status of a run with 250 KiB of arguments, against an unknown id. */
async function existenceTiming({ label, cli }) {
  const token = randomBytes(16).toString('hex');
  await withServer(cli, ['--token', token, '--principal-header', 'x-user'], async ({ port }) => {
    const http = client({ port, token });
    const run = await http.modern(
      'run/start',
      { name: 'Echo', arguments: { text: 'x'.repeat(250 * 1024) } },
      { user: 'ann' },
    );
    const runId = run.json?.result?.runId;
    const unknown = randomBytes(16).toString('hex');
    const times = { foreign: [], unknown: [] };
    for (let i = 0; i < 1100; i++) {
      for (const [kind, id] of i % 2 === 0
        ? [
            ['foreign', runId],
            ['unknown', unknown],
          ]
        : [
            ['unknown', unknown],
            ['foreign', runId],
          ]) {
        const t0 = performance.now();
        await http.modern('run/status', { runId: id }, { user: 'bob' });
        if (i >= 100) times[kind].push(performance.now() - t0);
      }
    }
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
    print('existence_timing', label, {
      samples: times.foreign.length,
      foreign_median_ms: Number(median(times.foreign).toFixed(3)),
      unknown_median_ms: Number(median(times.unknown).toFixed(3)),
    });
    http.close();
  });
}

for (const scenario of [sessionFlood, runTable, tokenGuard, stalledBodies, existenceTiming]) {
  for (const build of builds) await scenario(build);
}

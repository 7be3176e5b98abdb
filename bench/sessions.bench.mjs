// Latency per tool of the activity-session profile against the public workflow-server, on the
// same walks of the same corpus in one run (issue 15's goal: mhl at most half the public p50 on
// next_activity and get_activity).
//
//   npm run build && node bench/sessions.bench.mjs [--rounds N]
//
// Both servers run as child processes on stdio behind the official SDK client: mhl as
// `serve mcp --profile sessions`, the public server built from its snapshot by
// scripts/build-workflow-server.mjs. Each round walks every corpus workflow on each server in
// turn (alternating which goes first), and every call's round-trip time is recorded by tool. One
// JSON line per (server, tool) with p50/p99 in ms, then one line per goal with the ratio. The
// machine is shared: read ratios, not absolute figures.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startMhl, startPublic } from './lib/session-servers.mjs';
import { walk } from './lib/session-walker.mjs';
import { WALKS } from './lib/session-walks.mjs';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const corpus = resolve(repo, 'test', 'fixtures', 'sessions', 'corpus');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' } } });
const rounds = Number(values.rounds);
const emit = (line) => console.log(JSON.stringify({ bench: 'sessions', ...line }));

const entry = execFileSync(process.execPath, [join(repo, 'scripts', 'build-workflow-server.mjs')], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'ignore'],
}).trim();
const dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-bench-'));
const servers = {
  mhl: await startMhl(join(repo, 'dist', 'bin', 'mhl.js'), corpus, dir, { MHL_LOG_LEVEL: 'error' }),
  public: await startPublic(entry, corpus, dir),
};
const samples = { mhl: new Map(), public: new Map() };

function timed(name) {
  const server = servers[name];
  return async (tool, args) => {
    const t0 = performance.now();
    const result = await server.call(tool, args);
    const ms = performance.now() - t0;
    const list = samples[name].get(tool) ?? [];
    list.push(ms);
    samples[name].set(tool, list);
    return result;
  };
}

try {
  // One untimed round each, so both have their code loaded and their files cached.
  for (const name of ['mhl', 'public'])
    for (const w of WALKS) await walk(servers[name].call, w.workflow, w.options);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ['mhl', 'public'] : ['public', 'mhl'];
    for (const name of order) for (const w of WALKS) await walk(timed(name), w.workflow, w.options);
  }
} finally {
  await servers.mhl.close();
  await servers.public.close();
  rmSync(dir, { recursive: true, force: true });
}

const pct = (list, p) => {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x) => Math.round(x * 1000) / 1000;
const p50 = {};
for (const name of ['mhl', 'public']) {
  for (const [tool, list] of [...samples[name]].sort()) {
    p50[`${name}:${tool}`] = pct(list, 50);
    emit({
      server: name,
      tool,
      calls: list.length,
      p50_ms: round(pct(list, 50)),
      p99_ms: round(pct(list, 99)),
    });
  }
}
for (const tool of ['next_activity', 'get_activity']) {
  const ratio = p50[`mhl:${tool}`] / p50[`public:${tool}`];
  emit({ goal: `${tool} p50 mhl <= 0.5 x public`, ratio: round(ratio), met: ratio <= 0.5 });
}

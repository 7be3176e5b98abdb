// Issue 11, goal 4: what 10,000 idle legacy HTTP sessions cost the whole server process.
// Starts `mhl serve mcp examples --http` (dist/bin/mhl.js, default caps: no session flag is
// passed, so the default `--max-sessions` must hold them), opens SESSIONS legacy sessions
// (2025-11-25 `initialize`, then `notifications/initialized`) and closes every connection, so
// only the session table is left. The default per-client cap (100) stays in force: the
// sessions come from ADDRESSES local addresses, 127.0.0.2 and up (`localAddress`; all of
// 127.0.0.0/8 is loopback on Linux), SESSIONS / ADDRESSES each, and each address is one client.
// The server's RSS (VmRSS from /proc/<pid>/status) is read before the first session, after the
// last one (connections closed, a moment to settle), and after every session has answered a
// `ping` (which must all succeed: a session lost is a failure, not a figure). One JSON line per
// figure, then the goal line. Build first: this runs dist/.
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { client, rssBytes, startMhl } from './lib/mhl-http.mjs';

const SESSIONS = Number(process.env.MHL_BENCH_SESSIONS ?? 10_000);
const ADDRESSES = 100;
/** Sessions opened at once, over all addresses: enough to keep both cores busy. */
const CONCURRENCY = 32;
/** Time for the server to close the connections and let its heap settle before a reading. */
const SETTLE_MS = 1500;
const TARGET_MB = 100;
const FOLDER = fileURLToPath(new URL('../examples', import.meta.url));
const MB = 1024 * 1024;

const emit = (line) => console.log(JSON.stringify({ bench: 'idle-sessions', ...line }));

/** One client per address; each keeps its connections alive, so requests reuse them. */
function clients(port) {
  return Array.from({ length: ADDRESSES }, (_, i) =>
    client({ port, localAddress: `127.0.0.${2 + i}` }),
  );
}

/** Runs `task(i)` for i in [0, count), at most CONCURRENCY at a time. */
async function pool(count, task) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
}

// To compare builds in one run: another CLI (MHL_BENCH_CLI, e.g. a copy of an older dist/bin/
// mhl.js) and extra `serve` flags (MHL_BENCH_SERVE_ARGS, e.g. `--max-sessions 10000` where the
// default is lower). Neither by default.
const args = (process.env.MHL_BENCH_SERVE_ARGS ?? '').split(' ').filter(Boolean);
const server = await startMhl({
  folder: FOLDER,
  args,
  cli: process.env.MHL_BENCH_CLI || undefined,
});
try {
  await delay(SETTLE_MS);
  const before = rssBytes(server.pid);
  emit({ figure: 'rss_mb_start', value: +(before / MB).toFixed(1) });

  const callers = clients(server.port);
  const sessions = new Array(SESSIONS);
  const started = performance.now();
  await pool(SESSIONS, async (i) => {
    const opened = await callers[i % ADDRESSES].session();
    if (opened.refused) {
      throw new Error(`session ${i} refused: ${opened.refused.status} ${opened.refused.text}`);
    }
    sessions[i] = opened;
  });
  const openMs = performance.now() - started;
  emit({ figure: 'sessions_opened', value: SESSIONS, addresses: ADDRESSES });
  emit({ figure: 'open_per_s', value: Math.round(SESSIONS / (openMs / 1000)) });
  // Idle means idle: no connection left open behind the sessions.
  for (const c of callers) c.close();
  await delay(SETTLE_MS);
  const idle = rssBytes(server.pid);
  const idleMb = +(idle / MB).toFixed(1);
  emit({ figure: 'rss_mb_idle', value: idleMb, sessions: SESSIONS });
  emit({ figure: 'bytes_per_session', value: Math.round((idle - before) / SESSIONS) });

  // Every session must still be there. An agent destroyed above opens new connections.
  let answered = 0;
  await pool(SESSIONS, async (i) => {
    const reply = await sessions[i].call('ping');
    if (reply.status === 200 && reply.json?.result !== undefined) answered++;
  });
  for (const c of callers) c.close();
  emit({ figure: 'sessions_answering_ping', value: answered, of: SESSIONS });
  await delay(SETTLE_MS);
  emit({ figure: 'rss_mb_after_ping', value: +(rssBytes(server.pid) / MB).toFixed(1) });

  // Fewer sessions (MHL_BENCH_SESSIONS, for a quick look) cannot meet the goal.
  const met = SESSIONS >= 10_000 && idleMb <= TARGET_MB && answered === SESSIONS;
  emit({ goal: 'rss_mb_10k_sessions', value: idleMb, target: TARGET_MB, goal_met: met });
} finally {
  await server.stop();
}

// The workflow-engine profile's cost per call (issue 14): p50 and p99 of each of the four tools
// in process (the surface's call path: argument check, dispatch, output check, canonical JSON)
// and over HTTP (a stateless 2026-07-28 tools/call to `mhl serve mcp --profile workflow-engine
// --http`), beside a bare HMAC-SHA256 sign and verify of the same checkpoint token bytes, in one
// run. Every call is a repeat of the same stateless request, which the server answers afresh.
// One JSON line per figure. Build first: this reads dist/.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../dist/log/index.js';
import {
  callEngineTool,
  compileContracts,
  KeyRing,
  loadRelease,
  ReleaseStore,
} from '../dist/surfaces/engine/index.js';
import { client, startMhl } from './lib/mhl-http.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const RELEASE = join(here, '..', 'examples', 'engine-release');
const KEY = 'bench-engine-key-0123456789abcdefghijklmnop';
const IN_PROCESS_CALLS = Number(process.env.ENGINE_BENCH_CALLS ?? 2000);
const HTTP_CALLS = Number(process.env.ENGINE_BENCH_HTTP_CALLS ?? 300);
const WARMUP = 50;

const print = (fields) => console.log(JSON.stringify({ bench: 'engine', ...fields }));

function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50_ms: +at(0.5).toFixed(4), p99_ms: +at(0.99).toFixed(4) };
}

/** Times `fn` `n` times after a warm-up; resolves with the per-call durations in ms. */
async function timed(n, fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
  const samples = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return samples;
}

const confirmedState = (state) => ({
  state,
  confirmations: Object.fromEntries(
    Object.keys(state).map((k) => [
      k,
      { confirmed_at: new Date().toISOString(), confirmed_by: 'bench', source: 'user' },
    ]),
  ),
});
const STATE = confirmedState({ objective: 'Bench the engine', audience: 'engineers' });
const HOST = {
  harness: 'claude-code',
  adapter: { id: 'claude-code', version: '1.0.0' },
  capabilities: ['file-write', 'subagents'],
  validator_capabilities: ['subagent'],
  repository_policy: { writable_paths: ['.'], forbidden_paths: [], allow_symlinks: false },
};

/** A project with the setup assets installed; the workspace manifest as prepare takes it. */
function installSetup(root, step) {
  const assets = [];
  for (const kind of ['prompts', 'skills', 'subagents']) {
    for (const a of step.host_assets[kind]) {
      mkdirSync(dirname(join(root, a.install_path)), { recursive: true });
      writeFileSync(join(root, a.install_path), a.text);
      assets.push({ kind, name: a.name, path: a.install_path, sha256: a.sha256 });
    }
  }
  const text = JSON.stringify({
    harness: HOST.harness,
    adapter: HOST.adapter,
    capabilities: [...HOST.capabilities].sort(),
    validator_capabilities: HOST.validator_capabilities,
    assets,
  });
  const path = '.rimthan/workspace-manifest.json';
  mkdirSync(join(root, '.rimthan'), { recursive: true });
  writeFileSync(join(root, path), text);
  return {
    id: 'workspace-manifest',
    path,
    media_type: 'application/json',
    content: text,
    encoding: 'utf8',
  };
}

/** The four calls of one walk's first gate, built with `call(name, args)`. */
async function walkArguments(call, root) {
  const start = { workflow: 'research-decision', confirmed_state: STATE, host: HOST };
  const started = await call('rimthan.start_workflow', start);
  const checkpoint = started.checkpoint;
  const manifest = installSetup(root, started.step);
  const prepare = {
    checkpoint,
    confirmed_state: STATE,
    artifacts: [manifest],
    attestation: { project_root: root, repository_policy: HOST.repository_policy },
  };
  const prepared = await call('rimthan.prepare_step_validation', prepare);
  const submit = {
    checkpoint,
    confirmed_state: STATE,
    validation_bundle: prepared.validation_bundle,
    reports: [],
  };
  const advanced = await call('rimthan.submit_step_validation', submit);
  if (advanced.status !== 'advanced')
    throw new Error(`setup did not advance: ${JSON.stringify(advanced)}`);
  // From interview (ungated), continue advances each time.
  const cont = {
    checkpoint: advanced.checkpoint,
    prior_confirmed_state: STATE,
    confirmed_state: STATE,
  };
  return {
    'rimthan.start_workflow': start,
    'rimthan.continue_workflow': cont,
    'rimthan.prepare_step_validation': prepare,
    'rimthan.submit_step_validation': submit,
    checkpoint,
  };
}

async function inProcess(root) {
  const loaded = loadRelease(RELEASE);
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  const ring = new KeyRing([Buffer.from(KEY)]);
  const releases = new ReleaseStore({ activeRoot: RELEASE, active: loaded.release });
  const options = {
    context: { ring, releases, now: () => new Date() },
    logger: createLogger('warn'),
  };
  const contracts = new Map(compileContracts().map((c) => [c.name, c]));
  const call = (name, args) => {
    const result = callEngineTool(contracts.get(name), options, args);
    if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
    return result.structuredContent;
  };
  const args = await walkArguments(call, root);
  for (const name of contracts.keys()) {
    const samples = await timed(IN_PROCESS_CALLS, () => call(name, args[name]));
    print({ figure: name, mode: 'in-process', ...percentiles(samples) });
  }
  return args.checkpoint;
}

async function overHttp(root) {
  const server = await startMhl({
    folder: RELEASE,
    args: ['--profile', 'workflow-engine'],
    env: { MHL_ENGINE_KEY: KEY },
  });
  try {
    const http = client({ port: server.port });
    const call = async (name, args) => {
      const reply = await http.modern('tools/call', { name, arguments: args });
      const result = reply.json?.result;
      if (!result || result.isError) throw new Error(`${name}: ${reply.text.slice(0, 300)}`);
      return result.structuredContent;
    };
    const args = await walkArguments(call, root);
    for (const name of Object.keys(args).filter((k) => k.startsWith('rimthan.'))) {
      const samples = await timed(HTTP_CALLS, () => call(name, args[name]));
      print({ figure: name, mode: 'http', ...percentiles(samples) });
    }
    http.agent.destroy();
  } finally {
    await server.stop();
  }
}

/** The floor: HMAC-SHA256 sign, and verify in constant time, of the checkpoint's payload bytes. */
async function bareHmac(token) {
  const bytes = Buffer.from(token.split('.')[0], 'base64url');
  const key = Buffer.from(KEY);
  const mac = createHmac('sha256', key).update(bytes).digest();
  const sign = await timed(IN_PROCESS_CALLS, () =>
    createHmac('sha256', key).update(bytes).digest(),
  );
  print({
    figure: 'hmac-sign',
    mode: 'in-process',
    payload_bytes: bytes.length,
    ...percentiles(sign),
  });
  const verify = await timed(IN_PROCESS_CALLS, () =>
    timingSafeEqual(createHmac('sha256', key).update(bytes).digest(), mac),
  );
  print({
    figure: 'hmac-verify',
    mode: 'in-process',
    payload_bytes: bytes.length,
    ...percentiles(verify),
  });
}

const root = mkdtempSync(join(tmpdir(), 'mhl-engine-bench-'));
try {
  const checkpoint = await inProcess(root);
  await bareHmac(checkpoint);
  await overHttp(mkdtempSync(join(tmpdir(), 'mhl-engine-bench-http-')));
} finally {
  rmSync(root, { recursive: true, force: true });
}

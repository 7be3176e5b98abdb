// Closed-loop HTTP load (autocannon-style) against three servers, one after another, in one run:
// `mhl serve mcp --http` answering a modern (2026-07-28) tools/call of a one-step workflow, a bare
// node:http endpoint that parses the body and answers a JSON-RPC result, and the official SDK v2
// (`@modelcontextprotocol/server`, createMcpHandler) serving an echo tool. Each server is a child
// process on a free port of 127.0.0.1. CONNECTIONS keep-alive connections each send the next
// request as soon as the previous answer arrives: WARMUP_MS unrecorded, then DURATION_MS
// recorded. A reply counts only with status 200 and a JSON-RPC `result` (not `isError`); anything
// else, a socket error or a timeout is an error. mhl is loaded twice: plain calls (answered as
// JSON), then calls carrying `_meta.progressToken` (answered as an SSE stream: one progress event,
// then the response), reported as `mhl-sse`. One JSON line per figure, then the ratios.
// Build first: this runs dist/.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const DURATION_MS = 5000;
const REQUEST_TIMEOUT_MS = 10_000;
const START_TIMEOUT_MS = 20_000;
const HOST = '127.0.0.1';
const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const CLI = fileURLToPath(new URL('../dist/bin/mhl.js', import.meta.url));
const SDK_URL = import.meta.resolve('@modelcontextprotocol/server');
const ZOD_URL = import.meta.resolve('zod');

const dir = mkdtempSync(join(tmpdir(), 'mhl-bench-http-'));
const flows = join(dir, 'flows');
const cwd = join(dir, 'cwd');
mkdirSync(flows);
mkdirSync(cwd);
writeFileSync(
  join(flows, 'echo.mh'),
  'pipeline Echo {\n  input text: string\n  var out = ""\n  step S { out = text }\n}\n',
);

// Each child prints "listening on http://127.0.0.1:PORT" on stderr, as `mhl serve` does.
const BARE = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let msg;
    try { msg = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch {
      res.writeHead(400).end(); return;
    }
    const text = msg?.params?.arguments?.text ?? '';
    const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: {
      content: [{ type: 'text', text }], structuredContent: { out: text } } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, '${HOST}', () => console.error('listening on http://${HOST}:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

// The SDK's handler is web-standard (fetch-shaped); this is the minimal node:http bridge, doing
// what @modelcontextprotocol/node's toNodeHandler does: build a Request, stream the Response back.
const SDK = `
import http from 'node:http';
import { McpServer, createMcpHandler } from ${JSON.stringify(SDK_URL)};
import * as z from ${JSON.stringify(ZOD_URL)};
const factory = () => {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('Echo', { description: 'echo', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { out: text } }));
  return server;
};
const handler = createMcpHandler(factory, { legacy: 'reject' });
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
      const request = new Request('http://' + req.headers.host + req.url, {
        method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const response = await handler.fetch(request);
      const out = {};
      response.headers.forEach((v, k) => { out[k] = v; });
      res.writeHead(response.status, out);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (e) { res.writeHead(500).end(String(e)); }
  });
});
server.listen(0, '${HOST}', () => console.error('listening on http://${HOST}:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

function startChild(name, args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const ready = new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`${name}: no "listening on" line`)),
      START_TIMEOUT_MS,
    );
    child.stderr.setEncoding('utf8').on('data', (d) => {
      if (stderr.length < 64 * 1024) stderr += d;
      const found = /listening on http:\/\/[^\s]+:(\d+)/.exec(stderr);
      if (found) {
        clearTimeout(timer);
        done(Number(found[1]));
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited (${code}): ${stderr}`));
    });
  });
  ready.catch(() => undefined);
  return { name, child, ready, stop: () => child.exitCode === null && child.kill('SIGTERM') };
}

function toolCall(id, progress) {
  const meta = progress ? { ...META, progressToken: id } : META;
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'Echo', arguments: { text: 'hi', context: { cwd } }, _meta: meta },
  });
}
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': VERSION,
  'mcp-method': 'tools/call',
  'mcp-name': 'Echo',
};

/** The JSON-RPC message in a reply body: plain JSON, or the last `data:` line of an SSE body. */
function messageOf(text, contentType) {
  if (contentType?.startsWith('text/event-stream')) {
    const lines = text.split('\n').filter((l) => l.startsWith('data:'));
    return JSON.parse(lines.at(-1).slice(5));
  }
  return JSON.parse(text);
}

function once(agent, port, id, progress) {
  const body = toolCall(id, progress);
  return new Promise((done) => {
    const req = httpRequest(
      {
        host: HOST,
        port,
        method: 'POST',
        path: '/mcp',
        agent,
        headers: { ...HEADERS, 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => {
          if (res.statusCode !== 200)
            return done(`status ${res.statusCode}: ${text.slice(0, 200)}`);
          try {
            const streamed = res.headers['content-type']?.startsWith('text/event-stream');
            if (progress !== streamed)
              return done(`unexpected content type: ${text.slice(0, 200)}`);
            const msg = messageOf(text, res.headers['content-type']);
            if (msg.result === undefined || msg.result.isError === true || msg.id !== id)
              return done(`no result: ${text.slice(0, 200)}`);
            done(null);
          } catch {
            done(`bad body: ${text.slice(0, 200)}`);
          }
        });
        res.on('error', (e) => done(String(e)));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => done(String(e)));
    req.end(body);
  });
}

/** Latencies in 10 µs buckets up to 10 s (a bounded histogram, not a sample list). */
class Histogram {
  constructor() {
    this.buckets = new Uint32Array(1_000_001);
    this.count = 0;
  }
  add(ms) {
    this.buckets[Math.min(this.buckets.length - 1, Math.round(ms * 100))]++;
    this.count++;
  }
  quantile(q) {
    const target = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i];
      if (seen >= target && seen > 0) return i / 100;
    }
    return Number.NaN;
  }
}

async function load(port, ms, record, progress = false) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: CONNECTIONS,
    maxFreeSockets: CONNECTIONS,
  });
  const hist = new Histogram();
  const end = performance.now() + ms;
  let ok = 0;
  let errors = 0;
  let firstError;
  let id = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      const error = await once(agent, port, ++id, progress);
      const finished = performance.now();
      if (finished > end) break; // answered after the window closed: not counted either way
      if (error === null) {
        ok++;
        if (record) hist.add(finished - started);
      } else {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  agent.destroy();
  return { ok, errors, firstError, hist };
}

const servers = [
  startChild('bare', ['-e', BARE]),
  startChild('sdk', ['--input-type=module', '-e', SDK]),
  startChild('mhl', [CLI, 'serve', 'mcp', flows, '--http', '--port', '0']),
];
const figures = {};
/** Loads one server (warm-up, then the recorded window) and prints its line. */
async function measure(name, port, progress) {
  await load(port, WARMUP_MS, false, progress);
  const { ok, errors, firstError, hist } = await load(port, DURATION_MS, true, progress);
  figures[name] = ok / (DURATION_MS / 1000);
  console.log(
    JSON.stringify({
      bench: 'serve-http',
      server: name,
      connections: CONNECTIONS,
      req_per_s: Math.round(figures[name]),
      p50_ms: hist.quantile(0.5),
      p99_ms: hist.quantile(0.99),
      errors,
      ...(firstError === undefined ? {} : { first_error: firstError }),
    }),
  );
}
try {
  for (const server of servers) {
    const port = await server.ready;
    await measure(server.name, port, false);
    if (server.name === 'mhl') await measure('mhl-sse', port, true);
  }
  const ratio = (a, b) => +(figures[a] / figures[b]).toFixed(2);
  console.log(
    JSON.stringify({ bench: 'serve-http', figure: 'mhl_over_sdk', value: ratio('mhl', 'sdk') }),
  );
  console.log(
    JSON.stringify({ bench: 'serve-http', figure: 'mhl_over_bare', value: ratio('mhl', 'bare') }),
  );
  console.log(
    JSON.stringify({
      bench: 'serve-http',
      figure: 'mhl_sse_over_mhl',
      value: ratio('mhl-sse', 'mhl'),
    }),
  );
} finally {
  for (const server of servers) server.stop();
  await Promise.all(
    servers.map((s) =>
      s.child.exitCode !== null ? undefined : new Promise((d) => s.child.on('close', d)),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}

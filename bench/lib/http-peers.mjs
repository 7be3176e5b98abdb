// The servers `serve-http.bench.mjs` loads beside mhl, each the source of a child process that
// prints "listening on http://127.0.0.1:PORT" on stderr (as `mhl serve` does), and the spawn
// helper they share with mhl itself. Each peer answers the same one-tool echo a one-step mhl
// workflow answers, as plainly as its API allows.
import { spawn } from 'node:child_process';

export const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 20_000;

// The lower bound: parse the body, answer a JSON-RPC result. No MCP at all.
export const BARE = `
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

const echoTool = (z) => `
  server.registerTool('Echo', { description: 'echo', inputSchema: ${z} },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { out: text } }));`;

/**
 * SDK v1 (`@modelcontextprotocol/sdk`) stateless, as its stateless example
 * (`simpleStatelessStreamableHttp.ts`) does it: `sessionIdGenerator: undefined` and a fresh
 * McpServer and transport per request, closed when the response closes. `enableJsonResponse`
 * answers JSON rather than an SSE stream: the SDK's faster form, so the peer is not handicapped.
 * The body is parsed before `handleRequest`, as its express examples do with `express.json()`.
 */
export function sdkV1Source() {
  const mcp = import.meta.resolve('@modelcontextprotocol/sdk/server/mcp.js');
  const transport = import.meta.resolve('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const zod = import.meta.resolve('zod');
  return `
import http from 'node:http';
import { McpServer } from ${JSON.stringify(mcp)};
import { StreamableHTTPServerTransport } from ${JSON.stringify(transport)};
import * as z from ${JSON.stringify(zod)};
const factory = () => {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  ${echoTool('{ text: z.string() }')}
  return server;
};
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const mcp = factory();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => { transport.close(); mcp.close(); });
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (e) { if (!res.headersSent) res.writeHead(500).end(String(e)); }
  });
});
server.listen(0, '${HOST}', () => console.error('listening on http://${HOST}:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;
}

/**
 * SDK v2 (`@modelcontextprotocol/server`, `createMcpHandler`, modern requests only). Its handler
 * is web-standard (fetch-shaped); this is the minimal node:http bridge, doing what
 * `@modelcontextprotocol/node`'s toNodeHandler does: build a Request, stream the Response back.
 */
export function sdkV2Source() {
  const sdk = import.meta.resolve('@modelcontextprotocol/server');
  const zod = import.meta.resolve('zod');
  return `
import http from 'node:http';
import { McpServer, createMcpHandler } from ${JSON.stringify(sdk)};
import * as z from ${JSON.stringify(zod)};
const factory = () => {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  ${echoTool('z.object({ text: z.string() })')}
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
}

/** Spawns `node ARGS`; `ready` resolves with the port its "listening on" line names. */
export function startChild(name, args, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
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
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const closed = new Promise((done) => child.once('close', done));
  return {
    name,
    child,
    ready,
    stop: () => {
      process.off('exit', kill);
      if (child.exitCode === null) child.kill('SIGTERM');
      return closed;
    },
  };
}

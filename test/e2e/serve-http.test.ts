import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { type Reply, rpc, send, serverStarter } from '../helpers/http-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');
const VERSION = '2026-07-28';
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const MODERN_HEADERS = { 'mcp-protocol-version': VERSION };
const INIT_PARAMS = {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'raw', version: '1' },
};

/** The fixture's workflows, as tools/list names them (sorted). */
const WORKFLOWS = ['Fails', 'Greet', 'Sleepy'];

/**
 * The workflow tools among those listed, in listed order. HTTP also lists the server's own
 * control tools (`mhl_run_*` and the like); those are another surface's to test.
 */
function workflowTools(tools: readonly { name: string }[]): string[] {
  return tools.map((t) => t.name).filter((name) => /^[A-Z]/.test(name));
}

function codeOf(reply: Reply): number {
  return (reply.json()['error'] as { code: number }).code;
}

const start = serverStarter(FOLDER);

/** Sends raw bytes on a fresh socket and resolves with what the server answered. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => {
      answer += d;
    });
    socket.on('error', fail).on('close', () => done(answer));
  });
}

describe('mhl serve mcp --http', () => {
  it('is driven unmodified by the official SDK v1 client', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(workflowTools(tools), WORKFLOWS);
      const ok = await client.callTool({
        name: 'Greet',
        arguments: { name: 'ana', times: 2, context: { cwd: tempDir() } },
      });
      assert.deepEqual(ok.structuredContent, { message: 'hello ana, hello ana' });
      await transport.terminateSession();
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
  });

  it('keeps legacy sessions by Mcp-Session-Id and serves both eras on one endpoint', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const init = await send(port, { body: rpc(1, 'initialize', INIT_PARAMS) });
    assert.equal(init.status, 200);
    const sid = init.headers['mcp-session-id'];
    assert.equal(typeof sid, 'string');
    const session = { 'mcp-session-id': sid as string };
    const notified = await send(port, {
      headers: session,
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    assert.deepEqual([notified.status, notified.text], [202, '']);
    const missing = await send(port, { body: rpc(2, 'tools/list') });
    // No session and no `_meta`: the -32602 stdio answers too (test/e2e/error-parity.test.ts).
    assert.deepEqual([missing.status, codeOf(missing)], [400, -32602]);
    const unknown = await send(port, {
      headers: { 'mcp-session-id': 'no-such-session' },
      body: rpc(3, 'tools/list'),
    });
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, -32600]);
    const legacy = await send(port, { headers: session, body: rpc(4, 'tools/list') });
    assert.equal(legacy.status, 200);
    const listed = (legacy.json()['result'] as { tools: { name: string }[] }).tools;
    assert.deepEqual(workflowTools(listed), WORKFLOWS);
    const cwd = tempDir();
    const modern = await send(port, {
      headers: MODERN_HEADERS,
      body: rpc(5, 'tools/call', {
        name: 'Greet',
        arguments: { name: 'cy', context: { cwd } },
        _meta: MODERN_META,
      }),
    });
    assert.equal(modern.status, 200);
    const result = modern.json()['result'] as { structuredContent: unknown; resultType: string };
    assert.deepEqual(
      [result.structuredContent, result.resultType],
      [{ message: 'hello cy' }, 'complete'],
    );
    const noCwd = await send(port, {
      headers: MODERN_HEADERS,
      body: rpc(6, 'tools/call', { name: 'Greet', arguments: { name: 'cy' }, _meta: MODERN_META }),
    });
    // Without context.cwd the call runs in the server's working directory.
    const ran = noCwd.json()['result'] as { structuredContent: unknown };
    assert.deepEqual([noCwd.status, ran.structuredContent], [200, { message: 'hello cy' }]);
    const deleted = await send(port, { method: 'DELETE', headers: session });
    assert.equal(deleted.status, 204);
    const afterDelete = await send(port, { headers: session, body: rpc(7, 'tools/list') });
    assert.equal(afterDelete.status, 404);
    assert.equal((await send(port, { method: 'DELETE', headers: session })).status, 404);
    assert.equal((await send(port, { method: 'DELETE' })).status, 400);
    assert.equal(await server.stop(), 0);
  });

  it('answers every transport fault with its status and JSON-RPC code', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const list = rpc(1, 'tools/list', { _meta: MODERN_META });
    const put = await send(port, { method: 'PUT' });
    assert.deepEqual([put.status, put.headers['allow']], [405, 'POST, GET, DELETE']);
    // Every refusal on the MCP endpoint is a JSON-RPC error a client's transport can read.
    assert.equal(codeOf(put), -32600);
    const badPath = await send(port, { path: '/mcp/%zz', body: list });
    assert.deepEqual([badPath.status, codeOf(badPath)], [400, -32600]);
    const foreign = await send(port, { headers: { origin: 'http://evil.example' }, body: list });
    assert.deepEqual([foreign.status, codeOf(foreign)], [403, -32600]);
    // HEAD is no GET here: it would open no stream, so it is refused like any other verb.
    const head = await send(port, { method: 'HEAD' });
    assert.deepEqual([head.status, head.headers['allow']], [405, 'POST, GET, DELETE']);
    // GET opens a legacy session's standing stream: it must ask for one, and name a live session.
    assert.equal((await send(port, { method: 'GET' })).status, 406);
    const stream = { accept: 'text/event-stream' };
    assert.equal((await send(port, { method: 'GET', headers: stream })).status, 400);
    const unknown = { ...stream, 'mcp-session-id': 'no-such-session' };
    assert.equal((await send(port, { method: 'GET', headers: unknown })).status, 404);
    const tooBig = await send(port, { body: Buffer.alloc(1024 * 1024 + 1, 0x20) });
    assert.equal(tooBig.status, 413);
    const chunked = await send(port, {
      headers: { 'transfer-encoding': 'chunked' },
      body: Buffer.alloc(1024 * 1024 + 1, 0x20),
    });
    assert.equal(chunked.status, 413, 'the cap holds without a Content-Length');
    const exact = await send(port, { body: JSON.stringify(list).padEnd(1024 * 1024, ' ') });
    assert.equal(exact.status, 400, 'a 1 MiB body is read (and fails the header check)');
    const text = await send(port, { headers: { 'content-type': 'text/plain' }, body: list });
    assert.equal(text.status, 415);
    const parse = await send(port, { body: '{nope' });
    assert.deepEqual([parse.status, codeOf(parse)], [400, -32700]);
    const byPath = await send(port, {
      path: '/mcp/tools/list',
      headers: MODERN_HEADERS,
      body: list,
    });
    assert.equal(byPath.status, 200);
    const wrongPath = await send(port, {
      path: '/mcp/tools/call',
      headers: MODERN_HEADERS,
      body: list,
    });
    assert.deepEqual([wrongPath.status, codeOf(wrongPath)], [400, -32600]);
    const noVersion = await send(port, { body: list });
    assert.deepEqual([noVersion.status, codeOf(noVersion)], [400, -32020]);
    const wrongVersion = await send(port, {
      headers: { 'mcp-protocol-version': '2025-11-25' },
      body: list,
    });
    assert.deepEqual([wrongVersion.status, codeOf(wrongVersion)], [400, -32020]);
    const wrongMethod = await send(port, {
      headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call' },
      body: list,
    });
    assert.deepEqual([wrongMethod.status, codeOf(wrongMethod)], [400, -32020]);
    const unknownMethod = await send(port, {
      headers: MODERN_HEADERS,
      body: rpc(2, 'no/such', { _meta: MODERN_META }),
    });
    assert.deepEqual([unknownMethod.status, codeOf(unknownMethod)], [404, -32601]);
    const origin = await send(port, {
      headers: { ...MODERN_HEADERS, origin: 'https://evil.example' },
      body: list,
    });
    assert.equal(origin.status, 403);
    const localOrigin = await send(port, {
      headers: { ...MODERN_HEADERS, origin: 'http://localhost:3000' },
      body: list,
    });
    assert.equal(localOrigin.status, 200);
    const rebound = await send(port, {
      headers: { ...MODERN_HEADERS, host: `evil.example:${port}` },
      body: list,
    });
    assert.equal(rebound.status, 403);
    const named = await send(port, {
      headers: { ...MODERN_HEADERS, host: `localhost:${port + 1}` },
      body: list,
    });
    assert.equal(named.status, 200);
    const readyRebound = await send(port, {
      method: 'GET',
      path: '/health/ready',
      headers: { host: 'evil.example' },
    });
    assert.equal(readyRebound.status, 403);
    assert.equal(await server.stop(), 0);
  });

  it('serves a legacy session only to the principal that opened it', async () => {
    const server = start(['--port', '0', '--principal-header', 'X-Mhl-Principal'], {
      MHL_SERVE_TOKEN: 's3cret',
    });
    const port = await server.ready;
    const as = (who: string) => ({ authorization: 'Bearer s3cret', 'x-mhl-principal': who });
    const init = await send(port, { headers: as('ana'), body: rpc(1, 'initialize', INIT_PARAMS) });
    const id = String(init.headers['mcp-session-id']);
    const inSession = (who: string) => ({ ...as(who), 'mcp-session-id': id });
    const list = rpc(2, 'tools/list');
    // Another principal holding the id gets what an unknown id gets, for every verb.
    const bob = await send(port, { headers: inSession('bob'), body: list });
    assert.deepEqual([bob.status, codeOf(bob)], [404, -32600]);
    const stream = { ...inSession('bob'), accept: 'text/event-stream' };
    assert.equal((await send(port, { method: 'GET', headers: stream })).status, 404);
    assert.equal((await send(port, { method: 'DELETE', headers: inSession('bob') })).status, 404);
    const ana = await send(port, { headers: inSession('ana'), body: list });
    assert.equal(ana.status, 200);
    assert.equal((await send(port, { method: 'DELETE', headers: inSession('ana') })).status, 204);
    assert.equal(await server.stop(), 0);
  });

  it('requires the bearer token and reads the principal header only behind it', async () => {
    const server = start(['--port', '0', '--principal-header', 'X-Mhl-Principal'], {
      MHL_SERVE_TOKEN: 's3cret',
    });
    const port = await server.ready;
    const list = rpc(1, 'tools/list', { _meta: MODERN_META });
    const none = await send(port, { headers: MODERN_HEADERS, body: list });
    assert.deepEqual([none.status, none.headers['www-authenticate']], [401, 'Bearer']);
    assert.equal(codeOf(none), -32600);
    const wrong = await send(port, {
      headers: { ...MODERN_HEADERS, authorization: 'Bearer s3creT' },
      body: list,
    });
    assert.equal(wrong.status, 401);
    const right = await send(port, {
      headers: { ...MODERN_HEADERS, authorization: 'Bearer s3cret', 'x-mhl-principal': 'ana' },
      body: list,
    });
    assert.equal(right.status, 200);
    const probe = await send(port, { method: 'GET', path: '/healthz' });
    assert.equal(probe.status, 200);
    // Each row of the route table answers by its own auth: MCP, metrics and shutdown behind the
    // token, the probes public.
    const viaPath = await send(port, {
      path: '/mcp/tools%2Flist',
      headers: MODERN_HEADERS,
      body: list,
    });
    assert.equal(viaPath.status, 401);
    for (const path of ['/health/ready', '/healthz', '/readyz']) {
      assert.equal((await send(port, { method: 'GET', path })).status, 200, path);
    }
    const bearer = { authorization: 'Bearer s3cret' };
    assert.equal((await send(port, { method: 'GET', path: '/metrics' })).status, 401);
    const metrics = await send(port, { method: 'GET', path: '/metrics', headers: bearer });
    assert.equal(metrics.status, 200);
    // Readiness names the instance to anyone; stopping it still takes the token.
    const ready = await send(port, { method: 'GET', path: '/health/ready' });
    const id = (ready.json() as { instance_id: string }).instance_id;
    const stop = JSON.stringify({ instance_id: id });
    const unauthorised = await send(port, { path: '/control/shutdown', body: stop });
    assert.equal(unauthorised.status, 401);
    const badBody = await send(port, { path: '/control/shutdown', headers: bearer, body: '{}' });
    assert.equal(badBody.status, 400);
    assert.equal((await send(port, { method: 'GET', path: '/nope' })).status, 404);
    const wrongVerb = await send(port, { path: '/healthz', body: '{}' });
    assert.deepEqual([wrongVerb.status, wrongVerb.headers['allow']], [405, 'GET, HEAD']);
    assert.equal((await send(port, { method: 'HEAD', path: '/healthz' })).status, 200);
    const accepted = await send(port, { path: '/control/shutdown', headers: bearer, body: stop });
    assert.equal(accepted.status, 202);
    assert.equal(await server.exited, 0);
  });

  it('refuses bad flags and a principal header without a token', async () => {
    const principal = await runCli(['serve', 'mcp', FOLDER, '--http', '--principal-header', 'X']);
    assert.equal(principal.code, 1);
    assert.match(principal.stderr, /--principal-header needs --token/);
    assert.equal((await runCli(['serve', 'mcp', FOLDER, '--port', '9999'])).code, 2);
    assert.equal((await runCli(['serve', 'mcp', FOLDER, '--http', '--json'])).code, 2);
    assert.equal((await runCli(['serve', 'mcp', FOLDER, '--http', '--port', 'x'])).code, 2);
  });

  it('exits 1 with MCP_SERVER_FAILED when the port is taken', async () => {
    const first = start(['--port', '0']);
    const port = await first.ready;
    const second = await runCli(['serve', 'mcp', FOLDER, '--http', '--port', String(port)]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /MCP_SERVER_FAILED/);
    assert.equal(await first.stop(), 0);
  });

  it('warns that a non-loopback bind without a token is unauthenticated', async () => {
    const server = start(['--addr', '0.0.0.0', '--port', '0']);
    await server.ready;
    assert.match(server.stderr, /unauthenticated/);
    assert.equal(await server.stop(), 0);
  });

  it('counts tool calls by outcome, sessions and request latency on /metrics', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      send(port, {
        headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': name },
        body: rpc(id, 'tools/call', { name, arguments: args, _meta: MODERN_META }),
      });
    const cwd = tempDir();
    assert.equal((await call(1, 'Greet', { name: 'a', context: { cwd } })).status, 200);
    assert.equal((await call(2, 'Fails', { context: { cwd } })).status, 200);
    // Refused arguments are a result (INVALID_ARGUMENT), counted as an invalid call.
    const refused = await call(3, 'Greet', { context: { cwd } });
    const diagnostic = (refused.json()['result'] as { _meta: Record<string, { code: string }> })
      ._meta['mhl/diagnostic'];
    assert.deepEqual([refused.status, diagnostic?.code], [200, 'INVALID_ARGUMENT']);
    const init = await send(port, { body: rpc(4, 'initialize', INIT_PARAMS) });
    assert.equal(init.status, 200);
    const metrics = await send(port, { method: 'GET', path: '/metrics' });
    assert.equal(metrics.status, 200);
    assert.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    for (const line of [
      'mhl_tool_calls_total{outcome="success"} 1',
      'mhl_tool_calls_total{outcome="error"} 1',
      'mhl_tool_calls_total{outcome="invalid"} 1',
      'mhl_sessions_active 1',
      'mhl_request_duration_seconds_count 4',
      'mhl_request_duration_seconds_bucket{le="+Inf"} 4',
    ]) {
      assert.ok(metrics.text.split('\n').includes(line), `missing ${line} in\n${metrics.text}`);
    }
    // The process's own gauges, read against what /proc says of the same process.
    const gauge = (name: string) => {
      const found = new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics.text);
      assert.ok(found?.[1] !== undefined, `missing ${name} in\n${metrics.text}`);
      return Number(found[1]);
    };
    const rss = gauge('process_resident_memory_bytes');
    assert.ok(rss > 10_000_000 && rss < 1_000_000_000, `rss ${rss}`);
    assert.ok(gauge('process_open_fds') > 3);
    assert.ok(gauge('nodejs_active_resources') > 0);
    assert.match(metrics.text, /^nodejs_eventloop_delay_seconds\{quantile="0\.99"\} \d/m);
    assert.equal(await server.stop(), 0);
  });

  it('refuses two Host headers, and names a huge unknown resource URI only briefly', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const twoHosts = await rawRequest(
      port,
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n',
    );
    assert.match(twoHosts, /^HTTP\/1\.1 400 /);
    const uri = `mhl://workflow/${'x'.repeat(900_000)}`;
    const read = await send(port, {
      headers: MODERN_HEADERS,
      body: rpc(1, 'resources/read', { uri, _meta: MODERN_META }),
    });
    assert.equal(codeOf(read), -32602);
    assert.ok(read.text.length < 2_000, `the answer is ${read.text.length} bytes`);
    assert.equal(await server.stop(), 0);
  });

  it('reports readiness and shuts down only for its own instance_id', async () => {
    const otherId = '550e8400-e29b-41d4-a716-446655440000';
    const server = start(['--port', '0']);
    const port = await server.ready;
    const ready = await send(port, { method: 'GET', path: '/health/ready' });
    assert.equal(ready.status, 200);
    const info = ready.json();
    assert.deepEqual([info['status'], info['pid']], ['ready', server.child.pid]);
    const id = info['instance_id'] as string;
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(ready.headers['access-control-allow-origin'], undefined);
    assert.equal((await send(port, { method: 'GET', path: '/readyz' })).status, 200);
    const control = (body: unknown, headers: Record<string, string> = {}) =>
      send(port, { path: '/control/shutdown', body, headers });
    const media = await control({ instance_id: id }, { 'content-type': 'text/plain' });
    assert.deepEqual([media.status, media.json()], [415, { error: 'UNSUPPORTED_MEDIA_TYPE' }]);
    // A duplicate key (plain or spelled with an escape) is refused, not resolved to the last one.
    const twice = `{"instance_id":"${otherId}","instance_id":"${id}"}`;
    const escaped = `{"instance_id":"${otherId}","instance\\u005fid":"${id}"}`;
    for (const bad of [
      '{nope',
      { instance_id: 'x' },
      {},
      { instance_id: id, extra: 1 },
      twice,
      escaped,
    ]) {
      const reply = await control(bad);
      assert.deepEqual([reply.status, reply.json()], [400, { error: 'INVALID_SHUTDOWN_REQUEST' }]);
    }
    const other = await control({ instance_id: '550e8400-e29b-41d4-a716-446655440000' });
    assert.deepEqual([other.status, other.json()], [409, { error: 'INSTANCE_ID_MISMATCH' }]);
    assert.doesNotMatch(other.text, new RegExp(id));
    const accepted = await control({ instance_id: id });
    assert.deepEqual(
      [accepted.status, accepted.json()],
      [202, { status: 'shutting_down', instance_id: id }],
    );
    assert.equal(await server.exited, 0);
  });

  it('cancels an in-flight call on SIGTERM and exits 0 within the budget', async () => {
    const server = start(['--port', '0']);
    const port = await server.ready;
    const call = send(port, {
      agent: new Agent({ keepAlive: true }),
      headers: MODERN_HEADERS,
      body: rpc(1, 'tools/call', {
        name: 'Sleepy',
        arguments: { ms: 30000, context: { cwd: tempDir() } },
        _meta: MODERN_META,
      }),
    });
    // The call is running once the server has logged its start.
    await new Promise<void>((done) => {
      const check = () => {
        if (!server.stderr.includes('call started')) return;
        server.child.stderr.off('data', check);
        done();
      };
      server.child.stderr.on('data', check);
      check();
    });
    const started = Date.now();
    server.child.kill('SIGTERM');
    const reply = await call;
    assert.equal(reply.status, 503);
    assert.equal(await server.exited, 0);
    assert.ok(Date.now() - started < 5000);
  });
});

/**
 * Property: random HTTP headers on /mcp — the ones the server reads (Mcp-Session-Id,
 * MCP-Protocol-Version, Mcp-Method, Mcp-Name, Content-Type, Accept, Origin, Host, Authorization)
 * with plausible and random values, repeated or missing, plus random other names, on random
 * verbs — never get a 5xx, never a stack trace or a server path, and never take the server down.
 * Requests go out on a raw socket, so duplicate and odd headers reach the server as written.
 * Run against a server without and one with `--token`.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';
import { MODERN_META, MODERN_VERSION, rpc, send, serverStarter } from '../helpers/http-server.js';
import { assertNoLeak } from './wire.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/fuzz/serve');
const TOKEN = 'fuzz-token';

const start = serverStarter(FOLDER);
const open = start();
const guarded = start(['--token', TOKEN]);
const ports = { open: 0, guarded: 0 };
const sessions = { open: '', guarded: '' };

async function session(port: number, token?: string): Promise<string> {
  const init = await send(port, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    body: rpc(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'fuzz', version: '1' },
    }),
  });
  assert.equal(init.status, 200, init.text);
  return init.headers['mcp-session-id'] as string;
}

before(async () => {
  ports.open = await open.ready;
  ports.guarded = await guarded.ready;
  sessions.open = await session(ports.open);
  sessions.guarded = await session(ports.guarded, TOKEN);
});

type Which = keyof typeof ports;

/** A header value node and HTTP/1.1 accept on the wire: no CR, LF or other controls. */
const rawValue = fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, ''));
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/);

function valuesFor(which: Which): Record<string, fc.Arbitrary<string>> {
  const port = ports[which];
  return {
    'mcp-session-id': fc.oneof(fc.constantFrom(sessions[which], 'no-such-session', ''), rawValue),
    'mcp-protocol-version': fc.oneof(
      fc.constantFrom('2025-11-25', '2025-03-26', '2025-06-18', MODERN_VERSION, '2030-01-01'),
      rawValue,
    ),
    'mcp-method': fc.oneof(fc.constantFrom('tools/list', 'tools/call', 'ping'), rawValue),
    'mcp-name': fc.oneof(fc.constantFrom('Greet', 'Nope'), rawValue),
    'content-type': fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ),
      rawValue,
    ),
    accept: fc.oneof(
      fc.constantFrom('application/json', 'application/json, text/event-stream', '*/*', 'x/y'),
      rawValue,
    ),
    origin: fc.oneof(
      fc.constantFrom(
        `http://127.0.0.1:${port}`,
        `http://localhost:${port}`,
        'http://evil',
        'null',
      ),
      rawValue,
    ),
    host: fc.oneof(
      fc.constantFrom(`127.0.0.1:${port}`, `localhost:${port}`, 'evil.example', '[::1]', ''),
      rawValue,
    ),
    authorization: fc.oneof(
      fc.constantFrom(`Bearer ${TOKEN}`, 'Bearer', 'Bearer wrong', `bearer ${TOKEN}`, 'Basic eDp5'),
      rawValue,
    ),
  };
}

const BODIES = [
  JSON.stringify(rpc(1, 'tools/list', { _meta: MODERN_META })),
  JSON.stringify(rpc(2, 'tools/call', { name: 'Greet', arguments: { name: 'x' } })),
  JSON.stringify(
    rpc(3, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'f', version: '1' },
    }),
  ),
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  '',
  '{',
];

interface Raw {
  readonly verb: string;
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

function request(which: Which): fc.Arbitrary<Raw> {
  const values = valuesFor(which);
  const known = Object.entries(values).map(([name, value]) =>
    fc.tuple(fc.constant(name), value).map(([n, v]) => [n, v] as const),
  );
  const other = fc.tuple(token, rawValue).map(([n, v]) => [n, v] as const);
  return fc.record({
    verb: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
    path: fc.constantFrom('/mcp', '/mcp', '/mcp/tools/list', '/mcp?x=1', '/health/ready'),
    headers: fc.array(fc.oneof({ weight: 4, arbitrary: fc.oneof(...known) }, other), {
      maxLength: 10,
    }),
    body: fc.constantFrom(...BODIES),
  });
}

/**
 * Writes `raw` on a fresh socket and resolves with the status and the whole answer. An event
 * stream the request opened is cut as soon as its headers arrive (it would stay open).
 */
function exchange(port: number, raw: Raw): Promise<{ status: number; text: string }> {
  const lines = [`${raw.verb} ${raw.path} HTTP/1.1`];
  // Host first when the request names one, else the right one, as a client would.
  if (!raw.headers.some(([n]) => n === 'host')) lines.push(`host: 127.0.0.1:${port}`);
  for (const [name, value] of raw.headers) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${Buffer.byteLength(raw.body)}`, 'connection: close', '', raw.body);
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(lines.join('\r\n')));
    let text = '';
    const finish = () => {
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
      done({ status, text });
    };
    socket.setEncoding('latin1').on('data', (d: string) => {
      text += d;
      const head = text.slice(0, text.indexOf('\r\n\r\n') >>> 0);
      if (text.includes('\r\n\r\n') && /content-type: text\/event-stream/i.test(head)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('error', fail).on('close', finish);
  });
}

function property(which: Which) {
  return fc.asyncProperty(request(which), async (raw) => {
    const port = ports[which];
    const answer = await exchange(port, raw);
    assert.ok(answer.status >= 200, `no HTTP answer: ${JSON.stringify(answer.text)}`);
    assert.ok(answer.status < 500, `status ${answer.status}: ${answer.text.slice(0, 400)}`);
    assertNoLeak(answer.text, JSON.stringify(raw));
    const ping = await send(port, {
      headers: {
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'server/discover',
        ...(which === 'guarded' ? { authorization: `Bearer ${TOKEN}` } : {}),
      },
      body: rpc(0, 'server/discover', { _meta: MODERN_META }),
    });
    assert.equal(ping.status, 200, `the server stopped answering: ${ping.text}`);
  });
}

describe('/mcp under random headers', () => {
  it('never answers 5xx without a token configured', async (t) => {
    await holds(t, property('open'), 150);
  });

  it('never answers 5xx with --token', async (t) => {
    await holds(t, property('guarded'), 150);
  });

  it('is still the same two processes', () => {
    assert.equal(open.child.exitCode, null, open.stderr.slice(-2000));
    assert.equal(guarded.child.exitCode, null, guarded.stderr.slice(-2000));
  });
});

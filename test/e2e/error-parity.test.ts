/**
 * The same mistake gets the same JSON-RPC error code on stdio and on HTTP: each malformed
 * request below is sent over both transports (before any session, then on a 2025-11-25 session)
 * and the codes are compared one for one. A request with neither a session nor the modern
 * `_meta` is -32602 with the same hint on both.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import { MODERN_META, MODERN_VERSION, send, serverStarter } from '../helpers/http-server.js';
import { stdioStarter } from '../helpers/stdio-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');
const startHttp = serverStarter(FOLDER);
const startStdio = stdioStarter();

const request = (id: number | null, method: string, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const withMeta = (params: Record<string, unknown> = {}) => ({ ...params, _meta: MODERN_META });

/** A modern `_meta` without its protocol version: not modern, whatever else it carries. */
const WITHOUT_VERSION = {
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1.0.0' },
};

/**
 * A mistake: its name, what is sent (an object, or raw text) and the code both must answer: a
 * JSON-RPC error code, or the diagnostic code of a tool result with `isError`.
 */
type Case = readonly [string, unknown, number | string];

/** Mistakes made before any session exists. */
const SESSIONLESS: readonly Case[] = [
  ['no session and no _meta', request(1, 'tools/list'), -32602],
  ['no session, a tool call without _meta', request(2, 'tools/call', { name: 'Greet' }), -32602],
  [
    '_meta without clientCapabilities',
    request(3, 'tools/list', {
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION },
    }),
    -32602,
  ],
  [
    '_meta with clientCapabilities that are not an object',
    request(31, 'tools/list', {
      _meta: { ...MODERN_META, 'io.modelcontextprotocol/clientCapabilities': 1 },
    }),
    -32602,
  ],
  [
    'an unsupported modern protocol version',
    request(32, 'tools/list', {
      _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    }),
    -32022,
  ],
  ['server/discover without _meta', request(33, 'server/discover'), -32602],
  ['server/discover with empty params', request(34, 'server/discover', {}), -32602],
  [
    'server/discover with _meta but no protocol version',
    request(35, 'server/discover', { _meta: WITHOUT_VERSION }),
    -32602,
  ],
  [
    'server/discover with _meta but no clientCapabilities',
    request(36, 'server/discover', {
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION },
    }),
    -32602,
  ],
  ['an unknown method', request(4, 'no/such', withMeta()), -32601],
  ['params as an array', request(5, 'tools/list', [1]), -32602],
  ['a tool name that is not a string', request(6, 'tools/call', withMeta({ name: 7 })), -32602],
  ['an unknown tool', request(7, 'tools/call', withMeta({ name: 'Nope' })), -32602],
  [
    'an undeclared input',
    request(8, 'tools/call', withMeta({ name: 'Greet', arguments: { name: 'a', nope: 1 } })),
    'INVALID_ARGUMENT',
  ],
  ['a batch without a 2025-03-26 session', [request(9, 'tools/list', withMeta())], -32600],
  ['an empty batch', [], -32600],
  ['not JSON', '{"jsonrpc": "2.0", "id": 1,', -32700],
  ['a message over 1 MiB', `"${'x'.repeat(1024 * 1024)}"`, -32600],
  ['not a JSON-RPC message', { hello: 'world' }, -32600],
  ['the wrong jsonrpc version', { jsonrpc: '1.0', id: 10, method: 'tools/list' }, -32600],
  ['a method that is not a string', { jsonrpc: '2.0', id: 11, method: 5 }, -32600],
];

/** Mistakes made on a negotiated 2025-11-25 session. */
const IN_SESSION: readonly Case[] = [
  ['an unknown method', request(21, 'no/such'), -32601],
  // server/discover is a 2026-07-28 method: a legacy session does not stand in for its _meta.
  ['server/discover on a session, without _meta', request(27, 'server/discover'), -32602],
  ['a batch on a 2025-11-25 session', [request(22, 'tools/list')], -32600],
  ['initialize in a batch', [request(23, 'initialize', {})], -32600],
  ['a tool call without a name', request(24, 'tools/call', {}), -32602],
  ['a cursor that was never issued', request(25, 'tools/list', { cursor: 'bogus' }), -32602],
  [
    'an input of the wrong type',
    request(26, 'tools/call', { name: 'Greet', arguments: { name: 5 } }),
    'INVALID_ARGUMENT',
  ],
];

interface Answer {
  readonly code: unknown;
  readonly message: unknown;
}

/** The error of an answer (the first one of a batch answer). */
function errorOf(answer: unknown): Answer {
  const one = (Array.isArray(answer) ? answer[0] : answer) as Record<string, unknown> | undefined;
  const error = one?.['error'] as Record<string, unknown> | undefined;
  const result = one?.['result'] as Record<string, unknown> | undefined;
  // A tool result with isError counts as its diagnostic code, so a change of form shows too.
  if (error === undefined && result?.['isError'] === true) {
    const meta = result['_meta'] as Record<string, Record<string, unknown>> | undefined;
    return { code: meta?.['mhl/diagnostic']?.['code'], message: undefined };
  }
  return { code: error?.['code'], message: error?.['message'] };
}

/** HTTP headers a careful client sends with `sent`: the modern ones when it carries `_meta`. */
function headersFor(sent: unknown, session: string | undefined): Record<string, string> {
  const out: Record<string, string> = session === undefined ? {} : { 'mcp-session-id': session };
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) return out;
  const params = (sent as Record<string, unknown>)['params'] as Record<string, unknown> | undefined;
  const meta = params?.['_meta'] as Record<string, unknown> | undefined;
  const version = meta?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof version === 'string') out['mcp-protocol-version'] = version;
  const method = (sent as Record<string, unknown>)['method'];
  if (typeof method === 'string' && version !== undefined) out['mcp-method'] = method;
  return out;
}

const INITIALIZE = request(0, 'initialize', {
  protocolVersion: '2025-11-25',
  capabilities: {},
  clientInfo: { name: 'e2e', version: '1.0.0' },
});

async function compare(cases: readonly Case[], legacy: boolean): Promise<void> {
  const stdio = startStdio(FOLDER);
  const http = startHttp();
  const port = await http.ready;
  let session: string | undefined;
  if (legacy) {
    await stdio.initialize();
    const init = await send(port, { body: INITIALIZE });
    session = String(init.headers['mcp-session-id']);
    await send(port, {
      headers: { 'mcp-session-id': session },
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
  }
  for (const [what, sent, code] of cases) {
    const overStdio = errorOf(await stdio.reply(sent));
    const reply = await send(port, { headers: headersFor(sent, session), body: sent });
    const overHttp = errorOf(reply.json());
    assert.equal(overStdio.code, code, `${what} over stdio: ${JSON.stringify(overStdio)}`);
    assert.equal(overHttp.code, code, `${what} over HTTP: ${reply.text}`);
  }
}

describe('one error code per mistake on stdio and HTTP', { timeout: 60_000 }, () => {
  it('before any session', () => compare(SESSIONLESS, false));
  it('on a 2025-11-25 session', () => compare(IN_SESSION, true));

  it('answers a request with neither session nor _meta with the same -32602 and hint', async () => {
    const stdio = startStdio(FOLDER);
    const http = startHttp();
    const port = await http.ready;
    const sent = request(1, 'tools/list');
    const overStdio = errorOf(await stdio.exchange(1, sent));
    const reply = await send(port, { body: sent });
    assert.equal(reply.status, 400);
    assert.deepEqual(errorOf(reply.json()), overStdio);
    assert.equal(overStdio.code, -32602);
    assert.match(String(overStdio.message), /initialize/);
  });

  it('refuses server/discover lacking the modern _meta with HTTP 400, as the suite probes it', async () => {
    const http = startHttp();
    const port = await http.ready;
    // The 2026-07-28 headers, as a stateless client sends them, with a body that lacks _meta.
    const headers = { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' };
    for (const params of [{}, { _meta: WITHOUT_VERSION }]) {
      const sent = request(101, 'server/discover', params);
      const reply = await send(port, { headers, body: sent });
      assert.equal(reply.status, 400, reply.text);
      const answer = reply.json() as { id: unknown; error: { code: number; data: unknown } };
      assert.equal(answer.id, 101);
      assert.equal(answer.error.code, -32602);
      assert.deepEqual(answer.error.data, {
        missing:
          Object.keys(params).length === 0
            ? [
                'io.modelcontextprotocol/protocolVersion',
                'io.modelcontextprotocol/clientCapabilities',
              ]
            : ['io.modelcontextprotocol/protocolVersion'],
      });
    }
    const ok = await send(port, { headers, body: request(102, 'server/discover', withMeta()) });
    assert.equal(ok.status, 200);
  });
});

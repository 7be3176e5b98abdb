/**
 * Property: whatever is POSTed to /mcp — any JSON value, JSON-RPC-shaped objects with random
 * method/params/id, raw bytes that are often not UTF-8, truncated JSON, batches — in either era
 * (a legacy session from `initialize`, or stateless 2026-07-28 requests with their headers and
 * `_meta`), the one real server process answers with an expected status and well-formed
 * JSON-RPC, never a stack trace or a server path, and still answers a ping afterwards.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';
import {
  MODERN_META,
  MODERN_VERSION,
  type Reply,
  rpc,
  send,
  serverStarter,
} from '../helpers/http-server.js';
import { assertAnswers, assertNoLeak, type Era, payload, type Shaped } from './wire.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/fuzz/serve');
/** Statuses /mcp may answer a POST with; 500 (or a dropped connection) is always a bug. */
const STATUSES = new Set([200, 202, 400, 404, 413, 415, 503]);

const start = serverStarter(FOLDER);
const server = start();
let port = 0;
/** The legacy sessions' headers, by protocol version (2025-03-26 is the one that takes batches). */
const sessions = new Map<string, Record<string, string>>();

before(async () => {
  port = await server.ready;
  for (const version of ['2025-11-25', '2025-03-26']) {
    const init = await send(port, {
      body: rpc(1, 'initialize', {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'fuzz', version: '1' },
      }),
    });
    assert.equal(init.status, 200, init.text);
    const headers = {
      'mcp-session-id': init.headers['mcp-session-id'] as string,
      'mcp-protocol-version': version,
    };
    const ack = await send(port, {
      headers,
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    assert.equal(ack.status, 202);
    sessions.set(version, headers);
  }
});

/** One POST: the body, what it holds (for id checks) and era headers matching its method. */
interface Post {
  readonly body: string | Buffer;
  readonly sent: readonly Shaped[];
  readonly method?: unknown;
  readonly name?: unknown;
  /** Whether the client accepts an event stream (progress then turns the answer into one). */
  readonly stream?: boolean;
}

function post(era: Era): fc.Arbitrary<Post> {
  return fc.tuple(payload(era), fc.boolean()).map(([p, stream]) => {
    if (p.single === undefined) return { body: p.data, sent: p.sent };
    const { message } = p.single;
    const name = (message['params'] as { name?: unknown } | undefined)?.name;
    return { body: p.data, sent: p.sent, method: message['method'], name, stream };
  });
}

function headersFor(era: Era, p: Post): Record<string, string> {
  const accept: Record<string, string> = p.stream
    ? { accept: 'application/json, text/event-stream' }
    : {};
  if (era === 'legacy') return { ...accept, ...sessions.get('2025-11-25') };
  if (era === 'batches') return { ...accept, ...sessions.get('2025-03-26') };
  const headers: Record<string, string> = { ...accept, 'mcp-protocol-version': MODERN_VERSION };
  if (typeof p.method === 'string' && /^[\x21-\x7e]+$/.test(p.method)) {
    headers['mcp-method'] = p.method;
  }
  if (typeof p.name === 'string' && /^[\x21-\x7e]+$/.test(p.name)) headers['mcp-name'] = p.name;
  return headers;
}

/** The JSON messages in a reply: the JSON body, or each `data:` of an event stream. */
function messagesOf(reply: Reply): unknown[] {
  if (reply.text === '') return [];
  if (String(reply.headers['content-type']).startsWith('text/event-stream')) {
    return reply.text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as unknown);
  }
  const value = JSON.parse(reply.text) as unknown;
  return Array.isArray(value) ? value : [value];
}

/** A ping on a session; 2026-07-28 has no ping, so there `server/discover`. */
async function stillAnswers(era: Era): Promise<void> {
  const body =
    era === 'modern' ? rpc(0, 'server/discover', { _meta: MODERN_META }) : rpc(0, 'ping');
  const headers =
    era === 'modern'
      ? { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' }
      : headersFor(era, { body: '', sent: [] });
  const reply = await send(port, { headers, body });
  assert.equal(reply.status, 200, `ping after: ${reply.status} ${reply.text}`);
  assert.deepEqual(reply.json()['id'], 0);
}

function property(era: Era) {
  return fc.asyncProperty(post(era), async (p) => {
    const reply = await send(port, { headers: headersFor(era, p), body: p.body });
    const request = typeof p.body === 'string' ? p.body : p.body.toString('latin1');
    assert.ok(STATUSES.has(reply.status), `status ${reply.status}: ${reply.text.slice(0, 300)}`);
    assertNoLeak(reply.text, request);
    let messages: unknown[];
    try {
      messages = messagesOf(reply);
    } catch {
      assert.fail(`status ${reply.status} with a body that is not JSON: ${reply.text}`);
    }
    if (reply.status === 202) assert.equal(reply.text, '', '202 carries no body');
    else assert.ok(messages.length > 0, `status ${reply.status} without an answer`);
    assertAnswers(messages, p.sent, `status ${reply.status}`);
    await stillAnswers(era);
  });
}

describe('POST /mcp under random bodies', () => {
  it('answers legacy-session bodies well-formed', async (t) => {
    await holds(t, property('legacy'), 150);
  });

  it('answers bodies on a 2025-03-26 session (batches allowed) well-formed', async (t) => {
    await holds(t, property('batches'), 100);
  });

  it('answers stateless 2026-07-28 bodies well-formed', async (t) => {
    await holds(t, property('modern'), 150);
  });

  it('is still the same process', () => {
    assert.equal(server.child.exitCode, null, server.stderr.slice(-2000));
  });
});

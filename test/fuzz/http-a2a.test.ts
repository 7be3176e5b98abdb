/**
 * Property: whatever is POSTed to /a2a — any JSON value, A2A-shaped requests of either version
 * with random methods, messages, parts, metadata, ids and `A2A-Version` headers, raw bytes —
 * the one real `mhl serve a2a` process answers with an expected status and one well-formed
 * JSON-RPC response (or an event stream of them, each with the request's id), never a stack
 * trace or a server path, and still serves the card afterwards.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import { a2aStarter } from '../helpers/a2a.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';
import { send } from '../helpers/http-server.js';
import { anyId, anyString, assertNoLeak, assertResponse, bytes, truncated } from './wire.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/a2a/several');
/** Statuses /a2a may answer a POST with; 500 (or a dropped connection) is always a bug. */
const STATUSES = new Set([200, 400, 413, 415]);
const METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'CancelTask',
  'ListTasks',
  'SubscribeToTask',
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/list',
  'tasks/resubscribe',
  'GetExtendedAgentCard',
  'tasks/pushNotificationConfig/set',
] as const;

const start = a2aStarter();
const server = start(FOLDER);
let port = 0;

before(async () => {
  port = await server.ready;
});

const json = fc.jsonValue({ maxDepth: 3 });
/** A string of the shape of a task id (32 hex digits), so some lookups reach the registry. */
const hexId = fc
  .array(fc.constantFrom(...'0123456789abcdef'), { minLength: 32, maxLength: 32 })
  .map((digits) => digits.join(''));
const part = fc.oneof(
  fc.record({ text: anyString }),
  fc.record({ kind: fc.constant('text'), text: anyString }),
  fc.record({ data: json }),
  fc.record({ kind: fc.constant('data'), data: fc.dictionary(anyString, json, { maxKeys: 3 }) }),
  fc.record({ url: anyString }),
  json,
);
const metadata = fc.oneof(
  fc.record(
    {
      skill: fc.oneof(fc.constantFrom('Pair', 'Numbers', ''), anyString, json),
      input: fc.oneof(
        fc.record({ left: anyString }, { requiredKeys: [] }),
        fc.record({ n: fc.oneof(fc.integer(), anyString) }, { requiredKeys: [] }),
        json,
      ),
    },
    { requiredKeys: [] },
  ),
  json,
);
const message = fc.record(
  {
    messageId: anyString,
    role: fc.constantFrom('ROLE_USER', 'user', 'ROLE_AGENT'),
    parts: fc.oneof(fc.array(part, { maxLength: 4 }), json),
    metadata,
    taskId: fc.oneof(anyString, hexId, json),
  },
  { requiredKeys: [] },
);
const params = fc.oneof(
  fc.record(
    {
      message,
      configuration: fc.record(
        { returnImmediately: fc.constant(true), blocking: fc.constant(false) },
        { requiredKeys: [] },
      ),
      id: fc.oneof(anyString, hexId),
      pageSize: fc.oneof(fc.integer({ min: -5, max: 200 }), json),
      pageToken: fc.oneof(anyString, json),
      status: fc.oneof(fc.constantFrom('TASK_STATE_WORKING', 'working', 'nope'), json),
    },
    { requiredKeys: [] },
  ),
  json,
);
const request = fc
  .record({
    id: anyId,
    method: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...METHODS) }, anyString),
    params,
  })
  .map((r) => JSON.stringify({ jsonrpc: '2.0', ...r }));
const body = fc.oneof(
  { weight: 6, arbitrary: request },
  { weight: 1, arbitrary: json.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: truncated },
  { weight: 1, arbitrary: bytes },
);
const version = fc.oneof(
  fc.constantFrom(undefined, '1.0', '0.3', '0.2', '', '1.0.1', '2.0'),
  fc.string({ maxLength: 8, unit: 'grapheme-ascii' }),
);

/** The JSON-RPC responses of an answer: its body, or each event of its stream. */
function answersOf(contentType: string | undefined, text: string): unknown[] {
  if (contentType?.startsWith('text/event-stream')) {
    return text
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) => {
        assert.ok(block.startsWith('data: '), `an event: ${block}`);
        return JSON.parse(block.slice('data: '.length)) as unknown;
      });
  }
  return [JSON.parse(text) as unknown];
}

describe('A2A endpoint under random input', () => {
  it('answers every POST with an expected status and well-formed JSON-RPC', async (t) => {
    await holds(
      t,
      fc.asyncProperty(body, version, async (sent, header) => {
        const what = typeof sent === 'string' ? sent.slice(0, 300) : '<bytes>';
        const reply = await send(port, {
          path: '/a2a',
          headers: header === undefined ? {} : { 'a2a-version': header },
          body: sent,
        });
        assert.ok(STATUSES.has(reply.status), `status ${reply.status} for ${what}: ${reply.text}`);
        assertNoLeak(reply.text, typeof sent === 'string' ? sent : '');
        for (const answer of answersOf(reply.headers['content-type'], reply.text)) {
          assertResponse(answer, what);
        }
      }),
      200,
    );
    const card = await send(port, { method: 'GET', path: '/.well-known/agent-card.json' });
    assert.equal(card.status, 200);
  });
});

/**
 * The A2A endpoint under malformed, oversized and hostile input: every refusal is the error
 * code (and HTTP status) the table below names, names the field where there is one, and leaks
 * no server path or stack. Then the server still answers a well-formed request.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { a2a, a2aStarter, messageV1 } from '../helpers/a2a.js';
import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { send } from '../helpers/http-server.js';

const SEVERAL = resolve(REPO_ROOT, 'test/fixtures/a2a/several');
const SINGLE = resolve(REPO_ROOT, 'test/fixtures/a2a/single');
const start = a2aStarter();
const V1 = { version: '1.0' };

type Json = Record<string, unknown>;

function errorOf(body: Json): Json {
  assert.ok(body['error'] !== undefined, `an error: ${JSON.stringify(body)}`);
  return body['error'] as Json;
}

describe('A2A input checks', () => {
  it('refuses malformed, oversized and hostile requests with the right codes', async () => {
    const server = start(SEVERAL);
    const port = await server.ready;
    const raw = (body: string | Buffer, headers: Record<string, string> = {}) =>
      send(port, { path: '/a2a', headers, body });
    const cases: [
      string,
      () => Promise<{ status: number; text: string; json(): Json }>,
      number,
      number,
      string?,
    ][] = [
      ['not JSON', () => raw('{"jsonrpc":'), 400, -32700],
      ['a batch', () => raw('[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]'), 400, -32600],
      ['no id', () => raw('{"jsonrpc":"2.0","method":"GetTask","params":{}}'), 400, -32600],
      ['wrong jsonrpc', () => raw('{"jsonrpc":"1.0","id":1,"method":"GetTask"}'), 400, -32600],
      ['method not a string', () => raw('{"jsonrpc":"2.0","id":1,"method":7}'), 400, -32600],
      [
        'too deep',
        () =>
          raw(
            `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":${'['.repeat(200)}${']'.repeat(200)}}`,
          ),
        400,
        -32600,
      ],
      ['over 1 MiB', () => raw(Buffer.alloc(1024 * 1024 + 10, 'a')), 413, -32600],
      ['not JSON content', () => raw('{}', { 'content-type': 'text/plain' }), 415, -32600],
      [
        'an unknown version',
        () => a2a(port, 'GetTask', { id: 'x' }, { version: '9.9' }),
        200,
        -32009,
      ],
      [
        'two versions',
        () => a2a(port, 'GetTask', { id: 'x' }, { version: '1.0, 0.3' }),
        200,
        -32009,
      ],
      ['a 1.0 method without the header', () => a2a(port, 'GetTask', { id: 'x' }), 200, -32601],
      ['a 0.3 method under 1.0', () => a2a(port, 'tasks/get', { id: 'x' }, V1), 200, -32601],
      ['params not an object', () => a2a(port, 'GetTask', [1, 2], V1), 200, -32602, 'params'],
      ['no message', () => a2a(port, 'SendMessage', {}, V1), 200, -32602, 'message'],
      [
        'parts not an array',
        () => a2a(port, 'SendMessage', { message: { parts: 'x' } }, V1),
        200,
        -32602,
        'message.parts',
      ],
      [
        'a part with nothing',
        () => a2a(port, 'SendMessage', { message: { parts: [{ kind: 'x'.repeat(5000) }] } }, V1),
        200,
        -32602,
        'message.parts[0]',
      ],
      [
        'a file part',
        () =>
          a2a(
            port,
            'SendMessage',
            { message: messageV1([{ url: 'file:///etc/passwd' }], { skill: 'Numbers' }) },
            V1,
          ),
        200,
        -32005,
      ],
      [
        'too many parts',
        () =>
          a2a(
            port,
            'SendMessage',
            {
              message: messageV1(
                Array.from({ length: 100 }, () => ({ text: 'x' })),
                { skill: 'Numbers' },
              ),
            },
            V1,
          ),
        200,
        -32602,
        'message.parts',
      ],
      [
        'no skill among several',
        () => a2a(port, 'SendMessage', { message: messageV1([{ data: {} }]) }, V1),
        200,
        -32602,
        'message.metadata.skill',
      ],
      [
        'an unknown skill',
        () => a2a(port, 'SendMessage', { message: messageV1([], { skill: '../../etc' }) }, V1),
        200,
        -32602,
        'message.metadata.skill',
      ],
      [
        'skill not a string',
        () => a2a(port, 'SendMessage', { message: messageV1([], { skill: 42 }) }, V1),
        200,
        -32602,
        'message.metadata.skill',
      ],
      [
        'input not an object',
        () =>
          a2a(
            port,
            'SendMessage',
            { message: messageV1([], { skill: 'Numbers', input: 'x' }) },
            V1,
          ),
        200,
        -32602,
        'message.metadata.input',
      ],
      [
        'an undeclared input',
        () =>
          a2a(
            port,
            'SendMessage',
            { message: messageV1([], { skill: 'Numbers', input: { nope: 1 } }) },
            V1,
          ),
        200,
        -32602,
        'input.nope',
      ],
      [
        'a text for a skill with no single string input',
        () =>
          a2a(port, 'SendMessage', { message: messageV1([{ text: 'hi' }], { skill: 'Pair' }) }, V1),
        200,
        -32602,
        'message.parts',
      ],
      ['an unknown task', () => a2a(port, 'GetTask', { id: '0'.repeat(32) }, V1), 200, -32001],
      [
        'a task id that is a path',
        () => a2a(port, 'GetTask', { id: '../../../etc/passwd' }, V1),
        200,
        -32001,
      ],
      [
        'a follow-up to an unknown task',
        () => a2a(port, 'SendMessage', { message: messageV1([], undefined, 'a'.repeat(32)) }, V1),
        200,
        -32001,
      ],
      ['id not a string', () => a2a(port, 'CancelTask', { id: 5 }, V1), 200, -32602, 'id'],
      [
        'a forged page token',
        () => a2a(port, 'ListTasks', { pageToken: 'Li4vZXRj' }, V1),
        200,
        -32602,
        'pageToken',
      ],
      [
        'a page too large',
        () => a2a(port, 'ListTasks', { pageSize: 100000 }, V1),
        200,
        -32602,
        'pageSize',
      ],
      [
        'a bad state filter',
        () => a2a(port, 'ListTasks', { status: 'TASK_STATE_BOGUS' }, V1),
        200,
        -32602,
        'status',
      ],
      [
        'push notifications',
        () => a2a(port, 'CreateTaskPushNotificationConfig', {}, V1),
        200,
        -32003,
      ],
      ['the extended card', () => a2a(port, 'GetExtendedAgentCard', {}, V1), 200, -32007],
      [
        'a subscription to an unknown task',
        () => a2a(port, 'SubscribeToTask', { id: 'b'.repeat(32) }, V1),
        200,
        -32001,
      ],
    ];
    for (const [what, request, status, code, field] of cases) {
      const reply = await request();
      assert.equal(reply.status, status, `${what}: ${reply.text}`);
      const error = errorOf(reply.json());
      assert.equal(error['code'], code, `${what}: ${reply.text}`);
      if (field !== undefined) assert.equal((error['data'] as Json)?.['field'], field, what);
      assert.ok(!reply.text.includes(REPO_ROOT), `${what} leaks no path: ${reply.text}`);
      assert.ok(!/\bat [\w.]+ \(/.test(reply.text), `${what} leaks no stack`);
      assert.ok(reply.text.length < 4096, `${what} echoes nothing long`);
    }
    // A text part to a skill with several inputs lists them, so the caller can correct itself.
    const text = await a2a(
      port,
      'SendMessage',
      { message: messageV1([{ text: 'hi' }], { skill: 'Pair' }) },
      V1,
    );
    assert.deepEqual((errorOf(text.json())['data'] as Json)['inputs'], ['left', 'right']);
    const none = await a2a(
      port,
      'SendMessage',
      { message: messageV1([{ text: '3' }], { skill: 'Numbers' }) },
      V1,
    );
    assert.deepEqual((errorOf(none.json())['data'] as Json)['inputs'], ['n']);
    // The version error names what is supported.
    const version = await a2a(port, 'GetTask', { id: 'x' }, { version: '2.0' });
    assert.deepEqual((errorOf(version.json())['data'] as Json)['supported'], ['1.0', '0.3']);
    // Still serving.
    const ok = await a2a(port, 'SendMessage', { message: messageV1([], { skill: 'Numbers' }) }, V1);
    assert.equal(
      ((ok.json()['result'] as Json)['task'] as Json)['id'] !== undefined,
      true,
      ok.text,
    );
  });

  it('runs the only workflow when the skill is left out, a lone text part as its string input', async () => {
    const server = start(SINGLE);
    const port = await server.ready;
    const textual = await a2a(port, 'SendMessage', { message: messageV1([{ text: 'hello' }]) }, V1);
    const task = (textual.json()['result'] as Json)['task'] as Json;
    assert.equal((task['status'] as Json)['state'], 'TASK_STATE_COMPLETED', textual.text);
    const parts = ((task['artifacts'] as Json[])[0] as Json)['parts'] as Json[];
    assert.deepEqual((parts[0] as Json)['data'], { said: 'you said: hello' });
    const data = await a2a(port, 'message/send', {
      message: {
        kind: 'message',
        messageId: 'm',
        role: 'user',
        parts: [{ kind: 'data', data: { text: 'hi' } }],
      },
      configuration: { blocking: true },
    });
    const legacy = data.json()['result'] as Json;
    assert.equal((legacy['status'] as Json)['state'], 'completed', data.text);
    const missing = await a2a(port, 'SendMessage', { message: messageV1([]) }, V1);
    assert.equal(errorOf(missing.json())['code'], -32602);
  });

  it('refuses an unsafe or malformed setup before serving anything', async () => {
    const spoofable = await runCli(['serve', 'a2a', SEVERAL, '--principal-header', 'X-Principal']);
    assert.equal(spoofable.code, 1);
    assert.match(spoofable.stderr, /^mhl serve a2a: --principal-header needs --token/m);
    const port = await runCli(['serve', 'a2a', SEVERAL, '--port', '70000']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /--port takes a whole number/);
    const stdio = await runCli(['serve', 'a2a', SEVERAL, '--transport', 'stdio']);
    assert.equal(stdio.code, 2);
    const wait = await runCli(['serve', 'a2a', SEVERAL], { env: { MHL_SERVE_A2A_WAIT: 'soon' } });
    assert.equal(wait.code, 2);
    assert.match(wait.stderr, /MHL_SERVE_A2A_WAIT takes a duration/);
  });

  it('refuses a cross-origin browser and wrong verbs, but serves the card to GET', async () => {
    const server = start(SEVERAL);
    const port = await server.ready;
    const evil = await send(port, {
      path: '/a2a',
      headers: { origin: 'https://evil.example' },
      body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
    });
    assert.equal(evil.status, 403);
    const card = await send(port, {
      method: 'GET',
      path: '/.well-known/agent-card.json',
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(card.status, 403);
    const get = await send(port, { method: 'GET', path: '/a2a' });
    assert.equal(get.status, 405);
    const post = await send(port, {
      method: 'POST',
      path: '/.well-known/agent-card.json',
      body: {},
    });
    assert.equal(post.status, 405);
    const rebinding = await send(port, {
      method: 'GET',
      path: '/.well-known/agent-card.json',
      headers: { host: 'attacker.example' },
    });
    assert.equal(rebinding.status, 403);
  });
});

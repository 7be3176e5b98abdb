import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  classifyMessage,
  errorResponse,
  exceedsDepth,
  parseErrorResponse,
  parseJson,
  RPC_ERROR_CODES,
  RpcError,
  recoverRequestId,
  resultResponse,
} from '../../../src/protocol/index.js';

describe('RpcError', () => {
  it('serialises code, message and data, and omits absent data', () => {
    const error = new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'bad', { field: 'x' });
    assert.deepEqual(error.toJSON(), { code: -32602, message: 'bad', data: { field: 'x' } });
    assert.deepEqual(new RpcError(-32601, 'nope').toJSON(), { code: -32601, message: 'nope' });
    assert.ok(error instanceof Error);
  });

  it('has the codes of mcp-wire.md and mhl-serve.md §10', () => {
    assert.deepEqual(
      Object.values(RPC_ERROR_CODES).sort((a, b) => a - b),
      [-32700, -32603, -32602, -32601, -32600, -32022, -32021, -32020, -32002, -32000],
    );
  });
});

describe('response builders', () => {
  it('builds result and error envelopes', () => {
    assert.deepEqual(resultResponse(1, { a: 1 }), { jsonrpc: '2.0', id: 1, result: { a: 1 } });
    assert.deepEqual(errorResponse('x', { code: -32603, message: 'internal error' }), {
      jsonrpc: '2.0',
      id: 'x',
      error: { code: -32603, message: 'internal error' },
    });
  });

  it('answers a parse error with a null id', () => {
    assert.deepEqual(parseErrorResponse(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
  });
});

describe('parseJson', () => {
  it('parses JSON and answers -32700 for anything else', () => {
    assert.deepEqual(parseJson('{"a":[1]}'), { ok: true, value: { a: [1] } });
    for (const text of ['', '{', '{"a":1,}', 'undefined', "{'a':1}", '\u0000']) {
      const parsed = parseJson(text);
      assert.equal(parsed.ok, false, text);
      if (!parsed.ok) assert.equal(parsed.response.error.code, -32700);
    }
  });
});

describe('classifyMessage', () => {
  it('classifies requests, notifications and peer responses', () => {
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, method: 'm' }).kind, 'request');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 'a', method: 'm' }).kind, 'request');
    assert.equal(classifyMessage({ jsonrpc: '2.0', method: 'm' }).kind, 'notification');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: null, method: 'm' }).kind, 'notification');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, result: {} }).kind, 'response');
    assert.equal(classifyMessage({ jsonrpc: '2.0', id: 1, error: {} }).kind, 'response');
  });

  it('passes params on by reference and keeps unknown members out of the message', () => {
    const params = { a: 1 };
    const inbound = classifyMessage({ jsonrpc: '2.0', id: 1, method: 'm', params, extra: true });
    assert.equal(inbound.kind, 'request');
    if (inbound.kind === 'request') {
      assert.equal(inbound.message.params, params);
      assert.deepEqual(Object.keys(inbound.message).sort(), ['id', 'jsonrpc', 'method', 'params']);
    }
  });

  const invalid: Array<[string, unknown, string | number | null, string]> = [
    ['a number', 1, null, ''],
    ['a string', 'x', null, ''],
    ['null', null, null, ''],
    ['an array', [1], null, ''],
    ['no jsonrpc', { id: 1, method: 'm' }, 1, 'jsonrpc'],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'm' }, 1, 'jsonrpc'],
    ['no method', { jsonrpc: '2.0', id: 2 }, 2, 'method'],
    ['numeric method', { jsonrpc: '2.0', id: 3, method: 7 }, 3, 'method'],
    ['empty method', { jsonrpc: '2.0', id: 4, method: '' }, 4, 'method'],
    ['string params', { jsonrpc: '2.0', id: 5, method: 'm', params: 'x' }, 5, 'params'],
    ['null params', { jsonrpc: '2.0', id: 6, method: 'm', params: null }, 6, 'params'],
    ['boolean id', { jsonrpc: '2.0', id: true, method: 'm' }, null, 'id'],
    ['object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'm' }, null, 'id'],
    ['array id', { jsonrpc: '2.0', id: [1], method: 'm' }, null, 'id'],
  ];
  for (const [name, value, id, field] of invalid) {
    it(`rejects ${name} with -32600`, () => {
      const inbound = classifyMessage(value);
      assert.equal(inbound.kind, 'invalid');
      if (inbound.kind === 'invalid') {
        assert.equal(inbound.response.id, id);
        assert.equal(inbound.response.error.code, -32600);
        assert.deepEqual(inbound.response.error.data, { field });
      }
    });
  }
});

describe('exceedsDepth', () => {
  it('counts the value itself as level 1', () => {
    assert.equal(exceedsDepth(1, 0), false);
    assert.equal(exceedsDepth({}, 1), false);
    assert.equal(exceedsDepth({ a: [] }, 1), true);
    assert.equal(exceedsDepth({ a: [] }, 2), false);
    assert.equal(exceedsDepth([[{ b: 'x' }]], 3), false);
    assert.equal(exceedsDepth([[{ b: {} }]], 3), true);
  });

  it('terminates on a cyclic value', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.equal(exceedsDepth(cyclic, 64), true);
  });
});

describe('recoverRequestId', () => {
  it('finds the top-level id first or last, and nowhere else', () => {
    assert.equal(recoverRequestId('{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"', ''), 7);
    assert.equal(recoverRequestId('{"method":"x","jsonrpc":"2.0","id":"r-1","params":', ''), 'r-1');
    assert.equal(
      recoverRequestId('{"jsonrpc":"2.0","method":"x","params":{', 'xx"},"id":-3}\n'.trim()),
      -3,
    );
    // An id inside params: the object it closes is nested, so it is not the request's.
    assert.equal(
      recoverRequestId('{"jsonrpc":"2.0","method":"x","params":{"id":1,', '"p":{"id":5}}}'),
      null,
    );
    assert.equal(recoverRequestId('{"params":{"id":1},"jsonrpc":"2.0"', 'x"}}'), null);
    // Escaped quotes and objects as ids are not guessed at.
    assert.equal(recoverRequestId('{"id":"a\\"b"', ''), null);
    assert.equal(recoverRequestId('{"id":{"x":1}', ''), null);
  });
});

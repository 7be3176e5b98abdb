import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Dispatcher } from '../../../src/protocol/index.js';
import { errorOf, modernMeta, request, resultOf, setup } from './harness.js';

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

describe('Dispatcher: hostile input', () => {
  it('rejects deep nesting with -32600 without overflowing the stack', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/call', async () => ({}));
    const deepParams = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":${nested(200_000)}}}`;
    for (const text of [
      deepParams,
      nested(500_000),
      `{"x":${'{"x":'.repeat(100_000)}1${'}'.repeat(100_001)}`,
    ]) {
      const answer = errorOf(await dispatcher.handleText(text, conn));
      assert.equal(answer.error.code, -32600);
      assert.deepEqual(answer.error.data, { maxDepth: 128 });
      // The request's own id when its top level has one, so its client can match the refusal.
      assert.equal(answer.id, text === deepParams ? 1 : null);
    }
  });

  it('accepts nesting up to the limit', async () => {
    const { dispatcher, conn } = setup({ maxDepth: 40 });
    dispatcher.register('tools/call', async () => ({}));
    const message = request(1, 'tools/call', { _meta: modernMeta(), a: JSON.parse(nested(38)) });
    resultOf(await dispatcher.handle(message, conn));
    const deeper = request(1, 'tools/call', { _meta: modernMeta(), a: JSON.parse(nested(39)) });
    assert.equal(errorOf(await dispatcher.handle(deeper, conn)).error.code, -32600);
  });

  it('rejects wrong types for id, method and params', async () => {
    const { dispatcher, conn } = setup();
    const cases = [
      '{"jsonrpc":"2.0","id":true,"method":"ping"}',
      '{"jsonrpc":"2.0","id":{"$gt":0},"method":"ping"}',
      '{"jsonrpc":"2.0","id":1,"method":["ping"]}',
      '{"jsonrpc":"2.0","id":1,"method":null}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":42}',
      '{"jsonrpc":2,"id":1,"method":"ping"}',
    ];
    for (const text of cases) {
      assert.equal(errorOf(await dispatcher.handleText(text, conn)).error.code, -32600, text);
    }
  });

  it('does not echo a huge method name in full', async () => {
    const { dispatcher, conn } = setup();
    const answer = errorOf(await dispatcher.handle(request(1, 'x'.repeat(100_000)), conn));
    assert.equal(answer.error.code, -32601);
    assert.ok(JSON.stringify(answer).length < 1000);
  });

  it('keeps __proto__ keys as plain data', async () => {
    const { dispatcher, conn } = setup();
    const seen: Array<Record<string, unknown>> = [];
    dispatcher.register('tools/call', async (params) => {
      seen.push(params);
      return JSON.parse('{"__proto__":{"polluted":true},"content":[]}');
    });
    const meta = JSON.stringify(modernMeta());
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","__proto__":{"polluted":true},' +
      `"params":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"_meta":${meta}}}`;
    const result = resultOf(await dispatcher.handleText(text, conn));
    const params = seen[0];
    assert.ok(params !== undefined);
    assert.equal(Object.getPrototypeOf(params), Object.prototype);
    assert.equal(Object.hasOwn(params, '__proto__'), true);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.equal((Object.prototype as Record<string, unknown>)['polluted'], undefined);
  });

  it('does not read modern _meta keys from a __proto__ member', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/list', async () => ({ tools: [] }));
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"__proto__":' +
      `${JSON.stringify(modernMeta())}}}}`;
    assert.equal(errorOf(await dispatcher.handleText(text, conn)).error.code, -32602);
  });

  it('keeps initialize clientInfo and capabilities free of prototype changes', async () => {
    const dispatcher = new Dispatcher({
      serverInfo: { name: 'mhl', version: '0' },
      capabilities: {},
    });
    const { conn } = setup();
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
      '"capabilities":{"__proto__":{"admin":true}},"clientInfo":{"name":"c","version":"1","__proto__":{"admin":true}}}}';
    resultOf(await dispatcher.handleText(text, conn));
    const info = conn.session.clientInfo as Record<string, unknown>;
    const caps = conn.session.clientCapabilities as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(info), Object.prototype);
    assert.equal(info['admin'], undefined);
    assert.equal(Object.getPrototypeOf(caps), Object.prototype);
    assert.equal(caps['admin'], undefined);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RpcError } from '../../../src/protocol/index.js';
import {
  CAPABILITIES,
  CC,
  connection,
  errorOf,
  initialize,
  modernMeta,
  notification,
  PV,
  request,
  resultOf,
  SERVER_INFO,
  SI,
  setup,
} from './harness.js';

const echo = async (params: Record<string, unknown>) => ({ echoed: params['value'] ?? null });

describe('Dispatcher: envelope errors', () => {
  it('answers unparseable text with -32700 and a null id', async () => {
    const { dispatcher, conn } = setup();
    assert.deepEqual(await dispatcher.handleText('{"jsonrpc":"2.0",', conn), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
  });

  it('answers invalid request shapes with -32600', async () => {
    const { dispatcher, conn } = setup();
    for (const text of [
      '1',
      '"x"',
      'null',
      '{}',
      '{"jsonrpc":"2.0","id":1}',
      '{"id":1,"method":"ping"}',
    ]) {
      assert.equal(errorOf(await dispatcher.handleText(text, conn)).error.code, -32600, text);
    }
  });

  it('answers array params with -32602', async () => {
    const { dispatcher, conn } = setup();
    const answer = errorOf(await dispatcher.handle(request(1, 'ping', [1, 2]), conn));
    assert.equal(answer.error.code, -32602);
    assert.equal(answer.id, 1);
  });

  it('ignores notifications it does not know, id:null messages and peer responses', async () => {
    let calls = 0;
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/list', async () => {
      calls += 1;
      return {};
    });
    assert.equal(
      await dispatcher.handle(notification('notifications/whatever', {}), conn),
      undefined,
    );
    const nullId = {
      jsonrpc: '2.0',
      id: null,
      method: 'tools/list',
      params: { _meta: modernMeta() },
    };
    assert.equal(await dispatcher.handle(nullId, conn), undefined);
    assert.equal(await dispatcher.handle({ jsonrpc: '2.0', id: 9, result: {} }, conn), undefined);
    assert.equal(calls, 0);
  });
});

describe('Dispatcher: batches', () => {
  it('rejects a batch on a session that is not 2025-03-26', async () => {
    for (const version of [undefined, '2025-11-25', '2025-06-18'] as const) {
      const { dispatcher, conn } = setup();
      if (version !== undefined) await initialize(dispatcher, conn, version);
      const answer = errorOf(await dispatcher.handle([request(1, 'ping')], conn));
      assert.equal(answer.error.code, -32600, String(version));
      assert.equal(answer.id, null);
    }
  });

  it('answers each member of a batch on a 2025-03-26 session, skipping notifications', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/call', echo);
    await initialize(dispatcher, conn, '2025-03-26');
    const answer = await dispatcher.handle(
      [
        request(1, 'tools/call', { value: 'a' }),
        notification('notifications/initialized'),
        request(2, 'nope/nope'),
        { jsonrpc: '2.0', id: 3 },
        request(4, 'initialize', { protocolVersion: '2025-03-26' }),
      ],
      conn,
    );
    assert.ok(Array.isArray(answer));
    assert.deepEqual(
      answer.map((item) => [item.id, 'error' in item ? item.error.code : item.result]),
      [
        [1, { echoed: 'a' }],
        [2, -32601],
        [3, -32600],
        [4, -32600],
      ],
    );
  });

  it('answers an empty batch with -32600 and a notification-only batch with nothing', async () => {
    const { dispatcher, conn } = setup();
    await initialize(dispatcher, conn, '2025-03-26');
    assert.equal(errorOf(await dispatcher.handle([], conn)).error.code, -32600);
    const only = [notification('notifications/initialized'), notification('notifications/x')];
    assert.equal(await dispatcher.handle(only, conn), undefined);
  });
});

describe('Dispatcher: era gate', () => {
  it('rejects a legacy request before initialize with -32602 naming both ways in', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/list', async () => ({ tools: [] }));
    for (const method of ['tools/list']) {
      const answer = errorOf(await dispatcher.handle(request(1, method, {}), conn));
      assert.equal(answer.error.code, -32602);
      assert.deepEqual(answer.error.data, { missing: [PV, CC] });
      // The brief requires the message to point at both remedies.
      assert.match(answer.error.message, /_meta.*initialize/);
    }
  });

  it('rejects a partial modern _meta with -32602', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('resources/list', async () => ({ resources: [] }));
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ [PV]: '2026-07-28' }, { missing: [CC] }],
      [{ [CC]: {} }, { missing: [PV] }],
      [{ [PV]: '2026-07-28', [CC]: 'x' }, { field: `_meta.${CC}` }],
      [{ [PV]: 20260728, [CC]: {} }, { field: `_meta.${PV}` }],
    ];
    for (const [meta, data] of cases) {
      const params = { _meta: meta };
      const answer = errorOf(await dispatcher.handle(request(1, 'resources/list', params), conn));
      assert.equal(answer.error.code, -32602, JSON.stringify(meta));
      assert.deepEqual(answer.error.data, data);
    }
  });

  it('rejects an unknown modern version with -32022 even on a legacy session', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/call', echo);
    await initialize(dispatcher, conn);
    const params = { _meta: modernMeta({ [PV]: '2099-01-01' }) };
    const answer = errorOf(await dispatcher.handle(request(7, 'tools/call', params), conn));
    assert.deepEqual(answer, {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32022,
        message: 'Unsupported protocol version',
        data: { supported: ['2026-07-28'], requested: '2099-01-01' },
      },
    });
  });

  it('serves both eras interleaved on one connection', async () => {
    const { dispatcher, conn } = setup();
    const seen: unknown[] = [];
    dispatcher.register('run/status', async (_params, ctx) => {
      seen.push([ctx.era, ctx.protocolVersion, ctx.session === conn.session]);
      return {};
    });
    const modern = () => request(seen.length, 'run/status', { _meta: modernMeta() });
    resultOf(await dispatcher.handle(modern(), conn));
    assert.equal(
      errorOf(await dispatcher.handle(request(9, 'run/status'), conn)).error.code,
      -32602,
    );
    await initialize(dispatcher, conn, '2025-06-18');
    const both = await Promise.all([
      dispatcher.handle(request('l', 'run/status', {}), conn),
      dispatcher.handle(modern(), conn),
    ]);
    both.map(resultOf);
    assert.deepEqual(seen, [
      ['modern', '2026-07-28', false],
      ['legacy', '2025-06-18', true],
      ['modern', '2026-07-28', false],
    ]);
  });
});

describe('Dispatcher: built-ins', () => {
  it('negotiates initialize and records the client on the session', async () => {
    const table = [
      ['2025-11-25', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['2024-11-05', '2025-11-25'],
      ['2026-07-28', '2025-11-25'],
    ];
    for (const [requested, answered] of table) {
      const { dispatcher, conn } = setup({ instructions: 'hello' });
      const clientInfo = { name: 'c', version: '1' };
      const params = { protocolVersion: requested, capabilities: { roots: {} }, clientInfo };
      const result = resultOf(await dispatcher.handle(request(1, 'initialize', params), conn));
      assert.deepEqual(result, {
        protocolVersion: answered,
        capabilities: CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: 'hello',
      });
      assert.equal(conn.session.protocolVersion, answered);
      assert.deepEqual(conn.session.clientInfo, clientInfo);
      assert.deepEqual(conn.session.clientCapabilities, { roots: {} });
    }
  });

  it('rejects initialize without a string protocolVersion with -32602', async () => {
    const { dispatcher, conn } = setup();
    for (const params of [undefined, {}, { protocolVersion: 20251125 }]) {
      const answer = errorOf(await dispatcher.handle(request(1, 'initialize', params), conn));
      assert.equal(answer.error.code, -32602);
    }
    assert.equal(conn.session.negotiated, false);
  });

  it('marks the session initialized only after initialize', async () => {
    const { dispatcher, conn } = setup();
    await dispatcher.handle(notification('notifications/initialized'), conn);
    assert.equal(conn.session.initialized, false);
    await initialize(dispatcher, conn);
    assert.equal(conn.session.initialized, true);
  });

  it('answers ping only in the legacy era', async () => {
    const { dispatcher, conn } = setup();
    assert.deepEqual(resultOf(await dispatcher.handle(request(1, 'ping'), conn)), {});
    const modern = { _meta: modernMeta() };
    const answer = errorOf(await dispatcher.handle(request(2, 'ping', modern), conn));
    assert.equal(answer.error.code, -32601);
    const init = { _meta: modernMeta(), protocolVersion: '2025-11-25' };
    const initAnswer = errorOf(await dispatcher.handle(request(3, 'initialize', init), conn));
    assert.equal(initAnswer.error.code, -32601);
    assert.equal(conn.session.negotiated, false);
  });

  it('answers server/discover in the modern shape, with the modern _meta', async () => {
    const { dispatcher, conn } = setup({ instructions: 'use the tools' });
    const expected = {
      supportedVersions: ['2026-07-28'],
      capabilities: CAPABILITIES,
      instructions: 'use the tools',
      resultType: 'complete',
      ttlMs: 300000,
      cacheScope: 'public',
      _meta: { [SI]: SERVER_INFO },
    };
    const params = { _meta: modernMeta() };
    const result = resultOf(await dispatcher.handle(request(1, 'server/discover', params), conn));
    assert.deepEqual(result, expected);
    const bare = setup();
    const plain = resultOf(
      await bare.dispatcher.handle(request(1, 'server/discover', params), bare.conn),
    );
    assert.equal('instructions' in plain, false);
  });

  it('refuses server/discover without the modern _meta (-32602 naming what is missing)', async () => {
    const { dispatcher, conn } = setup();
    const { [PV]: _version, ...withoutVersion } = modernMeta();
    const cases: [unknown, string[]][] = [
      [undefined, [PV, CC]],
      [{}, [PV, CC]],
      [{ _meta: {} }, [PV, CC]],
      [{ _meta: withoutVersion }, [PV]],
    ];
    for (const [params, missing] of cases) {
      const answer = errorOf(await dispatcher.handle(request(1, 'server/discover', params), conn));
      assert.equal(answer.error.code, -32602, JSON.stringify(params));
      assert.deepEqual(answer.error.data, { missing });
    }
    // Without the version the rest of _meta does not make it modern, nor does a legacy session.
    await initialize(dispatcher, conn);
    const legacy = errorOf(await dispatcher.handle(request(2, 'server/discover'), conn));
    assert.equal(legacy.error.code, -32602);
  });

  it('answers an unknown method with -32601 in every era', async () => {
    const { dispatcher, conn } = setup();
    const before = errorOf(await dispatcher.handle(request(1, 'nope/x'), conn));
    assert.deepEqual(before.error, {
      code: -32601,
      message: 'method not found: nope/x',
      data: { method: 'nope/x' },
    });
    const modern = { _meta: modernMeta() };
    assert.equal(
      errorOf(await dispatcher.handle(request(2, 'a', modern), conn)).error.code,
      -32601,
    );
    await initialize(dispatcher, conn);
    assert.equal(errorOf(await dispatcher.handle(request(3, 'b'), conn)).error.code, -32601);
    const notifyAsRequest = errorOf(
      await dispatcher.handle(request(4, 'notifications/cancelled'), conn),
    );
    assert.equal(notifyAsRequest.error.code, -32601);
  });

  it('refuses to register built-ins, notifications and duplicates', () => {
    const { dispatcher } = setup();
    dispatcher.register('tools/call', echo);
    for (const method of [
      'initialize',
      'ping',
      'server/discover',
      'notifications/x',
      'tools/call',
    ]) {
      assert.throws(() => dispatcher.register(method, echo), Error, method);
    }
  });
});

describe('Dispatcher: handler outcomes', () => {
  it('decorates modern results and leaves legacy results as returned', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/list', async () => ({ tools: [] }));
    dispatcher.register('tools/call', async () => ({ content: [], _meta: { k: 1 } }));
    const modern = { _meta: modernMeta() };
    assert.deepEqual(resultOf(await dispatcher.handle(request(1, 'tools/list', modern), conn)), {
      tools: [],
      resultType: 'complete',
      _meta: { [SI]: SERVER_INFO },
      ttlMs: 300000,
      cacheScope: 'public',
    });
    assert.deepEqual(resultOf(await dispatcher.handle(request(2, 'tools/call', modern), conn)), {
      content: [],
      resultType: 'complete',
      _meta: { k: 1, [SI]: SERVER_INFO },
    });
    await initialize(dispatcher, conn);
    assert.deepEqual(resultOf(await dispatcher.handle(request(3, 'tools/list'), conn)), {
      tools: [],
    });
  });

  it('passes RpcError through with its data', async () => {
    const { dispatcher, conn, errors } = setup();
    dispatcher.register('tools/call', async () => {
      throw new RpcError(-32602, 'unknown tool "x"', { tool: 'x' });
    });
    const answer = errorOf(
      await dispatcher.handle(request(1, 'tools/call', { _meta: modernMeta() }), conn),
    );
    assert.deepEqual(answer.error, {
      code: -32602,
      message: 'unknown tool "x"',
      data: { tool: 'x' },
    });
    assert.equal(errors.length, 0);
  });

  it('answers other exceptions with -32603 without internals and reports them', async () => {
    const { dispatcher, conn, errors } = setup();
    const secret = new Error('ENOENT /srv/secret/token.txt');
    dispatcher.register('tools/call', async () => {
      throw secret;
    });
    dispatcher.register('tools/list', () => {
      throw new TypeError('sync');
    });
    dispatcher.register('resources/list', async () => null as unknown as Record<string, unknown>);
    const meta = { _meta: modernMeta() };
    for (const [id, method] of [
      [1, 'tools/call'],
      [2, 'tools/list'],
      [3, 'resources/list'],
    ] as const) {
      const answer = errorOf(await dispatcher.handle(request(id, method, meta), conn));
      assert.deepEqual(answer, {
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: 'internal error' },
      });
    }
    assert.equal(errors.length, 3);
    assert.equal(errors[0]?.error, secret);
    assert.deepEqual(errors[0]?.site, { method: 'tools/call', id: 1 });
    assert.ok(errors[1]?.error instanceof TypeError);
  });

  it('survives an onError that throws', async () => {
    const { dispatcher, conn } = setup({
      onError: () => {
        throw new Error('sink down');
      },
    });
    dispatcher.register('tools/call', async () => {
      throw new Error('boom');
    });
    const answer = errorOf(
      await dispatcher.handle(request(1, 'tools/call', { _meta: modernMeta() }), conn),
    );
    assert.equal(answer.error.code, -32603);
  });

  it('gives handlers the principal and the client capabilities of their era', async () => {
    const { dispatcher } = setup();
    const conn = connection('alice');
    const seen: unknown[] = [];
    dispatcher.register('tools/call', async (params, ctx) => {
      seen.push([ctx.principal, ctx.clientCapabilities, ctx.requestId, params['x']]);
      return {};
    });
    const caps = { elicitation: {} };
    const modern = { x: 1, _meta: modernMeta({ [CC]: caps }) };
    resultOf(await dispatcher.handle(request('m', 'tools/call', modern), conn));
    const init = { protocolVersion: '2025-06-18', capabilities: { roots: {} } };
    resultOf(await dispatcher.handle(request(0, 'initialize', init), conn));
    resultOf(await dispatcher.handle(request('l', 'tools/call', { x: 2 }), conn));
    assert.deepEqual(seen, [
      ['alice', caps, 'm', 1],
      ['alice', { roots: {} }, 'l', 2],
    ]);
  });

  it('touches the session on every message', async () => {
    let now = 10;
    const { dispatcher, conn } = setup({ now: () => now });
    now = 500;
    await dispatcher.handleText('not json', conn);
    assert.equal(conn.session.lastSeenAt, 500);
    now = 700;
    await dispatcher.handle(request(1, 'ping'), conn);
    assert.equal(conn.session.lastSeenAt, 700);
  });

  it('makes fresh sessions on its own clock for transports', () => {
    const { dispatcher } = setup({ now: () => 42 });
    const a = dispatcher.newSession();
    const b = dispatcher.newSession();
    assert.deepEqual([a.createdAt, a.negotiated, a.allowsBatch], [42, false, false]);
    assert.notEqual(a.id, b.id);
    assert.match(a.id, /^[0-9a-f-]{36}$/);
    const named = dispatcher.newSession({ id: 'ephemeral-1', now: 7 });
    assert.deepEqual([named.id, named.createdAt], ['ephemeral-1', 7]);
  });
});

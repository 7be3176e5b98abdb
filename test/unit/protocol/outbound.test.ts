import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RequestContext, RpcError } from '../../../src/protocol/index.js';
import {
  connection,
  deferred,
  errorOf,
  flush,
  initialize,
  modernMeta,
  notification,
  request,
  resultOf,
  setup,
} from './harness.js';

/** A `tools/call` handler that asks its client once and answers with what it got. */
function asking(dispatcher: ReturnType<typeof setup>['dispatcher']) {
  const contexts: RequestContext[] = [];
  dispatcher.register('tools/call', async (_params, ctx) => {
    contexts.push(ctx);
    if (ctx.request === undefined) return { asked: false };
    try {
      return { answer: await ctx.request('elicitation/create', { message: 'why?' }) };
    } catch (error) {
      return { failed: error instanceof RpcError ? error.code : String(error) };
    }
  });
  return contexts;
}

/** The id of the n-th request the server sent on `sent`. */
function outboundId(sent: readonly object[], n = 1): string | number {
  const requests = sent.filter((m) => 'id' in m) as { id: string | number }[];
  const found = requests[n - 1];
  assert.ok(found, `expected ${n} server request(s), got ${JSON.stringify(sent)}`);
  return found.id;
}

describe('server-to-client requests', () => {
  it('sends a request on the connection and routes the client response back to the handler', async () => {
    const { dispatcher, conn } = setup();
    asking(dispatcher);
    await initialize(dispatcher, conn);
    const answer = dispatcher.handle(request(1, 'tools/call', { name: 't' }), conn);
    await flush();
    assert.deepEqual(conn.sent, [
      {
        jsonrpc: '2.0',
        id: outboundId(conn.sent),
        method: 'elicitation/create',
        params: { message: 'why?' },
      },
    ]);
    assert.equal(dispatcher.awaitingClient, 1);
    const id = outboundId(conn.sent);
    // A response to nothing, or from another session, is ignored.
    const other = connection();
    assert.equal(await dispatcher.handle({ jsonrpc: '2.0', id, result: {} }, other), undefined);
    assert.equal(
      await dispatcher.handle({ jsonrpc: '2.0', id: 'nope', result: {} }, conn),
      undefined,
    );
    assert.equal(dispatcher.awaitingClient, 1);
    const reply = { jsonrpc: '2.0', id, result: { action: 'accept', content: { a: 1 } } };
    assert.equal(await dispatcher.handle(reply, conn), undefined);
    assert.deepEqual(resultOf(await answer), { answer: { action: 'accept', content: { a: 1 } } });
    assert.equal(dispatcher.awaitingClient, 0);
  });

  it('passes a client error on as an RpcError with its code', async () => {
    const { dispatcher, conn } = setup();
    asking(dispatcher);
    await initialize(dispatcher, conn);
    const answer = dispatcher.handle(request(1, 'tools/call', {}), conn);
    await flush();
    const id = outboundId(conn.sent);
    await dispatcher.handle({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no' } }, conn);
    assert.deepEqual(resultOf(await answer), { failed: -32601 });
  });

  it('cancels the server request, telling the client, when its request is cancelled', async () => {
    const { dispatcher, conn } = setup();
    asking(dispatcher);
    await initialize(dispatcher, conn);
    const answer = dispatcher.handle(request(7, 'tools/call', {}), conn);
    await flush();
    const id = outboundId(conn.sent);
    await dispatcher.handle(notification('notifications/cancelled', { requestId: 7 }), conn);
    assert.equal(await answer, undefined, 'a cancelled request gets no response');
    await flush();
    assert.deepEqual(conn.sent.at(-1), {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason: 'the request that needed it ended' },
    });
    assert.equal(dispatcher.awaitingClient, 0);
    // A late answer finds nobody waiting.
    assert.equal(await dispatcher.handle({ jsonrpc: '2.0', id, result: {} }, conn), undefined);
  });

  it('rejects what waits on a session when the session closes', async () => {
    const { dispatcher, conn } = setup();
    const asked = deferred<unknown>();
    dispatcher.register('tools/call', async (_params, ctx) => {
      const pending = ctx.request?.('elicitation/create', {}) ?? Promise.resolve({});
      pending.catch((error: unknown) => asked.resolve(error));
      return pending;
    });
    await initialize(dispatcher, conn);
    const answer = dispatcher.handle(request(1, 'tools/call', {}), conn);
    await flush();
    assert.equal(dispatcher.awaitingClient, 1);
    dispatcher.closeSession(conn.session, 'gone');
    assert.equal(((await asked.promise) as DOMException).name, 'AbortError');
    assert.equal(await answer, undefined);
    assert.equal(dispatcher.awaitingClient, 0);
  });

  it('refuses to ask once the request was answered', async () => {
    const { dispatcher, conn } = setup();
    const contexts = asking(dispatcher);
    dispatcher.register('tools/list', async (_params, ctx) => {
      contexts.push(ctx);
      return { tools: [] };
    });
    await initialize(dispatcher, conn);
    resultOf(await dispatcher.handle(request(1, 'tools/list', {}), conn));
    const late = contexts.at(-1)?.request;
    assert.ok(late);
    await assert.rejects(late('elicitation/create', {}));
    assert.equal(conn.sent.length, 0);
  });

  it('gives modern requests their retry material and no way to ask', async () => {
    const { dispatcher, conn } = setup();
    const contexts = asking(dispatcher);
    const params = {
      name: 't',
      inputResponses: { k: { action: 'accept' } },
      requestState: 'opaque',
      _meta: modernMeta(),
    };
    assert.deepEqual(resultOf(await dispatcher.handle(request(1, 'tools/call', params), conn)), {
      asked: false,
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mhl', version: '0.1.0' } },
    });
    const ctx = contexts[0];
    assert.deepEqual(
      [ctx?.inputResponses, ctx?.requestState],
      [{ k: { action: 'accept' } }, 'opaque'],
    );
    for (const bad of [{ requestState: 1 }, { inputResponses: [] }]) {
      const error = errorOf(
        await dispatcher.handle(request(2, 'tools/call', { ...bad, _meta: modernMeta() }), conn),
      );
      assert.equal(error.error.code, -32602);
    }
  });

  it('keeps a handler-set resultType on modern results', async () => {
    const { dispatcher, conn } = setup();
    dispatcher.register('tools/call', async () => ({
      resultType: 'input_required',
      requestState: 's',
    }));
    const result = resultOf(
      await dispatcher.handle(request(1, 'tools/call', { _meta: modernMeta() }), conn),
    );
    assert.equal(result['resultType'], 'input_required');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestCancellation, RequestContext } from '../../../src/protocol/index.js';
import {
  connection,
  deferred,
  errorOf,
  flush,
  modernMeta,
  notification,
  request,
  resultOf,
  setup,
} from './harness.js';

/** Registers `tools/call` as a handler that waits for its signal or for `release`. */
function blocking(dispatcher: ReturnType<typeof setup>['dispatcher']) {
  const contexts: RequestContext[] = [];
  const release = deferred();
  dispatcher.register('tools/call', async (_params, ctx) => {
    contexts.push(ctx);
    await Promise.race([
      release.promise,
      new Promise((_, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      }),
    ]);
    return { content: [] };
  });
  return { contexts, release };
}

const call = (id: string | number, extra: Record<string, unknown> = {}) =>
  request(id, 'tools/call', { name: 't', _meta: modernMeta(extra) });
const cancel = (requestId: unknown, reason?: string) =>
  notification(
    'notifications/cancelled',
    reason === undefined ? { requestId } : { requestId, reason },
  );

describe('Dispatcher: cancellation', () => {
  it('aborts the handler signal and sends no response', async () => {
    const { dispatcher, conn, errors } = setup();
    const { contexts } = blocking(dispatcher);
    const pending = dispatcher.handle(call(1), conn);
    await flush();
    assert.equal(dispatcher.inFlight, 1);
    assert.equal(await dispatcher.handle(cancel(1, 'user hit stop'), conn), undefined);
    assert.equal(await pending, undefined);
    const signal = contexts[0]?.signal;
    assert.ok(signal !== undefined);
    assert.equal(signal.aborted, true);
    assert.ok(signal.reason instanceof DOMException);
    assert.equal(signal.reason.name, 'AbortError');
    assert.equal(signal.reason.message, 'user hit stop');
    assert.equal(dispatcher.inFlight, 0);
    assert.equal(errors.length, 0);
  });

  it('suppresses the response even when the handler ignores the abort', async () => {
    const { dispatcher, conn } = setup();
    const gate = deferred();
    dispatcher.register('tools/call', async () => {
      await gate.promise;
      return { content: [] };
    });
    const pending = dispatcher.handle(call('a'), conn);
    await flush();
    await dispatcher.handle(cancel('a'), conn);
    gate.resolve();
    assert.equal(await pending, undefined);
  });

  it('tolerates unknown, late, mistyped and malformed cancels', async () => {
    const { dispatcher, conn } = setup();
    const { release, contexts } = blocking(dispatcher);
    const pending = dispatcher.handle(call(1), conn);
    await flush();
    for (const params of [
      { requestId: 2 },
      { requestId: '1' },
      {},
      { requestId: {} },
      [1],
      undefined,
    ]) {
      await dispatcher.handle(notification('notifications/cancelled', params), conn);
    }
    assert.equal(contexts[0]?.signal.aborted, false);
    release.resolve();
    resultOf(await pending);
    assert.equal(await dispatcher.handle(cancel(1), conn), undefined);
    assert.equal(contexts[0]?.signal.aborted, false);
  });

  it('cancels only within the sending session', async () => {
    const { dispatcher, conn } = setup();
    const other = connection();
    const { contexts, release } = blocking(dispatcher);
    const mine = dispatcher.handle(call(1), conn);
    const theirs = dispatcher.handle(call(1), other);
    await flush();
    await dispatcher.handle(cancel(1), other);
    assert.equal(await theirs, undefined);
    assert.equal(contexts[0]?.signal.aborted, false);
    release.resolve();
    resultOf(await mine);
  });

  it('rejects a second request with an id already in flight', async () => {
    const { dispatcher, conn } = setup();
    const { release } = blocking(dispatcher);
    const first = dispatcher.handle(call(5), conn);
    await flush();
    const second = errorOf(await dispatcher.handle(call(5), conn));
    assert.equal(second.error.code, -32600);
    assert.equal(second.id, 5);
    release.resolve();
    resultOf(await first);
    resultOf(await dispatcher.handle(call(5), conn));
  });

  it('closeAll aborts every request in flight and closeSession only its own', async () => {
    const { dispatcher, conn } = setup();
    const other = connection();
    const { contexts } = blocking(dispatcher);
    const a = dispatcher.handle(call(1), conn);
    const b = dispatcher.handle(call(2), conn);
    const c = dispatcher.handle(call(1), other);
    await flush();
    dispatcher.closeSession(other.session);
    assert.equal(await c, undefined);
    assert.equal(dispatcher.inFlight, 2);
    dispatcher.closeAll();
    assert.deepEqual(await Promise.all([a, b]), [undefined, undefined]);
    assert.equal(dispatcher.inFlight, 0);
    assert.deepEqual(
      contexts.map((ctx) => ctx.signal.aborted),
      [true, true, true],
    );
    dispatcher.closeAll();
  });
});

describe('Dispatcher: progress', () => {
  it('offers progress only when the request carries a progressToken', async () => {
    const { dispatcher, conn } = setup();
    const seen: boolean[] = [];
    dispatcher.register('tools/call', async (_params, ctx) => {
      seen.push(ctx.progress !== undefined);
      return {};
    });
    resultOf(await dispatcher.handle(call(1), conn));
    resultOf(await dispatcher.handle(call(2, { progressToken: 'p' }), conn));
    resultOf(await dispatcher.handle(call(3, { progressToken: 0 }), conn));
    resultOf(await dispatcher.handle(call(4, { progressToken: null }), conn));
    assert.deepEqual(seen, [false, true, true, false]);
    assert.deepEqual(conn.sent, []);
  });

  it('sends increasing notifications/progress until the request settles', async () => {
    const { dispatcher, conn } = setup();
    let late: RequestContext['progress'];
    dispatcher.register('tools/call', async (_params, ctx) => {
      ctx.progress?.(1, 3, 'one');
      ctx.progress?.(1, 3, 'again');
      ctx.progress?.(0.5);
      ctx.progress?.(Number.NaN);
      ctx.progress?.(2);
      late = ctx.progress;
      return {};
    });
    resultOf(await dispatcher.handle(call(1, { progressToken: 'tok' }), conn));
    late?.(3);
    await flush();
    assert.deepEqual(conn.sent, [
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok', progress: 1, total: 3, message: 'one' },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok', progress: 2 },
      },
    ]);
  });

  it('drops progress after a cancel and reports failed sends', async () => {
    const { dispatcher, errors } = setup();
    const failure = new Error('pipe closed');
    const conn = {
      ...connection(),
      send: () => Promise.reject(failure),
    };
    const contexts: RequestContext[] = [];
    const gate = deferred();
    dispatcher.register('tools/call', async (_params, ctx) => {
      contexts.push(ctx);
      ctx.progress?.(1);
      await gate.promise;
      ctx.progress?.(2);
      return {};
    });
    const pending = dispatcher.handle(call(1, { progressToken: 7 }), conn);
    await flush();
    assert.deepEqual(
      errors.map((entry) => [entry.error, entry.site]),
      [[failure, { method: 'tools/call', id: 1 }]],
    );
    await dispatcher.handle(cancel(1), conn);
    gate.resolve();
    assert.equal(await pending, undefined);
    await flush();
    assert.equal(errors.length, 1);
  });
});

describe('Dispatcher: a request time limit (ctx.limit)', () => {
  /** Registers `tools/call` as a handler that sets a 1 ms limit, waits for it, then answers. */
  function timed(dispatcher: ReturnType<typeof setup>['dispatcher'], afterAbort = deferred()) {
    const seen: { expired?: boolean; reason?: unknown } = {};
    dispatcher.register('tools/call', async (_params, ctx) => {
      assert.ok(ctx.limit !== undefined);
      const limit = ctx.limit(1, 'tools/call t');
      try {
        assert.equal(limit.signal, ctx.cancellation, 'the limit runs on the request itself');
        // The AbortSignal, made now (after the limit was set), still aborts with it.
        if (!limit.signal.aborted) {
          await new Promise((done) => ctx.signal.addEventListener('abort', done, { once: true }));
        }
        assert.equal(ctx.signal.reason, limit.signal.reason);
        seen.expired = limit.expired();
        seen.reason = limit.signal.reason;
        await afterAbort.promise;
        return { content: [{ type: 'text', text: 'timed out' }] };
      } finally {
        limit.dispose();
      }
    });
    return seen;
  }

  it('aborts the signal with a TimeoutError and still sends the answer', async () => {
    const { dispatcher, conn } = setup();
    const open = deferred();
    open.resolve();
    const seen = timed(dispatcher, open);
    const answer = resultOf(await dispatcher.handle(call(1), conn));
    assert.deepEqual(answer['content'], [{ type: 'text', text: 'timed out' }]);
    assert.equal(seen.expired, true);
    assert.ok(seen.reason instanceof DOMException);
    assert.equal(seen.reason.name, 'TimeoutError');
    assert.match(seen.reason.message, /tools\/call t timed out after 1 ms/);
    assert.equal(dispatcher.inFlight, 0);
  });

  it('drops the answer when a cancel comes after the time limit fired', async () => {
    const { dispatcher, conn } = setup();
    const gate = deferred();
    const seen = timed(dispatcher, gate);
    const pending = dispatcher.handle(call(2), conn);
    while (seen.expired === undefined) await flush();
    await dispatcher.handle(cancel(2), conn);
    gate.resolve();
    assert.equal(await pending, undefined);
  });

  it('leaves the signal alone when the handler answers in time', async () => {
    const { dispatcher, conn } = setup();
    let signal: RequestCancellation | undefined;
    dispatcher.register('tools/call', async (_params, ctx) => {
      const limit = ctx.limit?.(60_000, 'tools/call t');
      signal = limit?.signal;
      limit?.dispose();
      return { content: [] };
    });
    resultOf(await dispatcher.handle(call(3), conn));
    assert.equal(signal?.aborted, false);
  });
});

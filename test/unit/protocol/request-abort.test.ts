import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequestAbort } from '../../../src/protocol/request-abort.js';
import { deferred, flush, modernMeta, notification, request, setup } from './harness.js';

describe('RequestAbort', () => {
  it('reads as not aborted, and makes its AbortSignal only when asked', () => {
    const abort = new RequestAbort();
    assert.equal(abort.aborted, false);
    assert.equal(abort.reason, undefined);
    abort.throwIfAborted();
    const signal = abort.signal;
    assert.ok(signal instanceof AbortSignal);
    assert.equal(abort.signal, signal, 'one signal, made once');
    assert.equal(signal.aborted, false);
  });

  it('aborts a signal made before the abort, listeners included', () => {
    const abort = new RequestAbort();
    const heard: unknown[] = [];
    abort.signal.addEventListener('abort', () => heard.push(abort.aborted));
    const reason = new DOMException('stop', 'AbortError');
    abort.abort(reason);
    assert.equal(abort.signal.aborted, true);
    assert.equal(abort.signal.reason, reason);
    assert.deepEqual(heard, [true], 'a listener already reads the source as aborted');
  });

  it('makes an aborted signal when first asked after the abort', () => {
    const abort = new RequestAbort();
    const reason = new DOMException('late', 'TimeoutError');
    abort.abort(reason);
    assert.equal(abort.aborted, true);
    assert.throws(
      () => abort.throwIfAborted(),
      (e) => e === reason,
    );
    assert.equal(abort.signal.aborted, true);
    assert.equal(abort.signal.reason, reason);
  });

  it('keeps the first reason, as an AbortController does', () => {
    const abort = new RequestAbort();
    const first = new DOMException('first', 'AbortError');
    abort.abort(first);
    abort.abort(new DOMException('second', 'AbortError'));
    assert.equal(abort.reason, first);
    assert.equal(abort.signal.reason, first);
  });

  it('gives an AbortError when aborted without a reason', () => {
    const abort = new RequestAbort();
    abort.abort();
    assert.ok(abort.reason instanceof DOMException);
    assert.equal(abort.reason.name, 'AbortError');
  });
});

describe('Dispatcher: a handler that never reads ctx.signal', () => {
  it('sees a cancel on ctx.cancellation, and a signal read afterwards is aborted', async () => {
    const { dispatcher, conn } = setup();
    const cancelled = deferred();
    const seen: { aborted?: boolean; signal?: boolean } = {};
    dispatcher.register('tools/call', async (_params, ctx) => {
      assert.equal(ctx.cancellation.aborted, false);
      await cancelled.promise;
      seen.aborted = ctx.cancellation.aborted;
      seen.signal = ctx.signal.aborted;
      return { content: [] };
    });
    const call = request(1, 'tools/call', { name: 't', _meta: modernMeta() });
    const pending = dispatcher.handle(call, conn);
    await flush();
    await dispatcher.handle(notification('notifications/cancelled', { requestId: 1 }), conn);
    cancelled.resolve();
    assert.equal(await pending, undefined, 'a cancelled request is not answered');
    assert.deepEqual(seen, { aborted: true, signal: true });
  });
});

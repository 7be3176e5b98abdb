import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withOwed } from '../../../src/transport/unanswered.js';

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} });
const cancel = (requestId: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId },
});
const pong = (id: number) => ({ jsonrpc: '2.0' as const, id, result: {} });

function codes(answer: unknown): Array<[unknown, unknown, unknown]> {
  const list = (Array.isArray(answer) ? answer : [answer]) as Array<{
    id: unknown;
    error?: { code: number; data?: { code?: string } };
  }>;
  return list.map((r) => [r.id, r.error?.code, r.error?.data?.code]);
}

describe('withOwed', () => {
  it('leaves an answer alone when nothing ended', () => {
    assert.equal(withOwed(call(1), undefined, undefined), undefined);
  });

  it('answers a single request cut short, by what ended it', () => {
    assert.deepEqual(codes(withOwed(call(1), undefined, 'session')), [
      [1, -32600, 'SESSION_ENDED'],
    ]);
    assert.deepEqual(codes(withOwed(call(1), undefined, 'shutdown')), [[1, -32000, undefined]]);
  });

  it('completes a batch with each unanswered request but those the batch cancels', () => {
    const message = [call(1), call(2), cancel(2), call(3), { jsonrpc: '2.0', method: 'x' }];
    const answer = withOwed(message, [pong(3)], 'shutdown');
    assert.deepEqual(codes(answer), [
      [3, undefined, undefined],
      [1, -32000, undefined],
    ]);
  });

  it('answers a batch that got no answer at all, and owes nothing for a batch refused whole', () => {
    assert.deepEqual(codes(withOwed([call(1), call(2)], undefined, 'session')), [
      [1, -32600, 'SESSION_ENDED'],
      [2, -32600, 'SESSION_ENDED'],
    ]);
    const refused = { jsonrpc: '2.0' as const, id: null, error: { code: -32600, message: 'no' } };
    assert.equal(withOwed([call(1)], refused, 'shutdown'), refused);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideEra,
  decorateModernResult,
  negotiateVersion,
  RpcError,
  readModernMeta,
  Session,
} from '../../../src/protocol/index.js';
import { CC, modernMeta, PV, SERVER_INFO, SI } from './harness.js';

function rpcErrorOf(run: () => unknown): RpcError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof RpcError);
    return error;
  }
  assert.fail('expected an RpcError');
}

describe('negotiateVersion', () => {
  const table: Array<[unknown, string]> = [
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2025-11-25'],
    ['2026-07-28', '2025-11-25'],
    ['banana', '2025-11-25'],
    [20250618, '2025-11-25'],
    [undefined, '2025-11-25'],
  ];
  for (const [requested, answered] of table) {
    it(`answers ${answered} to ${String(requested)}`, () => {
      assert.equal(negotiateVersion(requested), answered);
    });
  }
});

describe('readModernMeta', () => {
  it('returns undefined without a protocol version key', () => {
    assert.equal(readModernMeta(undefined), undefined);
    assert.equal(readModernMeta({}), undefined);
    assert.equal(readModernMeta([1]), undefined);
    assert.equal(readModernMeta({ _meta: 'x' }), undefined);
    assert.equal(readModernMeta({ _meta: { [CC]: {} } }), undefined);
  });

  it('reads a complete modern _meta', () => {
    const info = { name: 'c', version: '1' };
    assert.deepEqual(
      readModernMeta({ _meta: modernMeta({ 'io.modelcontextprotocol/clientInfo': info }) }),
      { protocolVersion: '2026-07-28', clientCapabilities: {}, clientInfo: info },
    );
  });

  it('rejects a partial or malformed _meta with -32602', () => {
    const missing = rpcErrorOf(() => readModernMeta({ _meta: { [PV]: '2026-07-28' } }));
    assert.equal(missing.code, -32602);
    assert.deepEqual(missing.data, { missing: [CC] });
    for (const meta of [
      { [PV]: 7, [CC]: {} },
      { [PV]: '2026-07-28', [CC]: [] },
      { [PV]: '2026-07-28', [CC]: null },
      { [PV]: '2026-07-28', [CC]: 'all' },
    ]) {
      const error = rpcErrorOf(() => readModernMeta({ _meta: meta }));
      assert.equal(error.code, -32602, JSON.stringify(meta));
    }
  });

  it('rejects an unknown version with -32022 and the supported list', () => {
    const error = rpcErrorOf(() => readModernMeta({ _meta: modernMeta({ [PV]: '2025-06-18' }) }));
    assert.equal(error.code, -32022);
    assert.deepEqual(error.data, { supported: ['2026-07-28'], requested: '2025-06-18' });
  });
});

describe('decideEra', () => {
  it('prefers modern _meta even on a negotiated session', () => {
    const session = new Session();
    session.negotiate({ protocolVersion: '2025-06-18' });
    assert.equal(decideEra({ _meta: modernMeta() }, session).era, 'modern');
    assert.deepEqual(decideEra({}, session), { era: 'legacy', protocolVersion: '2025-06-18' });
  });

  it('reports the missing _meta keys when no era applies', () => {
    const decision = decideEra({ _meta: { [CC]: {} } }, new Session());
    assert.equal(decision.era, 'none');
    if (decision.era === 'none') {
      assert.equal(decision.error().code, -32602);
      assert.deepEqual(decision.error().data, { missing: [PV] });
    }
  });
});

describe('decorateModernResult', () => {
  it('adds resultType and serverInfo, keeping the handler _meta', () => {
    const result = { content: [], _meta: { 'mhl/diagnostic': { code: 'X' } } };
    assert.deepEqual(decorateModernResult('tools/call', result, SERVER_INFO), {
      content: [],
      resultType: 'complete',
      _meta: { 'mhl/diagnostic': { code: 'X' }, [SI]: SERVER_INFO },
    });
    assert.deepEqual(result, { content: [], _meta: { 'mhl/diagnostic': { code: 'X' } } });
  });

  it('adds ttlMs and cacheScope to list results and resources/read only', () => {
    for (const method of [
      'tools/list',
      'resources/list',
      'resources/templates/list',
      'prompts/list',
      'resources/read',
    ]) {
      const out = decorateModernResult(method, {}, SERVER_INFO);
      assert.equal(out['ttlMs'], 300_000, method);
      assert.equal(out['cacheScope'], 'public', method);
    }
    for (const method of ['tools/call', 'run/list', 'prompts/get']) {
      assert.equal('ttlMs' in decorateModernResult(method, {}, SERVER_INFO), false, method);
    }
  });

  it('keeps values the handler set', () => {
    const out = decorateModernResult(
      'resources/read',
      { resultType: 'input_required', ttlMs: 0, cacheScope: 'private' },
      SERVER_INFO,
    );
    assert.equal(out['resultType'], 'input_required');
    assert.equal(out['ttlMs'], 0);
    assert.equal(out['cacheScope'], 'private');
  });
});

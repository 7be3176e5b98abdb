import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RpcError, Session } from '../../../src/protocol/index.js';
import {
  MAX_DECLARATION_CHARS,
  MAX_POOLED_CHARS,
  sharedNegotiation,
} from '../../../src/protocol/negotiations.js';

describe('sharedNegotiation', () => {
  it('gives sessions with the same declaration one frozen record', () => {
    const declare = () => ({
      protocolVersion: '2025-11-25' as const,
      clientInfo: { name: 'pool-test', version: '1' },
      clientCapabilities: { elicitation: { form: {} } },
    });
    const a = new Session();
    const b = new Session();
    a.negotiate(declare());
    b.negotiate(declare());
    assert.equal(a.clientInfo, b.clientInfo);
    assert.equal(a.clientCapabilities, b.clientCapabilities);
    assert.ok(Object.isFrozen(a.clientCapabilities));
    assert.ok(Object.isFrozen(a.clientCapabilities?.['elicitation']));
    assert.throws(() => {
      (a.clientCapabilities as Record<string, unknown>)['sampling'] = {};
    }, TypeError);
    assert.equal(b.clientCapabilities?.['sampling'], undefined);
  });

  it('copies, so a later change to what was passed in is not seen', () => {
    const capabilities: Record<string, unknown> = { roots: {} };
    const session = new Session();
    session.negotiate({ protocolVersion: '2025-06-18', clientCapabilities: capabilities });
    capabilities['sampling'] = {};
    assert.deepEqual(session.clientCapabilities, { roots: {} });
  });

  it('keeps different declarations apart', () => {
    const one = sharedNegotiation({ protocolVersion: '2025-11-25', clientCapabilities: {} });
    const two = sharedNegotiation({ protocolVersion: '2025-06-18', clientCapabilities: {} });
    const three = sharedNegotiation({ protocolVersion: '2025-11-25' });
    assert.notEqual(one, two);
    assert.notEqual(one, three);
    assert.equal(three.clientCapabilities, undefined);
    assert.equal(three.clientInfo, undefined);
  });

  it('does not pool a declaration too large to be worth sharing', () => {
    const big = { blob: 'x'.repeat(MAX_POOLED_CHARS) };
    const a = sharedNegotiation({ protocolVersion: '2025-11-25', clientCapabilities: big });
    const b = sharedNegotiation({ protocolVersion: '2025-11-25', clientCapabilities: big });
    assert.notEqual(a, b);
    assert.deepEqual(a, b);
    assert.ok(Object.isFrozen(a.clientCapabilities));
  });

  it('keeps an own __proto__ key as data, never as a prototype', () => {
    const capabilities = JSON.parse('{"__proto__":{"admin":true}}') as Record<string, unknown>;
    const record = sharedNegotiation({
      protocolVersion: '2025-11-25',
      clientCapabilities: capabilities,
    });
    assert.equal(Object.getPrototypeOf(record.clientCapabilities), Object.prototype);
    assert.equal(record.clientCapabilities?.['admin'], undefined);
  });

  it('refuses a declaration too large to keep, leaving the session unnegotiated', () => {
    const session = new Session();
    const capabilities = { experimental: { blob: 'x'.repeat(MAX_DECLARATION_CHARS) } };
    assert.throws(
      () => session.negotiate({ protocolVersion: '2025-11-25', clientCapabilities: capabilities }),
      (error: unknown) =>
        error instanceof RpcError &&
        error.code === -32602 &&
        (error.data as { maxChars: number }).maxChars === MAX_DECLARATION_CHARS,
    );
    assert.equal(session.negotiated, false);
  });
});

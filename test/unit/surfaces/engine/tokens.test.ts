/**
 * Signed tokens: a round trip, and every refusal the same code: another type, another key,
 * an unknown key id, a non-canonical encoding of the same bytes, a payload that is not the
 * canonical JSON it claims, a malformed or oversized text.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { EngineError } from '../../../../src/surfaces/engine/errors.js';
import {
  KeyRing,
  MAX_TOKEN_CHARS,
  signToken,
  verifyToken,
} from '../../../../src/surfaces/engine/tokens.js';

const KEY = Buffer.from('k'.repeat(32));
const ring = new KeyRing([KEY]);
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof EngineError ? e.code : 'not an EngineError';
  }
  return 'accepted';
};

describe('tokens', () => {
  it('verifies what it signed, with its key id', () => {
    const token = signToken(ring, { typ: 'checkpoint', step: 's' });
    assert.deepEqual(verifyToken(ring, token, 'checkpoint'), {
      typ: 'checkpoint',
      step: 's',
      kid: ring.signingKid,
    });
  });

  it('verifies under a rotated ring whose older key signed it', () => {
    const token = signToken(ring, { typ: 'checkpoint' });
    const rotated = new KeyRing([Buffer.from('n'.repeat(32)), KEY]);
    assert.equal(verifyToken(rotated, token, 'checkpoint')['typ'], 'checkpoint');
    assert.equal(
      code(() => verifyToken(new KeyRing([Buffer.from('n'.repeat(32))]), token, 'checkpoint')),
      'invalid_checkpoint',
    );
  });

  it('refuses another type, a forged MAC and non-canonical forms', () => {
    const token = signToken(ring, { typ: 'validation_bundle' });
    assert.equal(
      code(() => verifyToken(ring, token, 'checkpoint')),
      'invalid_checkpoint',
    );
    const [body, mac] = token.split('.') as [string, string];
    const bytes = Buffer.from(body, 'base64url');
    // Same MAC, padded body: one token text per byte string.
    assert.equal(
      code(() => verifyToken(ring, `${body}=.${mac}`, 'validation_bundle')),
      'invalid_validation_bundle',
    );
    // Whitespace in the signed JSON: signed by the key, yet not canonical.
    const spaced = Buffer.from(JSON.stringify(JSON.parse(bytes.toString()), null, 1));
    const spacedMac = createHmac('sha256', KEY).update(spaced).digest('base64url');
    assert.equal(
      code(() =>
        verifyToken(ring, `${spaced.toString('base64url')}.${spacedMac}`, 'validation_bundle'),
      ),
      'invalid_validation_bundle',
    );
    for (const junk of [
      '',
      '.',
      'a',
      'a.b.c',
      `${body}.`,
      `.${mac}`,
      'é.é',
      'A'.repeat(MAX_TOKEN_CHARS + 1),
    ]) {
      assert.equal(
        code(() => verifyToken(ring, junk, 'checkpoint')),
        'invalid_checkpoint',
        junk.slice(0, 20),
      );
    }
  });
});

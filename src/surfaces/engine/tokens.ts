/**
 * The engine's two signed tokens (docs/engine.md, "Tokens"):
 * `base64url(canonical JSON payload) "." base64url(HMAC-SHA256(key, payload bytes))`. The
 * payload names its type (`typ`) and the id of the key that signed it (`kid`), so keys can
 * rotate and a checkpoint can never pass for a validation bundle. Verification is strict: the
 * text must be the one canonical encoding of its bytes (no padding, no spare bits, no
 * re-encoded JSON), the key id must be known, and the MAC is compared in constant time; every
 * refusal is the same `EngineError`, whatever the reason, so a forger learns nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isRecord } from '../../protocol/index.js';
import { canonicalJson, sha256Hex } from './canonical-json.js';
import { EngineError } from './errors.js';

/** The most a token may be: a checkpoint holds receipts, never contents (64 KiB is ample). */
export const MAX_TOKEN_CHARS = 65_536;

export type TokenType = 'checkpoint' | 'validation_bundle';

/** The signing keys: the first signs, every one verifies (rotation). */
export class KeyRing {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly signingKid: string;

  constructor(keys: readonly Buffer[]) {
    const first = keys[0];
    if (first === undefined) throw new Error('a key ring needs at least one key');
    this.#keys = new Map(keys.map((key) => [keyId(key), key]));
    this.signingKid = keyId(first);
  }

  key(kid: string): Buffer | undefined {
    return this.#keys.get(kid);
  }
}

/** A key's public id: a digest prefix, so it names the key without revealing it. */
export function keyId(key: Buffer): string {
  return `k${sha256Hex(Buffer.concat([Buffer.from('mhl-engine-kid\0'), key])).slice(0, 16)}`;
}

/** Signs `payload` (whose `typ` and `kid` the caller set) into a token. */
export function signToken(ring: KeyRing, payload: Record<string, unknown>): string {
  const bytes = Buffer.from(canonicalJson({ ...payload, kid: ring.signingKid }), 'utf8');
  const key = ring.key(ring.signingKid) as Buffer;
  const mac = createHmac('sha256', key).update(bytes).digest();
  return `${bytes.toString('base64url')}.${mac.toString('base64url')}`;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The payload of `token` when it is a well-formed `typ` token signed by a known key; else
 * throws `EngineError` with `invalid_checkpoint` or `invalid_validation_bundle`.
 */
export function verifyToken(ring: KeyRing, token: string, typ: TokenType): Record<string, unknown> {
  const refuse = (why: string) =>
    new EngineError(
      typ === 'checkpoint' ? 'invalid_checkpoint' : 'invalid_validation_bundle',
      `the ${typ === 'checkpoint' ? 'checkpoint' : 'validation bundle'} token ${why}`,
    );
  if (token.length > MAX_TOKEN_CHARS) throw refuse('is too long');
  const dot = token.indexOf('.');
  if (dot < 1 || dot !== token.lastIndexOf('.')) throw refuse('is malformed');
  const bodyText = token.slice(0, dot);
  const macText = token.slice(dot + 1);
  if (!BASE64URL.test(bodyText) || !BASE64URL.test(macText)) throw refuse('is malformed');
  const bytes = Buffer.from(bodyText, 'base64url');
  const mac = Buffer.from(macText, 'base64url');
  // One text per byte string: a flipped spare bit must not verify as the same token.
  if (bytes.toString('base64url') !== bodyText || mac.toString('base64url') !== macText) {
    throw refuse('is not canonically encoded');
  }
  let payload: unknown;
  try {
    payload = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw refuse('is malformed');
  }
  if (!isRecord(payload) || typeof payload['kid'] !== 'string') throw refuse('is malformed');
  const key = ring.key(payload['kid']);
  if (key === undefined) throw refuse('was signed by an unknown key');
  const expected = createHmac('sha256', key).update(bytes).digest();
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw refuse('has a bad signature');
  }
  // Signed, so ours: still, only the canonical form of a payload of the right type is accepted.
  if (payload['typ'] !== typ) throw refuse(`is not a ${typ} token`);
  if (canonicalJson(payload) !== bytes.toString('utf8')) throw refuse('is not canonical');
  return payload;
}

/** The digest that binds a token into another (a checkpoint's `parent`, a bundle's checkpoint). */
export function tokenDigest(token: string): string {
  return sha256Hex(token);
}

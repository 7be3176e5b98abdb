/**
 * Mint challenges: the fresh nonce a `mhl secrets --open` must answer before the local server
 * mints a setup capability. Each nonce is 256 random bits, lives thirty seconds, and is taken
 * (removed) by the first answer that names it, right or wrong, so a recorded answer never works
 * again and a guess costs a fresh challenge. Held in memory only, keyed by the nonce's SHA-256
 * (as `capabilities.ts` keys its table); the clock is injected so expiry is tested exactly.
 */
import { createHash, randomBytes } from 'node:crypto';

export const CHALLENGE_TTL_MS = 30 * 1000;
/** Challenges outstanding at once; past it a new one is refused until some expire or are used. */
export const MAX_CHALLENGES = 64;
export const NONCE_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export class ChallengeStore {
  readonly #entries = new Map<string, number>();
  readonly #now: () => number;

  constructor(options: { readonly now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** A fresh nonce and when it expires, or undefined when too many are outstanding. */
  issue(): { nonce: string; expiresAt: number } | undefined {
    this.#sweep();
    if (this.#entries.size >= MAX_CHALLENGES) return undefined;
    const nonce = randomBytes(32).toString('base64url');
    const expiresAt = this.#now() + CHALLENGE_TTL_MS;
    this.#entries.set(digest(nonce), expiresAt);
    return { nonce, expiresAt };
  }

  /** True once for a live nonce this store issued; the nonce is gone afterwards either way. */
  take(nonce: string): boolean {
    if (!NONCE_SHAPE.test(nonce)) return false;
    const key = digest(nonce);
    const expiresAt = this.#entries.get(key);
    this.#entries.delete(key);
    return expiresAt !== undefined && this.#now() < expiresAt;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, expiresAt] of this.#entries) if (now >= expiresAt) this.#entries.delete(key);
  }
}

function digest(nonce: string): string {
  return createHash('sha256').update(nonce).digest('hex');
}

/**
 * Setup capabilities: 256-bit random values, each good for one secret's setup page for ten
 * minutes, used up by the first POST that stores the secret. Held in the server's memory only
 * (a restart ends every link), keyed by the SHA-256 of the value, so the table never holds a
 * usable capability and a lookup's time does not depend on how much of a guess was right.
 *
 * A POST first `claim`s its capability (synchronously, so two racing POSTs cannot both pass),
 * then `consume`s it when the secret is stored or `release`s it when storing failed: only a
 * successful POST uses a capability up. The clock is injected, so expiry is tested without
 * waiting.
 */
import { createHash, randomBytes } from 'node:crypto';

export const CAPABILITY_TTL_MS = 10 * 60 * 1000;
/** The text form: 32 random bytes in base64url, 43 characters. */
export const CAPABILITY_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Setup links outstanding at once; a mint past it is refused until some expire or are used. */
export const MAX_CAPABILITIES = 64;

/** What a capability lets its holder do: set one named secret. */
export interface SetupGrant {
  readonly mode: 'add' | 'edit';
  readonly name: string;
  readonly kind?: string;
  readonly label?: string;
  /** The origin the link was issued on (`http://127.0.0.1:<port>`): the only one a POST may name. */
  readonly origin?: string;
}

interface Entry {
  readonly grant: SetupGrant;
  readonly expiresAt: number;
  claimed: boolean;
}

export interface CapabilityOptions {
  /** How long a capability lives: ten minutes unless shortened (never lengthened). */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

export class CapabilityStore {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: CapabilityOptions = {}) {
    this.#ttlMs = Math.min(options.ttlMs ?? CAPABILITY_TTL_MS, CAPABILITY_TTL_MS);
    this.#now = options.now ?? Date.now;
  }

  /** A fresh capability for `grant`, or undefined when too many are outstanding. */
  mint(grant: SetupGrant): { capability: string; expiresAt: number } | undefined {
    this.#sweep();
    if (this.#entries.size >= MAX_CAPABILITIES) return undefined;
    const capability = randomBytes(32).toString('base64url');
    const expiresAt = this.#now() + this.#ttlMs;
    this.#entries.set(digest(capability), { grant, expiresAt, claimed: false });
    return { capability, expiresAt };
  }

  /** The grant of a live, unclaimed capability; undefined for anything else. */
  check(capability: string | undefined): SetupGrant | undefined {
    return this.#live(capability)?.grant;
  }

  /** Claims a live capability for one POST; undefined when it is not live or already claimed. */
  claim(capability: string | undefined): Claim | undefined {
    const entry = this.#live(capability);
    if (entry === undefined) return undefined;
    entry.claimed = true;
    const key = digest(capability as string);
    return {
      grant: entry.grant,
      consume: () => void this.#entries.delete(key),
      release: () => {
        entry.claimed = false;
      },
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  #live(capability: string | undefined): Entry | undefined {
    if (capability === undefined || !CAPABILITY_SHAPE.test(capability)) return undefined;
    const key = digest(capability);
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.claimed) return undefined;
    if (this.#now() >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (now >= entry.expiresAt && !entry.claimed) this.#entries.delete(key);
    }
  }
}

/** One POST's hold on a capability. */
export interface Claim {
  readonly grant: SetupGrant;
  /** The secret was stored: the capability is gone. */
  readonly consume: () => void;
  /** Storing failed: the capability may be used again (until it expires). */
  readonly release: () => void;
}

function digest(capability: string): string {
  return createHash('sha256').update(capability).digest('hex');
}

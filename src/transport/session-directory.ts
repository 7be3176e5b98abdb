/**
 * Where legacy sessions are published for other replicas (issue 12): a session minted on one
 * replica resolves on any other that shares the directory, so a client behind a round-robin
 * load balancer keeps one `Mcp-Session-Id`. The transport only calls it; the server layer
 * implements it over the shared store. Principals are compared by digest, never stored raw.
 */
import type { LegacyVersion } from '../protocol/index.js';

/** What another replica needs to serve a session: who opened it and what it negotiated. */
export interface SharedSession {
  readonly id: string;
  /** sha256 of the verified principal, when one opened it. */
  readonly principalDigest?: string;
  readonly protocol: LegacyVersion;
  readonly initialized: boolean;
  /** Epoch milliseconds of the last publish. */
  readonly lastUsed: number;
}

/** The shared session table; every method may reject (the store is unreachable). */
export interface SessionDirectory {
  publish(session: SharedSession): Promise<void>;
  lookup(id: string): Promise<SharedSession | undefined>;
  remove(id: string): Promise<void>;
}

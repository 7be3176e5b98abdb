/**
 * One shared, frozen record per distinct `initialize` outcome (revision, `clientInfo`,
 * `capabilities`). A server holding thousands of legacy sessions holds them mostly for a few
 * client programs, each sending the same info and capabilities every time: sharing one copy
 * keeps an idle session's cost to its own few fields, not the client's declarations. Records are
 * deep copies made from JSON text (so they hold only plain data, with no prototype taken from
 * the request) and deeply frozen (so one session cannot change another's). The pool is bounded
 * in count and in the size of what it keeps; a record past either bound is still a frozen copy,
 * owned by its session alone. No I/O, no clock.
 */
import type { ClientInfo, LegacyVersion, Negotiation } from './session.js';

/** Distinct records kept for sharing; past it, new ones are not pooled. */
export const MAX_POOLED = 256;
/** Largest record (as JSON text, UTF-16 units) worth pooling: bigger ones are rare and unshared. */
export const MAX_POOLED_CHARS = 4096;

/** A negotiation as sessions hold it. */
export interface SharedNegotiation {
  readonly protocolVersion: LegacyVersion;
  readonly clientInfo: ClientInfo | undefined;
  readonly clientCapabilities: Record<string, unknown> | undefined;
}

/** The pool of one process (sessions of every transport share it). */
const pool = new Map<string, SharedNegotiation>();

/** The shared record equal to `negotiation`; a private frozen copy when it cannot be pooled. */
export function sharedNegotiation(negotiation: Negotiation): SharedNegotiation {
  const text = JSON.stringify([
    negotiation.protocolVersion,
    negotiation.clientInfo ?? null,
    negotiation.clientCapabilities ?? null,
  ]);
  const pooled = pool.get(text);
  if (pooled !== undefined) return pooled;
  const [protocolVersion, clientInfo, clientCapabilities] = JSON.parse(text) as [
    LegacyVersion,
    ClientInfo | null,
    Record<string, unknown> | null,
  ];
  const record: SharedNegotiation = deepFreeze({
    protocolVersion,
    clientInfo: clientInfo ?? undefined,
    clientCapabilities: clientCapabilities ?? undefined,
  });
  if (pool.size < MAX_POOLED && text.length <= MAX_POOLED_CHARS) pool.set(text, record);
  return record;
}

/** Records pooled now (for tests). */
export function pooledNegotiations(): number {
  return pool.size;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

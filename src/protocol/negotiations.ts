/**
 * One shared, frozen record per distinct `initialize` outcome (revision, `clientInfo`,
 * `capabilities`). A server holding thousands of legacy sessions holds them mostly for a few
 * client programs, each sending the same info and capabilities every time: sharing one copy
 * keeps an idle session's cost to its own few fields, not the client's declarations. Records are
 * deep copies made from JSON text (so they hold only plain data, with no prototype taken from
 * the request) and deeply frozen (so one session cannot change another's). The pool is bounded
 * in count and in the size of what it keeps; a record past either bound is still a frozen copy,
 * owned by its session alone (a flood of distinct declarations fills the pool, after which new
 * ones cost what they did before pooling). A declaration is also bounded: the session table
 * holds up to 10,000 sessions, and without a bound each could keep a body's worth (1 MiB) of
 * capabilities. No I/O, no clock.
 */
import { RPC_ERROR_CODES, RpcError } from './errors.js';
import type { ClientInfo, LegacyVersion, Negotiation } from './session.js';

/** Distinct records kept for sharing; past it, new ones are not pooled. */
export const MAX_POOLED = 256;
/** Largest record (as JSON text, UTF-16 units) worth pooling: bigger ones are rare and unshared. */
export const MAX_POOLED_CHARS = 4096;
/**
 * Largest `clientInfo` and `capabilities` together (as JSON text) a session keeps; an
 * `initialize` declaring more is refused. Clients declare a few hundred characters; 16 Ki leaves
 * room for `experimental` blocks and bounds 10,000 distinct sessions to a few hundred MB.
 */
export const MAX_DECLARATION_CHARS = 16 * 1024;

/** A negotiation as sessions hold it. */
export interface SharedNegotiation {
  readonly protocolVersion: LegacyVersion;
  readonly clientInfo: ClientInfo | undefined;
  readonly clientCapabilities: Record<string, unknown> | undefined;
}

/** The pool of one process (sessions of every transport share it). */
const pool = new Map<string, SharedNegotiation>();

/**
 * The shared record equal to `negotiation`; a private frozen copy when it cannot be pooled.
 * @throws RpcError -32602 (`data.maxChars`) when the declaration is over `MAX_DECLARATION_CHARS`.
 */
export function sharedNegotiation(negotiation: Negotiation): SharedNegotiation {
  const text = JSON.stringify([
    negotiation.protocolVersion,
    negotiation.clientInfo ?? null,
    negotiation.clientCapabilities ?? null,
  ]);
  // The version is at most 12 characters: what remains is the declaration.
  if (text.length > MAX_DECLARATION_CHARS + 32) {
    throw new RpcError(
      RPC_ERROR_CODES.INVALID_PARAMS,
      `initialize clientInfo and capabilities exceed ${MAX_DECLARATION_CHARS} characters`,
      { field: 'capabilities', maxChars: MAX_DECLARATION_CHARS },
    );
  }
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

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

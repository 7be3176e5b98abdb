/**
 * Traces (spec session-profile §3.10): one event per session-bound call, recorded by the audit
 * wrapper whatever the outcome, kept in memory (at most 1000 sessions, oldest evicted), and
 * packaged on each `next_activity` into an HMAC-signed token, `base64url(payload).hex(hmac)`,
 * that `get_trace` verifies (splitting at the last `.`) and decodes.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export interface TraceEvent {
  traceId: string;
  spanId: string;
  name: string;
  ts: number;
  ms: number;
  s: 'ok' | 'error';
  wf: string;
  act: string;
  aid: string;
  err?: string;
  vw?: string[];
}

const MAX_SESSIONS = 1000;
const MAX_EVENTS = 10_000;

export class TraceStore {
  readonly #events = new Map<string, TraceEvent[]>();
  readonly #cursor = new Map<string, number>();

  /** Appends one event to the session's trace. */
  record(event: Omit<TraceEvent, 'spanId'>): void {
    let list = this.#events.get(event.traceId);
    if (list === undefined) {
      if (this.#events.size >= MAX_SESSIONS) {
        const oldest = this.#events.keys().next().value as string;
        this.#events.delete(oldest);
        this.#cursor.delete(oldest);
      }
      list = [];
      this.#events.set(event.traceId, list);
    }
    // Keys in the public server's order (the span id right after the trace id).
    if (list.length < MAX_EVENTS) {
      const { traceId, ...rest } = event;
      list.push({ traceId, spanId: randomUUID(), ...rest });
    }
  }

  /** Every event of the session. */
  events(index: string): readonly TraceEvent[] {
    return this.#events.get(index) ?? [];
  }

  /** The events since the last call, moving the cursor past them. */
  takeSince(index: string): { events: TraceEvent[]; from: number; to: number } {
    const list = this.#events.get(index) ?? [];
    const from = this.#cursor.get(index) ?? 0;
    this.#cursor.set(index, list.length);
    return { events: list.slice(from), from, to: list.length };
  }
}

/** Signs a token over the events of one leg of a run. */
export function signTrace(
  key: Buffer,
  payload: { sid: string; act: string; from: number; to: number; events: TraceEvent[] },
  nowSeconds: number,
): string {
  const { events } = payload;
  const body = {
    ...payload,
    n: events.length,
    t0: events[0]?.ts ?? nowSeconds,
    t1: events[events.length - 1]?.ts ?? nowSeconds,
    ts: nowSeconds,
  };
  const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${encoded}.${createHmac('sha256', key).update(encoded).digest('hex')}`;
}

const RETRY_HINT =
  'If the token is invalid, you can omit the trace_tokens parameter and use server-side tracing instead.';

/** Payload fields a token must carry, with the type each must have. */
const PAYLOAD_FIELDS: [string, string][] = [
  ['sid', 'string'],
  ['act', 'string'],
  ['from', 'number'],
  ['to', 'number'],
  ['n', 'number'],
  ['t0', 'number'],
  ['t1', 'number'],
  ['ts', 'number'],
];

/**
 * The decoded payload of a token, or the reason it is refused, worded as the public server
 * words it (the agent reads these in `token_errors`).
 */
export function verifyTrace(
  key: Buffer,
  token: string,
): { payload: Record<string, unknown> } | { error: string } {
  const dot = token.lastIndexOf('.');
  if (dot === -1)
    return {
      error:
        'Invalid trace token: the token is malformed (missing signature segment). ' +
        'A valid trace token must contain a "." separator between the payload and HMAC signature. ' +
        'This usually means the token was truncated or the value passed is not a trace token. ' +
        'Trace tokens are returned in the _meta.trace_token field of next_activity responses. ' +
        RETRY_HINT,
    };
  const encoded = token.slice(0, dot);
  const expected = Buffer.from(createHmac('sha256', key).update(encoded).digest('hex'));
  const given = Buffer.from(token.slice(dot + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      error:
        'Invalid trace token: HMAC signature verification failed. ' +
        'The token was either signed by a different server instance (e.g., the server was restarted and generated a new signing key), ' +
        'or the token has been tampered with. ' +
        RETRY_HINT,
    };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload))
    return { error: 'Invalid trace token: payload is not an object' };
  const p = payload as Record<string, unknown>;
  const bad = PAYLOAD_FIELDS.filter(([k, t]) => typeof p[k] !== t).map(
    ([k, t]) => `${k} (expected ${t})`,
  );
  if (!Array.isArray(p['events'])) bad.push('events (expected array)');
  if (bad.length > 0)
    return { error: `Invalid trace token: malformed payload fields: ${bad.join(', ')}` };
  return { payload: p };
}

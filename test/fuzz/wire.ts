/**
 * What the wire properties (HTTP and stdio) share: generators of hostile JSON-RPC input, biased
 * towards the methods and tools the server really has so the fuzz reaches past the first
 * refusal, and the checks every answer must pass (a JSON-RPC response, the request's id, integer
 * error codes, no stack trace or server path).
 */
import assert from 'node:assert/strict';
import { fc } from '../helpers/fuzz.js';
import { MODERN_META } from '../helpers/http-server.js';

/** Every method the server knows, plus a few it does not. */
export const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'run/start',
  'run/status',
  'run/list',
  'run/logs',
  'run/cancel',
  'run/resume',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'elicitation/create',
  'tasks/get',
  'no/such/method',
  // Names that find something on any plain object's prototype chain.
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
] as const;

/** Tool names worth calling: the fixture's workflows and the server's own tools. */
export const TOOLS = [
  'Greet',
  'Fails',
  'mhl_run_start',
  'mhl_run_status',
  'mhl_run_list',
  'mhl_run_logs',
  'mhl_run_cancel',
  'job.start',
  'job.status',
  'job.result',
  'job.cancel',
  'Nope',
  '__proto__',
  'constructor',
  'toString',
] as const;

/** Property names that look up something inherited when used as a key of a plain object. */
const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

/** Any string: ASCII, full Unicode (lone surrogates too), or a prototype key. */
export const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 3 })
      .map((units) => String.fromCharCode(...units)),
  },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
);

/** An object whose keys are prototype names, as JSON.parse would give it (own properties). */
const protoObject = fc
  .tuple(fc.constantFrom(...PROTO_KEYS), fc.jsonValue({ maxDepth: 2 }))
  .map(
    ([key, value]) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`) as unknown,
  );

/** Arrays nested around the nesting limit (128), as a value somewhere in params. */
const deep = fc
  .integer({ min: 100, max: 300 })
  .map((depth) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown);

const smallJson = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }) },
);

/** A request id: mostly valid (integer or string), sometimes not. */
export const anyId = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 53, -(2 ** 63), 1e308, -0, 0.1, '__proto__', '') },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: smallJson },
);

/** Plausible params for `method`: names, arguments and cursors mixed with random JSON. */
const params = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        name: fc.oneof(fc.constantFrom(...TOOLS), anyString),
        arguments: fc.oneof(
          fc.record(
            {
              name: fc.oneof(anyString, smallJson),
              times: fc.oneof(fc.integer({ min: -2, max: 3 }), smallJson),
              reason: fc.string({ maxLength: 20 }),
              context: fc.oneof(fc.record({ cwd: fc.constantFrom('/tmp', 'rel', '') }), smallJson),
            },
            { requiredKeys: [] },
          ),
          smallJson,
          protoObject,
        ),
        cursor: fc.oneof(fc.string({ maxLength: 8 }), smallJson),
        uri: fc.oneof(fc.constantFrom('mhl://workflows', 'file:///etc/passwd'), fc.string()),
        level: fc.constantFrom('debug', 'info', 'error', 'nope'),
        requestId: anyId,
        protocolVersion: fc.constantFrom('2025-03-26', '2025-11-25', '2026-07-28', 'x'),
        capabilities: smallJson,
        clientInfo: smallJson,
        ref: fc.oneof(
          fc.record({ type: fc.constantFrom('ref/prompt', 'ref/resource'), name: anyString }),
          smallJson,
        ),
        argument: fc.oneof(fc.record({ name: anyString, value: anyString }), smallJson),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: smallJson },
  { weight: 1, arbitrary: protoObject },
  { weight: 1, arbitrary: deep.map((d) => ({ name: 'Greet', arguments: { name: d } })) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

export interface Shaped {
  readonly message: Record<string, unknown>;
  /** The id the answer must carry, when the message is a well-formed request. */
  readonly answeredId: string | number | undefined;
}

/**
 * A JSON-RPC-shaped object with random method, params and id. With `modern`, params usually
 * carry the 2026-07-28 `_meta` (sometimes a broken one).
 */
export function shaped(modern: boolean): fc.Arbitrary<Shaped> {
  return fc
    .record({
      jsonrpc: fc.oneof(
        { weight: 8, arbitrary: fc.constant('2.0') },
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: smallJson },
      ),
      id: anyId,
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
        { weight: 1, arbitrary: anyString },
        { weight: 1, arbitrary: smallJson },
      ),
      params,
      meta: fc.oneof(
        { weight: modern ? 6 : 0, arbitrary: fc.constant(MODERN_META) },
        {
          weight: modern ? 1 : 0,
          arbitrary: fc
            .tuple(fc.oneof(fc.string({ maxLength: 4 }), fc.integer()), smallJson)
            .map(([progressToken, extra]) => ({ ...MODERN_META, progressToken, extra })),
        },
        { weight: 1, arbitrary: protoObject },
        { weight: 1, arbitrary: smallJson },
        { weight: modern ? 1 : 6, arbitrary: fc.constant(undefined) },
      ),
    })
    .map(({ jsonrpc, id, method, params: p, meta }) => {
      let finalParams: unknown = p;
      if (meta !== undefined && (p === undefined || isObject(p))) {
        finalParams = { ...(isObject(p) ? p : {}), _meta: meta };
      }
      const message: Record<string, unknown> = {};
      if (jsonrpc !== undefined) message['jsonrpc'] = jsonrpc;
      if (id !== undefined) message['id'] = id;
      message['method'] = method;
      if (finalParams !== undefined) message['params'] = finalParams;
      const wellFormed =
        jsonrpc === '2.0' &&
        typeof method === 'string' &&
        (finalParams === undefined || typeof finalParams === 'object') &&
        finalParams !== null;
      const validId = typeof id === 'string' || typeof id === 'number';
      // Past the nesting limit too (refused whole, -32600), the answer carries the message's id.
      return { message, answeredId: wellFormed && validId ? id : undefined };
    });
}

/** The server's limit on nested arrays and objects in one message (a batch is a level). */
const MAX_NESTING = 128;

/** How deeply arrays and objects nest in `value` (a scalar is 0). */
function depth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depth(child));
  return deepest + 1;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text that is nearly JSON: a valid request cut short. */
export const truncated = fc
  .tuple(shaped(true), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([s, at]) => {
    const text = JSON.stringify(s.message);
    return text.slice(0, Math.floor(text.length * at));
  });

/** Raw bytes, often not UTF-8. */
export const bytes = fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a));

/** A batch of 0–4 shaped messages (only 2025-03-26 sessions accept batches). */
export function batch(modern: boolean): fc.Arbitrary<Shaped[]> {
  return fc.array(shaped(modern), { maxLength: 4 }).map((items) => {
    // A request the same batch cancels may go unanswered, as JSON-RPC cancellation allows.
    const cancelled = items.flatMap((s) => {
      const params = s.message['params'];
      return s.message['method'] === 'notifications/cancelled' && isObject(params)
        ? [params['requestId']]
        : [];
    });
    const tooDeep = depth(items.map((s) => s.message)) > MAX_NESTING;
    return items.map((s) =>
      tooDeep || cancelled.includes(s.answeredId) ? { ...s, answeredId: undefined } : s,
    );
  });
}

/**
 * The three eras a wire property runs in: a legacy (2025-11-25) session, a 2025-03-26 session
 * (the one that accepts batches), and stateless 2026-07-28 requests.
 */
export type Era = 'legacy' | 'batches' | 'modern';

/** One POST body or stdio line, sent whole. */
export interface Payload {
  readonly data: string | Buffer;
  /** The messages in it whose answers are owed (for id checks). */
  readonly sent: readonly Shaped[];
  /** The message, when the payload is a single shaped one. */
  readonly single?: Shaped;
}

/**
 * What one body or line holds in `era`: mostly a single shaped message, else any JSON, raw
 * bytes, a truncated request or a batch.
 */
export function payload(era: Era): fc.Arbitrary<Payload> {
  const modern = era === 'modern';
  return fc.oneof(
    {
      weight: 6,
      arbitrary: shaped(modern).map((s) => ({
        data: JSON.stringify(s.message),
        sent: [s],
        single: s,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.jsonValue().map((v) => ({ data: JSON.stringify(v) ?? 'null', sent: [] })),
    },
    { weight: 1, arbitrary: bytes.map((b) => ({ data: b, sent: [] })) },
    { weight: 1, arbitrary: truncated.map((t) => ({ data: t, sent: [] })) },
    {
      weight: 2,
      arbitrary: batch(modern).map((b) => ({
        data: JSON.stringify(b.map((s) => s.message)),
        // Only a 2025-03-26 session answers a batch's members; elsewhere one refusal comes back.
        sent: era === 'batches' ? b : [],
      })),
    },
  );
}

/** What the server's cwd, a stack frame or an absolute home path looks like in a body. */
const LEAKS: readonly RegExp[] = [
  /\bat [^\n]*\.(?:js|ts|mjs):\d+/,
  /\/work\//,
  /node_modules/,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
];

/** Fails when `body` shows a stack trace or a server path that `request` did not put there. */
export function assertNoLeak(body: string, request: string): void {
  for (const leak of LEAKS) {
    if (leak.test(body) && !leak.test(request)) {
      assert.fail(`answer leaks ${leak}: ${body.slice(0, 500)}`);
    }
  }
}

/** Fails unless `value` is one JSON-RPC response (result or error with integer code). */
export function assertResponse(value: unknown, what: string): Record<string, unknown> {
  assert.ok(isObject(value), `${what}: not an object: ${JSON.stringify(value)}`);
  assert.equal(value['jsonrpc'], '2.0', `${what}: jsonrpc`);
  const { id } = value;
  assert.ok(
    id === null || typeof id === 'string' || typeof id === 'number',
    `${what}: bad id ${JSON.stringify(id)}`,
  );
  if ('error' in value) {
    assert.ok(!('result' in value), `${what}: both result and error`);
    const error = value['error'];
    assert.ok(isObject(error), `${what}: error is not an object`);
    assert.ok(Number.isInteger(error['code']), `${what}: error code ${String(error['code'])}`);
    assert.equal(typeof error['message'], 'string', `${what}: error message`);
  } else {
    assert.ok(isObject(value['result']), `${what}: result is not an object`);
  }
  return value;
}

/**
 * Checks the answers to one sent message (or batch): each is a response, the request's id is
 * answered, and a malformed message is answered with null or its own id.
 */
export function assertAnswers(
  answers: readonly unknown[],
  sent: readonly Shaped[],
  what: string,
): void {
  const responses: Record<string, unknown>[] = [];
  for (const answer of answers) {
    // A message the server starts (progress, a log line, a request to the client) has a method.
    if (isObject(answer) && 'method' in answer) {
      assert.equal(answer['jsonrpc'], '2.0', `${what}: jsonrpc of ${JSON.stringify(answer)}`);
      assert.equal(typeof answer['method'], 'string', `${what}: method`);
    } else {
      responses.push(assertResponse(answer, what));
    }
  }
  for (const s of sent) {
    if (s.answeredId === undefined) continue;
    assert.ok(
      responses.some((r) => r['id'] === s.answeredId),
      `${what}: no answer with id ${JSON.stringify(s.answeredId)} in ${JSON.stringify(responses)}`,
    );
  }
}

/**
 * Legacy session limits over HTTP, end to end (issue 18, "Session eviction"): the per-client
 * cap (by principal, else by remote address: loopback 127.0.0.x stand in for other hosts) and
 * the global cap refuse a new `initialize` with `-32000` instead of dropping anyone's session; a
 * session with a call in flight outlives a flood and the idle sweep, while a silent one goes at
 * the idle TTL even with a run under way (the run is then claimable by its runId); a request
 * whose session ends under it gets a JSON-RPC answer, never a bare 202, also inside a batch; the
 * idle sweep ends silent sessions on its own timer; the flags are checked at start-up.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { exchange, type Reply, rpc, send, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve-steps');
const LEGACY = '2025-11-25';
const BOTH = 'application/json, text/event-stream';

const start = serverStarter(FOLDER);

/** Where a request comes from: a loopback address and extra headers (token, principal). */
interface From {
  readonly address?: string;
  readonly headers?: Record<string, string>;
}

function initialize(port: number, from: From = {}): Promise<Reply> {
  return send(port, {
    ...(from.address === undefined ? {} : { localAddress: from.address }),
    headers: { accept: BOTH, ...from.headers },
    body: rpc(0, 'initialize', {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    }),
  });
}

/** Opens a session, failing the test if it is refused; resolves to its id. */
async function openSession(port: number, from: From = {}): Promise<string> {
  const reply = await initialize(port, from);
  assert.equal(reply.status, 200, reply.text);
  const id = reply.headers['mcp-session-id'];
  assert.equal(typeof id, 'string');
  return id as string;
}

/** One message on a session, sent from `from`. */
function inSession(port: number, id: string, message: unknown, from: From = {}): Promise<Reply> {
  return send(port, {
    ...(from.address === undefined ? {} : { localAddress: from.address }),
    headers: {
      accept: BOTH,
      'mcp-session-id': id,
      'mcp-protocol-version': LEGACY,
      ...from.headers,
    },
    body: message,
  });
}

function gatedCall(id: number, gate: string, meta: Record<string, unknown> = {}) {
  return rpc(id, 'tools/call', {
    name: 'Gated',
    arguments: { gate, context: { cwd: tempDir() } },
    _meta: meta,
  });
}

/** The JSON-RPC error of a refused `initialize`, checked to be a session-cap refusal. */
function capRefusal(reply: Reply, status: number, code: string): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers['mcp-session-id'], undefined);
  assert.match(String(reply.headers['retry-after']), /^[1-9]\d*$/);
  const body = reply.json() as { id: unknown; error: { code: number; data: { code: string } } };
  assert.equal(body.id, 0, 'the refusal answers the initialize by its id');
  assert.equal(body.error.code, -32000);
  assert.equal(body.error.data.code, code);
}

describe('mhl serve mcp --http: session caps', () => {
  it('refuses a principal at its cap while another principal still initializes', async () => {
    const token = { authorization: 'Bearer s3cret' };
    const alice = { headers: { ...token, 'x-user': 'alice' } };
    const bob = { headers: { ...token, 'x-user': 'bob' } };
    const server = start([
      ...['--token', 's3cret', '--principal-header', 'x-user'],
      ...['--max-sessions', '10', '--max-sessions-per-client', '3'],
    ]);
    const port = await server.ready;
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await openSession(port, alice));
    capRefusal(await initialize(port, alice), 429, 'CLIENT_SESSION_LIMIT');
    // The same principal from another address is the same client.
    capRefusal(
      await initialize(port, { ...alice, address: '127.0.0.2' }),
      429,
      'CLIENT_SESSION_LIMIT',
    );
    await openSession(port, bob);
    for (const id of mine) {
      const ping = await inSession(port, id, rpc(1, 'ping'), alice);
      assert.equal(ping.status, 200, 'refusing the fourth dropped none of the three');
    }
    // Ending one makes room again.
    const ended = await send(port, {
      method: 'DELETE',
      headers: { ...alice.headers, 'mcp-session-id': mine[0] as string },
    });
    assert.equal(ended.status, 204);
    await openSession(port, alice);
    assert.equal(await server.stop(), 0);
  });

  it('counts clients by remote address without a principal, and refuses at the global cap', async () => {
    const server = start(['--max-sessions', '4', '--max-sessions-per-client', '2']);
    const port = await server.ready;
    const one = { address: '127.0.0.1' };
    const two = { address: '127.0.0.2' };
    const opened = [
      await openSession(port, one),
      await openSession(port, one),
      await openSession(port, two),
    ];
    capRefusal(await initialize(port, one), 429, 'CLIENT_SESSION_LIMIT');
    opened.push(await openSession(port, two));
    capRefusal(await initialize(port, { address: '127.0.0.3' }), 503, 'SESSION_CAPACITY_FULL');
    for (const [i, id] of opened.entries()) {
      const ping = await inSession(port, id, rpc(1, 'ping'), i < 2 ? one : two);
      assert.equal(ping.status, 200);
    }
    const metrics = await send(port, { method: 'GET', path: '/metrics' });
    assert.match(metrics.text, /^mhl_sessions_active 4$/m);
    assert.match(metrics.text, /^mhl_sessions_refused_total\{cap="client"\} 1$/m);
    assert.match(metrics.text, /^mhl_sessions_refused_total\{cap="server"\} 1$/m);
    assert.equal(await server.stop(), 0);
  });
});

describe('mhl serve mcp --http: busy sessions outlive a flood and the sweep', () => {
  it('keeps a session with a call in flight, and sweeps an idle one even with a run under way', async () => {
    // A one-second idle TTL: a session not busy is swept (or evicted) a second after its last
    // request, so the session with the call would go first if it were not kept.
    const server = start(['--max-sessions', '4', '--max-sessions-per-client', '4'], {
      MHL_SERVE_SESSION_IDLE_TTL: '1s',
    });
    const port = await server.ready;
    const dir = tempDir();
    const [callGate, runGate] = ['call-gate', 'run-gate'].map((f) => join(dir, f)) as [
      string,
      string,
    ];
    const caller = { address: '127.0.0.2' };
    const runner = { address: '127.0.0.3' };
    const idler = { address: '127.0.0.4' };
    const flooder = { address: '127.0.0.1' };

    const callSession = await openSession(port, caller);
    const call = inSession(port, callSession, gatedCall(7, callGate), caller);
    await server.logged('call started');
    const runSession = await openSession(port, runner);
    const started = await inSession(
      port,
      runSession,
      rpc(1, 'run/start', { name: 'Gated', arguments: { gate: runGate, context: { cwd: dir } } }),
      runner,
    );
    const runId = (started.json()['result'] as { runId: string }).runId;
    const idle = await openSession(port, idler);

    // The flood: initialize from one more client until three of its sessions got in. The table
    // is full after the first, so each later one needs a session idle past the TTL to go.
    let admitted = 0;
    await until(
      async () => {
        if ((await initialize(port, flooder)).status === 200) admitted++;
        return admitted >= 3;
      },
      { what: 'three flooding sessions to be admitted', timeoutMs: 20_000 },
    );
    writeFileSync(callGate, '');
    const answered = await call;
    assert.equal(answered.status, 200);
    const body = answered.json() as { id: number; result: { structuredContent: unknown } };
    assert.equal(body.id, 7);
    assert.deepEqual(body.result.structuredContent, { trail: ['one', 'two', 'last'] });
    const kept = await inSession(port, callSession, rpc(8, 'ping'), caller);
    assert.equal(
      kept.status,
      200,
      'the session with the call in flight was neither swept nor evicted',
    );
    // Owning a working run is not activity: its client was silent past the TTL, so it went,
    // and the run was released to the first caller naming it.
    const gone = await inSession(port, runSession, rpc(2, 'run/status', { runId }), runner);
    assert.equal(gone.status, 404, 'the silent session owning a run was swept');
    assert.equal((await inSession(port, idle, rpc(1, 'ping'), idler)).status, 404);
    const claimer = await openSession(port, runner);
    const claimed = await inSession(port, claimer, rpc(3, 'run/status', { runId }), runner);
    assert.equal((claimed.json()['result'] as { state: string }).state, 'working');
    writeFileSync(runGate, '');
    const done = await until(
      async () => {
        const reply = await inSession(port, claimer, rpc(4, 'run/status', { runId }), runner);
        const view = reply.json()['result'] as { state: string } | undefined;
        return view?.state === 'completed' ? view : undefined;
      },
      { what: 'the run to complete, read by its new owner', timeoutMs: 20_000 },
    );
    assert.equal(done.state, 'completed');
    assert.equal(await server.stop(), 0);
  });
});

describe('mhl serve mcp --http: the idle sweep', () => {
  it('ends sessions whose client went silent, with no cap reached and no request to trigger it', async () => {
    // Far below both caps: only the timer can end these sessions. They are watched through
    // /metrics, since any request on a session would count as activity and keep it.
    const server = start([], { MHL_SERVE_SESSION_IDLE_TTL: '1s' });
    const port = await server.ready;
    const froms = ['127.0.0.2', '127.0.0.3', '127.0.0.3'].map((address) => ({ address }));
    const ids: string[] = [];
    for (const from of froms) ids.push(await openSession(port, from));
    const active = async () => {
      const text = (await send(port, { method: 'GET', path: '/metrics' })).text;
      return Number(/^mhl_sessions_active (\d+)$/m.exec(text)?.[1]);
    };
    await until(async () => (await active()) === 0, {
      what: 'the idle sweep to end every session',
      timeoutMs: 20_000,
    });
    for (const [i, id] of ids.entries()) {
      const reply = await inSession(port, id, rpc(i + 1, 'ping'), froms[i]);
      assert.equal(reply.status, 404, 'a swept session is unknown');
    }
    // The table has room again for the same clients.
    assert.equal((await initialize(port, froms[0])).status, 200);
    assert.equal(await server.stop(), 0);
  });
});

/** A POST read as it arrives: its head first, then its whole body. */
function post(port: number, id: string, message: unknown) {
  const { head, reply } = exchange(port, {
    headers: { accept: BOTH, 'mcp-session-id': id, 'mcp-protocol-version': LEGACY },
    body: message,
  });
  return { head, body: reply.then((r) => r.text) };
}

describe('mhl serve mcp --http: a request whose session ends', () => {
  it('answers a call in flight when its session is deleted, as JSON and as a stream', async () => {
    const server = start();
    const port = await server.ready;
    const dir = tempDir();
    const plain = await openSession(port);
    const call = post(port, plain, gatedCall(5, join(dir, 'never')));
    await server.logged('call started');
    const streamed = await openSession(port);
    const stream = post(port, streamed, gatedCall(6, join(dir, 'never'), { progressToken: 't' }));
    assert.equal((await stream.head).status, 200, 'the stream is open (first progress sent)');
    for (const id of [plain, streamed]) {
      const ended = await send(port, { method: 'DELETE', headers: { 'mcp-session-id': id } });
      assert.equal(ended.status, 204);
    }
    const { status } = await call.head;
    assert.equal(status, 404, 'not a bare 202');
    const answer = JSON.parse(await call.body) as {
      id: number;
      error: { code: number; data: { code: string } };
    };
    assert.deepEqual(
      [answer.id, answer.error.code, answer.error.data.code],
      [5, -32600, 'SESSION_ENDED'],
    );
    const events = (await stream.body)
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)) as Record<string, unknown>);
    const last = events.at(-1) as { id: number; error: { data: { code: string } } };
    assert.deepEqual([last.id, last.error.data.code], [6, 'SESSION_ENDED']);
    assert.equal(await server.stop(), 0);
  });

  it('answers every request of a 2025-03-26 batch when its session is deleted mid-call', async () => {
    const server = start();
    const port = await server.ready;
    const dir = tempDir();
    const opened = await send(port, {
      headers: { accept: BOTH },
      body: rpc(0, 'initialize', {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      }),
    });
    const id = opened.headers['mcp-session-id'] as string;
    // Request 12 is cancelled by the client in the same batch: MCP lets it go unanswered.
    const batch = post(port, id, [
      gatedCall(11, join(dir, 'never')),
      rpc(12, 'tools/call', {
        name: 'Gated',
        arguments: { gate: join(dir, 'never'), context: { cwd: dir } },
      }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12 } },
      rpc(13, 'ping'),
    ]);
    await server.logged('call started');
    const ended = await send(port, { method: 'DELETE', headers: { 'mcp-session-id': id } });
    assert.equal(ended.status, 204);
    assert.equal((await batch.head).status, 200);
    const answers = JSON.parse(await batch.body) as Array<{
      id: number;
      result?: unknown;
      error?: { code: number; data: { code: string } };
    }>;
    const byId = new Map(answers.map((answer) => [answer.id, answer]));
    assert.deepEqual(
      [...byId.keys()].sort(),
      [11, 13],
      'both requests answered, the cancelled one not',
    );
    assert.deepEqual(byId.get(13)?.result, {});
    const call = byId.get(11);
    assert.deepEqual([call?.error?.code, call?.error?.data.code], [-32600, 'SESSION_ENDED']);
    assert.equal(await server.stop(), 0);
  });
});

describe('mhl serve mcp: session cap flags', () => {
  for (const [args, pattern] of [
    [['--http', '--max-sessions', '0'], /--max-sessions takes a whole number from 1 to 100000/],
    [['--http', '--max-sessions', 'lots'], /--max-sessions takes a whole number/],
    [
      ['--http', '--max-sessions', '3', '--max-sessions-per-client', '4'],
      /--max-sessions-per-client takes a whole number from 1 to --max-sessions \(3\)/,
    ],
    [['--max-sessions-per-client', '4'], /--max-sessions-per-client is only valid with --http/],
  ] as [string[], RegExp][]) {
    it(`refuses ${args.join(' ')} at start-up with exit 2`, async () => {
      const result = await runCli(['serve', 'mcp', FOLDER, ...args]);
      assert.equal(result.code, 2);
      assert.match(result.stderr, pattern);
    });
  }
});

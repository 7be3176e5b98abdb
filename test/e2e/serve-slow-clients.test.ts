/**
 * Slow and numerous clients against `mhl serve mcp --http` (issue 18, part 4): the header, body
 * and request deadlines close what stalls (and only what stalls: event streams and long calls
 * outlive them), the connection caps refuse what is over them, the body budget refuses bodies
 * that do not fit, and 1,000 stalled connections keep the server's resident memory within
 * 64 MiB of what it was. Clients pick their loopback source address (127.0.0.2, …; Linux
 * routes all of 127/8 to lo) so the per-address cap can be told apart from the total one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import {
  legacyEventStream,
  MODERN_META,
  MODERN_VERSION,
  modern,
  type Reply,
  rpc,
  send,
  serverStarter,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');
const MIB = 1024 * 1024;
const start = serverStarter(FOLDER);

/** A raw connection from `from`, and everything the server sent on it until it closed. */
interface Raw {
  readonly socket: Socket;
  readonly opened: number;
  /** Resolves once connected (or closed first, refused). */
  readonly connected: Promise<void>;
  /** Resolves when the server closed it: what it sent, and when (ms after opening). */
  readonly closed: Promise<{ text: string; afterMs: number }>;
  readonly isClosed: () => boolean;
}

function raw(port: number, from: string, text?: string | readonly (string | Buffer)[]): Raw {
  const opened = Date.now();
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  const chunks: Buffer[] = [];
  let closedYet = false;
  socket.on('data', (d: Buffer) => chunks.push(d));
  // A refused connection may be reset: that is a close like any other here.
  socket.on('error', () => undefined);
  const connected = new Promise<void>((done) => {
    socket.once('connect', () => {
      for (const part of typeof text === 'string' ? [text] : (text ?? [])) socket.write(part);
      done();
    });
    socket.once('close', () => done());
  });
  const closed = new Promise<{ text: string; afterMs: number }>((done) =>
    socket.once('close', () => {
      closedYet = true;
      done({ text: Buffer.concat(chunks).toString('latin1'), afterMs: Date.now() - opened });
    }),
  );
  return { socket, opened, connected, closed, isClosed: () => closedYet };
}

/** The status and JSON body of a raw HTTP/1.1 answer. */
function parseAnswer(text: string): { status: number; head: string; body: unknown } {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end).toLowerCase();
  const body = text.slice(end + 4);
  return {
    status: Number(/^http\/1\.1 (\d{3})/.exec(head)?.[1]),
    head,
    body: body.startsWith('{') ? JSON.parse(body) : body,
  };
}

function errorOf(body: unknown): { code: number; data: Record<string, unknown> } {
  return (body as { error: { code: number; data: Record<string, unknown> } }).error;
}

/** One sample of `/metrics` (asked from 127.0.0.1, on `agent`'s connection if given). */
async function metric(port: number, sample: string, agent?: Agent): Promise<number> {
  const options = { method: 'GET', path: '/metrics', ...(agent ? { agent } : {}) };
  const text = (await send(port, options)).text;
  const escaped = sample.replace(/[{}"[\]]/g, (c) => `\\${c}`);
  const found = new RegExp(`^${escaped} (\\d+)$`, 'm').exec(text);
  assert.ok(found, `no ${sample} in /metrics`);
  return Number(found[1]);
}

/** The server's resident set, in bytes. */
function rss(pid: number): number {
  const found = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(found, 'no VmRSS');
  return Number(found[1]) * 1024;
}

/** A stateless `server/discover` from the loopback address `from`. */
function discover(port: number, from: string): Promise<Reply> {
  return send(port, {
    localAddress: from,
    headers: { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' },
    body: rpc(1, 'server/discover', { _meta: MODERN_META }),
  });
}

const POST_HEAD = (length: number) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
  `Content-Length: ${length}\r\n\r\n`;

describe('mhl serve mcp --http against slow clients', () => {
  it('closes a connection whose headers, body or whole request stall, after its deadline', async () => {
    const server = start([
      '--headers-timeout',
      '300ms',
      '--body-timeout',
      '300ms',
      '--request-timeout',
      '1s',
    ]);
    const port = await server.ready;
    const idle = raw(port, '127.0.0.1');
    const headers = raw(port, '127.0.0.1', 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const body = raw(port, '127.0.0.1', `${POST_HEAD(100)}{"jsonrpc":`);
    // A route that never reads its body answers at once; the request deadline still ends it.
    const control = raw(
      port,
      '127.0.0.1',
      'POST /control/shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 60\r\n\r\n{"instance_id":',
    );
    const unread = raw(
      port,
      '127.0.0.1',
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n' + 'Content-Length: 10\r\n\r\n',
    );

    for (const stalled of [idle, headers]) {
      const { text, afterMs } = await stalled.closed;
      assert.equal(parseAnswer(text).status, 408, text);
      assert.ok(afterMs >= 300 && afterMs < 1000, `closed after ${afterMs} ms`);
    }
    const bodyClosed = await body.closed;
    const answer = parseAnswer(bodyClosed.text);
    assert.equal(answer.status, 408, bodyClosed.text);
    assert.match(answer.head, /^connection: close$/m);
    assert.equal(errorOf(answer.body).code, -32600);
    assert.deepEqual(errorOf(answer.body).data, { code: 'BODY_TIMEOUT', timeoutMs: 300 });
    assert.ok(bodyClosed.afterMs >= 300 && bodyClosed.afterMs < 1000, `${bodyClosed.afterMs} ms`);
    const controlAnswer = parseAnswer((await control.closed).text);
    assert.deepEqual(
      [controlAnswer.status, controlAnswer.body],
      [408, { error: 'REQUEST_TIMEOUT' }],
    );
    const unreadClosed = await unread.closed;
    assert.equal(parseAnswer(unreadClosed.text).status, 200);
    assert.ok(unreadClosed.afterMs >= 1000, `closed after ${unreadClosed.afterMs} ms`);
    // The stalled body gave its bytes back.
    assert.equal(await metric(port, 'mhl_http_body_buffer_bytes'), 0);
    assert.equal(await server.stop(), 0);
  });

  it('does not wait for a stalled body at shutdown', async () => {
    const server = start();
    const port = await server.ready;
    const stalled = raw(port, '127.0.0.1', `${POST_HEAD(100)}{"jsonrpc":`);
    await until(async () => (await metric(port, 'mhl_http_body_buffer_bytes')) === 11, {
      what: 'the stalled body to be read',
    });
    // 0, not MCP_SHUTDOWN_TIMEOUT's 1: the 10 s body deadline is past the 5 s shutdown budget.
    assert.equal(await server.stop(), 0);
    await stalled.closed;
  });

  it('lets an event stream and a slow tools/call outlive the request deadline', async () => {
    const server = start(['--headers-timeout', '200ms', '--request-timeout', '200ms']);
    const port = await server.ready;
    const { session, headers, stream } = await legacyEventStream(port);
    assert.equal(stream.statusCode, 200);
    const ended = new Promise<void>((done) => stream.on('end', done).resume());
    // The clock: a connection that stalls in its headers meanwhile is closed at the deadline.
    const reference = raw(port, '127.0.0.1', 'GET /healthz HTTP/1.1\r\n');
    const call = await send(port, {
      headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: rpc(2, 'tools/call', {
        name: 'Sleepy',
        arguments: { ms: 1000, context: { cwd: tempDir() } },
      }),
    });
    assert.equal(call.status, 200, call.text);
    const result = call.json()['result'] as { isError?: boolean };
    assert.notEqual(result.isError, true, call.text);
    assert.ok(reference.isClosed(), 'the stalled reference outlived the call: no deadline ran');
    assert.ok(!stream.destroyed && !stream.complete, 'the event stream was cut');
    assert.equal((await send(port, { method: 'DELETE', headers })).status, 204);
    await ended;
    assert.equal(await server.stop(), 0);
  });

  it('refuses connections over the per-address and the total cap by closing them', async () => {
    const server = start(['--max-connections', '6', '--max-connections-per-address', '2']);
    const port = await server.ready;
    // Every probe rides one kept-alive connection, so the count it reads is the held ones + 1.
    const probe = new Agent({ keepAlive: true, maxSockets: 1 });
    const held: Raw[] = [];
    const hold = async (from: string) => {
      const connection = raw(port, from);
      held.push(connection);
      await connection.connected;
    };
    const open = (n: number) =>
      until(async () => (await metric(port, 'mhl_http_connections_open', probe)) === n + 1, {
        what: `${n} connections open beside the probe`,
      });
    await hold('127.0.0.2');
    await hold('127.0.0.2');
    await open(2);
    const thirdFromOne = raw(port, '127.0.0.2');
    assert.equal((await thirdFromOne.closed).text, '', 'refused without an answer');
    // Another address still gets in, and is served.
    const served = await send(port, { method: 'GET', path: '/healthz', agent: probe });
    assert.equal(served.status, 200);
    await hold('127.0.0.3');
    await hold('127.0.0.3');
    await open(4);
    await hold('127.0.0.4');
    await open(5);
    const overTotal = raw(port, '127.0.0.5');
    assert.equal((await overTotal.closed).text, '', 'refused without an answer');
    assert.ok(
      held.every((c) => !c.isClosed()),
      'a held connection was closed',
    );
    for (const c of held) c.socket.destroy();
    await open(0);
    const refused = (cap: string) =>
      metric(port, `mhl_http_connections_refused_total{cap="${cap}"}`, probe);
    assert.equal(await refused('per_address'), 1);
    assert.equal(await refused('total'), 1);
    probe.destroy();
    assert.equal(await server.stop(), 0);
  });

  it('answers 503 to a body that does not fit the body budget while the held ones still arrive', async () => {
    // A 5-minute body deadline: held bodies count as stalled only after 30 s (a tenth of it),
    // so here nothing is shed and what does not fit is refused.
    const server = start(['--body-buffer-mib', '2', '--body-timeout', '5m']);
    const port = await server.ready;
    const buffered = (bytes: number) =>
      until(async () => (await metric(port, 'mhl_http_body_buffer_bytes')) === bytes, {
        what: `${bytes} bytes of bodies held`,
      });
    const busy = (reply: Reply) => {
      assert.equal(reply.status, 503, reply.text);
      const error = errorOf(reply.json());
      assert.equal(error.code, -32000);
      assert.deepEqual(error.data, { code: 'BODY_BUFFER_FULL', retryable: true });
    };
    // Bytes count as they arrive, not as declared: a declared body holds only what was sent.
    const declared = raw(port, '127.0.0.4', `${POST_HEAD(MIB)}{"jsonrpc":`);
    await buffered(11);
    declared.socket.destroy();
    await buffered(0);
    // One address may hold half the budget: its next body is refused, another address's is not.
    const almost = Buffer.alloc(MIB - 1, 0x20);
    const first = raw(port, '127.0.0.2', [POST_HEAD(MIB), almost]);
    await buffered(MIB - 1);
    busy(await discover(port, '127.0.0.2'));
    assert.equal((await discover(port, '127.0.0.1')).status, 200);
    // The whole budget held: every address is refused until a body gives its bytes back.
    const second = raw(port, '127.0.0.3', [POST_HEAD(MIB), almost]);
    await buffered(2 * (MIB - 1));
    busy(await discover(port, '127.0.0.1'));
    first.socket.destroy();
    second.socket.destroy();
    await buffered(0);
    assert.equal((await discover(port, '127.0.0.2')).status, 200);
    assert.equal(await metric(port, 'mhl_http_bodies_shed_total'), 0);
    assert.equal(await server.stop(), 0);
  });

  it('sheds a stalled body (408 BODY_STALLED) to make room for one that is arriving', async () => {
    // Default 10 s body deadline: a body that has sent nothing for 1 s has stalled.
    const server = start(['--body-buffer-mib', '2']);
    const port = await server.ready;
    // The loopback case: the staller and the honest client share one address and its half.
    const stalled = raw(port, '127.0.0.2', [POST_HEAD(MIB), Buffer.alloc(MIB - 1, 0x20)]);
    await until(async () => (await metric(port, 'mhl_http_body_buffer_bytes')) === MIB - 1, {
      what: 'the stalled body held',
    });
    // Refused (503) while the held body may still be on its way; served once it has stalled.
    const served = await until(
      async () => {
        const reply = await discover(port, '127.0.0.2');
        if (reply.status === 503) return undefined;
        return reply;
      },
      { what: 'a body served from the same address' },
    );
    assert.equal(served.status, 200, served.text);
    const { text, afterMs } = await stalled.closed;
    const answer = parseAnswer(text);
    assert.equal(answer.status, 408, text);
    assert.deepEqual(errorOf(answer.body).data, { code: 'BODY_STALLED', retryable: true });
    assert.ok(afterMs < 10_000, `shed after ${afterMs} ms, not at the deadline`);
    assert.equal(await metric(port, 'mhl_http_bodies_shed_total'), 1);
    assert.equal(await server.stop(), 0);
  });

  for (const sources of [1, 8]) {
    it(`holds 1,000 stalled connections from ${sources} address(es) within 64 MiB`, async (t) => {
      // Default caps and budget; deadlines short enough for the test, long enough to measure.
      const deadline = 3000;
      const server = start(
        ['--headers-timeout', '3s', '--body-timeout', '3s', '--request-timeout', '6s'],
        { MHL_LOG_LEVEL: 'info' },
      );
      const port = await server.ready;
      const pid = server.child.pid as number;
      // Warm: the first requests load what every later one uses (a call loads the runtime and
      // Ajv), so the growth measured is the connections' alone.
      assert.equal((await modern(port, 'server/discover')).status, 200);
      const greet = await modern(
        port,
        'tools/call',
        {
          name: 'Greet',
          arguments: { name: 'ana', context: { cwd: tempDir() } },
        },
        { 'mcp-name': 'Greet' },
      );
      assert.equal(greet.status, 200, greet.text);
      await metric(port, 'mhl_http_connections_open');
      const before = rss(pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rss(pid));
      }, 10);
      const almostMib = Buffer.alloc(MIB - 1, 0x20);
      const flood: { kind: 'headers' | 'body'; connection: Raw }[] = [];
      for (let i = 0; i < 1000; i++) {
        const from = `127.0.0.${2 + (i % sources)}`;
        const kind = i % 2 === 0 ? 'headers' : 'body';
        const text =
          kind === 'headers'
            ? [`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'p'.repeat(8000)}`]
            : [POST_HEAD(MIB), almostMib];
        flood.push({ kind, connection: raw(port, from, text) });
      }
      try {
        await Promise.all(flood.map((f) => f.connection.connected));
        if (sources === 1) {
          // Held: the per-address cap leaves every other address its own room.
          const served = await modern(port, 'server/discover');
          assert.equal(served.status, 200, served.text);
          assert.ok((await metric(port, 'mhl_http_connections_open')) <= 256 + 1);
        }
        const ends = await Promise.all(flood.map((f) => f.connection.closed));
        const growth = peak - before;
        const refusedBy = async (cap: string) =>
          metric(port, `mhl_http_connections_refused_total{cap="${cap}"}`);
        const refused = {
          total: await refusedBy('total'),
          per_address: await refusedBy('per_address'),
        };
        t.diagnostic(
          `VmRSS ${(before / MIB).toFixed(1)} MiB before, ${(peak / MIB).toFixed(1)} MiB at most ` +
            `while held; refused ${JSON.stringify(refused)}`,
        );
        assert.ok(
          growth < 64 * MIB,
          `resident memory grew ${(growth / MIB).toFixed(1)} MiB (from ${(before / MIB).toFixed(1)})`,
        );
        // What was held was held until its deadline, then answered 408; the rest was refused
        // (closed at once by a cap) or its body did not fit the budget (503).
        const held = { headers: 0, body: 0 };
        ends.forEach(({ text, afterMs }, i) => {
          const kind = flood[i]?.kind as 'headers' | 'body';
          if (text === '') return;
          const { status, body } = parseAnswer(text);
          if (status === 503) {
            assert.equal(kind, 'body');
            return;
          }
          assert.equal(status, 408, text);
          // A body shed to make room for another (BODY_STALLED) ends before the deadline.
          if (kind === 'body' && errorOf(body).data['code'] === 'BODY_STALLED') return;
          assert.ok(afterMs >= deadline, `a ${kind} stall closed after ${afterMs} ms`);
          if (kind === 'body') assert.equal(errorOf(body).data['code'], 'BODY_TIMEOUT');
          held[kind]++;
        });
        assert.ok(held.headers > 0 && held.body > 0, JSON.stringify(held));
        // 8 MiB of bodies at most, half of it for one address.
        const fits = sources === 1 ? 4 : 8;
        assert.ok(held.body <= fits, `${held.body} stalled bodies held; the budget fits ${fits}`);
        // One address meets its own cap; eight stay under it, and what bounds them is the
        // total cap and the budget.
        if (sources === 1) assert.ok(refused.per_address > 0, JSON.stringify(refused));
        else assert.equal(refused.per_address, 0, JSON.stringify(refused));
      } finally {
        clearInterval(sampler);
        for (const f of flood) f.connection.socket.destroy();
      }
      assert.equal(await server.stop(), 0);
    });
  }
});

/**
 * Async runs shared by many callers, end to end (issue 18, parts 2 and 5): per-owner quotas
 * that leave room for the others, a session's runs outliving the session, and a foreign runId
 * answered as fast as an unknown one, measured.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import {
  call,
  inLegacySession,
  MODERN_META,
  modern,
  openLegacySession,
  type Reply,
  resultOf,
  rpc,
  send,
  serverStarter,
} from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';
import { settle } from '../helpers/runs.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/runs');
const CWD = { context: { cwd: REPO_ROOT } };
const AUTH = ['--token', 'k', '--principal-header', 'X-Who'];
const ANN = { authorization: 'Bearer k', 'x-who': 'ann' };
const BOB = { authorization: 'Bearer k', 'x-who': 'bob' };

const start = serverStarter(FOLDER, 'SIGKILL');

/** A legacy session without a principal, from `localAddress` if given; resolves to its id. */
const openSession = (port: number, localAddress?: string) =>
  openLegacySession(port, {}, localAddress);

const inSessionRaw = (
  port: number,
  session: string,
  method: string,
  params: Record<string, unknown>,
  localAddress?: string,
) => inLegacySession(port, session, method, params, {}, localAddress);

/** A legacy session's request, its result; fails the test on a JSON-RPC error. */
async function inSession(
  port: number,
  session: string,
  method: string,
  params: Record<string, unknown>,
  localAddress?: string,
): Promise<Record<string, unknown>> {
  return resultOf(await inSessionRaw(port, session, method, params, localAddress), method);
}

/** The run-layer code a legacy answer refused with, if it did. */
function refusalCode(reply: Reply): unknown {
  const error = reply.json()['error'] as { data?: Record<string, unknown> } | undefined;
  return error?.data?.['code'];
}

async function deleteSession(port: number, session: string): Promise<void> {
  const deleted = await send(port, {
    method: 'DELETE',
    headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
  });
  assert.ok(deleted.status < 300, deleted.text);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The standard error of a sample's median, estimated robustly from its MAD. */
function medianError(values: readonly number[]): number {
  const m = median(values);
  const mad = median(values.map((v) => Math.abs(v - m)));
  // sigma ≈ 1.4826 MAD; the median's standard error ≈ 1.2533 sigma / sqrt(n).
  return (1.2533 * 1.4826 * mad) / Math.sqrt(values.length);
}

describe('async runs shared by many callers', () => {
  it("refuses an owner past its quota with RUN_QUOTA_EXCEEDED while another owner's start succeeds", async () => {
    const server = start([...AUTH, '--max-runs-per-caller', '1']);
    const port = await server.ready;
    const held = await call(port, 'run/start', { name: 'Approval', arguments: CWD }, ANN);
    await settle(port, held['runId'] as string, ANN);
    const refused = await modern(port, 'run/start', { name: 'Count', arguments: CWD }, ANN);
    assert.equal(refused.status, 503, refused.text);
    const error = refused.json()['error'] as { code: number; data: Record<string, unknown> };
    assert.equal(error.code, -32000);
    assert.deepEqual(
      [error.data['code'], error.data['retryable'], error.data['limit'], error.data['max']],
      ['RUN_QUOTA_EXCEEDED', true, '--max-runs-per-caller', 1],
    );
    const tool = await call(
      port,
      'tools/call',
      { name: 'mhl_run_start', arguments: { workflow: 'Count', arguments: CWD } },
      ANN,
    );
    const diagnostic = (tool['_meta'] as Record<string, Record<string, unknown>>)['mhl/diagnostic'];
    assert.equal(tool['isError'], true);
    assert.equal(diagnostic?.['code'], 'RUN_QUOTA_EXCEEDED');
    const theirs = await call(port, 'run/start', { name: 'Count', arguments: CWD }, BOB);
    assert.equal((await settle(port, theirs['runId'] as string, BOB))['state'], 'completed');
  });

  it('counts every legacy session of one address against one quota, deleted ones too, while another address still starts runs', async () => {
    const server = start(['--max-runs-per-caller', '2']);
    const port = await server.ready;
    const approval = { name: 'Approval', arguments: CWD };
    const sessions = [await openSession(port), await openSession(port), await openSession(port)];
    for (const session of sessions.slice(0, 2)) {
      const { runId } = await inSession(port, session, 'run/start', approval);
      await until(
        async () =>
          (await inSession(port, session, 'run/status', { runId }))['state'] === 'paused' ||
          undefined,
        { what: `run ${runId} to pause` },
      );
    }
    const third = await inSessionRaw(port, sessions[2] as string, 'run/start', approval);
    assert.equal(refusalCode(third), 'RUN_QUOTA_EXCEEDED', third.text);
    // Ending the sessions releases their runs, which still count: the loop gains nothing.
    for (const session of sessions) await deleteSession(port, session);
    await server.logged(/"msg":"runs released"/);
    const fresh = await openSession(port);
    const again = await inSessionRaw(port, fresh, 'run/start', approval);
    assert.equal(refusalCode(again), 'RUN_QUOTA_EXCEEDED', again.text);
    const stateless = await modern(port, 'run/start', { name: 'Count', arguments: CWD });
    assert.equal(stateless.status, 503, 'a stateless call from the same address counts too');
    // Another host (address) has its own quota, session or not.
    const elsewhere = await openSession(port, '127.0.0.2');
    const theirs = await inSession(port, elsewhere, 'run/start', approval, '127.0.0.2');
    assert.equal(typeof theirs['runId'], 'string');
  });

  it('counts the queued runs of all legacy sessions of one address against one queue quota', async () => {
    const server = start(['--max-active', '1', '--max-queued-per-caller', '1']);
    const port = await server.ready;
    const dir = tempDir('mhl-runs-');
    const count = { name: 'Count', arguments: CWD };
    const one = await openSession(port);
    const two = await openSession(port);
    const held = await inSession(port, one, 'run/start', {
      name: 'Blocker',
      arguments: { dir, ...CWD },
    });
    assert.equal(held['state'], 'working');
    assert.equal((await inSession(port, one, 'run/start', count))['state'], 'queued');
    const refused = await inSessionRaw(port, two, 'run/start', count);
    assert.equal(refusalCode(refused), 'RUN_QUOTA_EXCEEDED', refused.text);
    const elsewhere = await openSession(port, '127.0.0.2');
    const theirs = await inSession(port, elsewhere, 'run/start', count, '127.0.0.2');
    assert.equal(theirs['state'], 'queued');
    writeFileSync(join(dir, 'go'), '');
    await until(
      async () =>
        (await inSession(port, elsewhere, 'run/status', { runId: theirs['runId'] }, '127.0.0.2'))[
          'state'
        ] === 'completed' || undefined,
      { what: 'the other address’s run to complete', timeoutMs: 30_000 },
    );
  });

  it('keeps a run working after its session is deleted; the next caller to name it claims it', async () => {
    const server = start();
    const port = await server.ready;
    const dir = tempDir('mhl-runs-');
    const session = await openSession(port);
    const started = await inSession(port, session, 'run/start', {
      name: 'Blocker',
      arguments: { dir, ...CWD },
    });
    const runId = started['runId'] as string;
    const pid = await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step' });
    const deleted = await send(port, {
      method: 'DELETE',
      headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    });
    assert.ok(deleted.status < 300, deleted.text);
    await server.logged(/"msg":"runs released"/);
    assert.equal(isAlive(pid), true, 'the run outlives its session');
    writeFileSync(join(dir, 'go'), '');
    const other = await openSession(port);
    const view = await until(
      async () => {
        const v = await inSession(port, other, 'run/status', { runId });
        return v['state'] === 'completed' ? v : undefined;
      },
      { what: 'the released run to complete', timeoutMs: 30_000 },
    );
    assert.deepEqual(view['reached'], ['First', 'Hold', 'Last']);
    const list = await inSession(port, other, 'run/list', {});
    assert.deepEqual(
      (list['runs'] as { runId: string }[]).map((r) => r.runId),
      [runId],
      'claimed by the session that named it',
    );
    const stranger = await modern(port, 'run/status', { runId });
    assert.equal((stranger.json()['error'] as { code: number }).code, -32602, stranger.text);
  });

  it('answers a foreign runId with 250 KiB of arguments as fast as an unknown one (1,000 samples each)', async (t) => {
    const server = start(AUTH, { MHL_LOG_LEVEL: 'warn' });
    const port = await server.ready;
    const label = 'x'.repeat(250 * 1024);
    const started = await call(
      port,
      'run/start',
      { name: 'Count', arguments: { label, ...CWD } },
      ANN,
    );
    const runId = started['runId'] as string;
    await settle(port, runId, ANN);
    // One kept-alive connection, so each sample is one request and its answer, nothing more.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const status = async (id: string): Promise<{ ms: number; text: string }> => {
      const began = process.hrtime.bigint();
      const reply = await send(port, {
        agent,
        headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'run/status', ...BOB },
        body: rpc(1, 'run/status', { runId: id, _meta: MODERN_META }),
      });
      return { ms: Number(process.hrtime.bigint() - began) / 1e6, text: reply.text };
    };
    const unknownId = () => randomBytes(16).toString('hex');
    const foreign: number[] = [];
    const unknownA: number[] = [];
    const unknownB: number[] = [];
    try {
      const sample = await status(runId);
      assert.equal(sample.text, (await status(unknownId())).text, 'the same answer, byte for byte');
      for (let i = 0; i < 200; i++) await status(i % 2 ? runId : unknownId()); // warm-up
      // Interleaved in a random order each round, so load on the machine hits all three alike.
      for (let round = 0; round < 1000; round++) {
        const order = [0, 1, 2].sort(() => Math.random() - 0.5);
        for (const which of order) {
          if (which === 0) foreign.push((await status(runId)).ms);
          else (which === 1 ? unknownA : unknownB).push((await status(unknownId())).ms);
        }
      }
    } finally {
      agent.destroy();
    }
    const unknown = [...unknownA, ...unknownB];
    const difference = Math.abs(median(foreign) - median(unknown));
    // The noise band, measured: how far two samples of the very same path drift apart, and four
    // standard errors of the difference of the two medians compared, whichever is wider.
    const split = Math.abs(median(unknownA) - median(unknownB));
    const statistical = 4 * Math.hypot(medianError(foreign), medianError(unknown));
    const band = Math.max(split, statistical);
    const report = `foreign ${median(foreign).toFixed(3)} ms, unknown ${median(unknown).toFixed(3)} ms, difference ${(difference * 1000).toFixed(0)} µs, band ${(band * 1000).toFixed(0)} µs (split ${(split * 1000).toFixed(0)}, 4 SE ${(statistical * 1000).toFixed(0)})`;
    t.diagnostic(report);
    assert.ok(difference <= band, report);
  });
});

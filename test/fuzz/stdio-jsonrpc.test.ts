/**
 * Property: whatever lines reach `mhl serve mcp` on stdin — any JSON value, JSON-RPC-shaped
 * objects with random method/params/id, raw bytes (often not UTF-8, sometimes with newlines in
 * them), truncated JSON, batches — every line it writes is one well-formed JSON-RPC message
 * without a stack trace or a server path, every well-formed request is answered with its id,
 * and the process still answers a probe after each. Three real processes, reused across runs:
 * a legacy session, a 2025-03-26 session (the era that takes batches) and a stateless
 * 2026-07-28 client (stdio serves both eras on one connection).
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI, REPO_ROOT } from '../helpers/cli.js';
import { fc, holds } from '../helpers/fuzz.js';
import { MODERN_META } from '../helpers/http-server.js';
import { assertNoLeak, assertResponse, type Era, payload } from './wire.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/fuzz/serve');
const ANSWER_MS = 10_000;

/** One server over stdio, its output kept as raw lines (so a non-JSON line fails, not throws). */
class Lines {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #watchers = new Set<(line: string) => void>();
  readonly problems: string[] = [];
  /** The text of the message being fuzzed, for telling an echo from a leak. */
  current = '';
  stderr = '';
  #buffer = '';

  constructor() {
    this.child = spawn(process.execPath, [CLI, 'serve', 'mcp', FOLDER], {
      stdio: 'pipe',
      // Debug, so a failure shows the calls the server was in the middle of.
      env: { ...process.env, MHL_LOG_LEVEL: 'debug' },
    });
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => {
      this.#buffer += d;
      for (let nl = this.#buffer.indexOf('\n'); nl >= 0; nl = this.#buffer.indexOf('\n')) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        this.#check(line);
        for (const watch of this.#watchers) watch(line);
      }
    });
  }

  /** Every line must be a response, or a message the server starts (it has a method). */
  #check(line: string): void {
    try {
      assertNoLeak(line, this.current);
      const value = JSON.parse(line) as Record<string, unknown>;
      if (typeof value === 'object' && value !== null && 'method' in value) {
        assert.equal(value['jsonrpc'], '2.0');
        assert.equal(typeof value['method'], 'string');
      } else {
        for (const one of Array.isArray(value) ? value : [value]) assertResponse(one, 'stdout');
      }
    } catch (e) {
      this.problems.push(`${(e as Error).message}\n  line: ${line.slice(0, 400)}`);
    }
  }

  /** Resolves with the first response line carrying `id` written from now on. */
  answer(id: string | number): Promise<void> {
    return new Promise((done, fail) => {
      const timer = setTimeout(() => {
        this.#watchers.delete(watch);
        fail(
          new Error(
            `no answer with id ${JSON.stringify(id)} within ${ANSWER_MS} ms; server log:\n${this.stderr.slice(-1500)}`,
          ),
        );
      }, ANSWER_MS);
      const watch = (line: string) => {
        let ids: unknown[] = [];
        try {
          const value = JSON.parse(line) as unknown;
          ids = (Array.isArray(value) ? value : [value]).map((m) => (m as { id?: unknown })?.id);
        } catch {
          return;
        }
        if (!ids.includes(id)) return;
        clearTimeout(timer);
        this.#watchers.delete(watch);
        done();
      };
      this.#watchers.add(watch);
    });
  }

  write(data: string | Buffer): void {
    this.child.stdin.write(data);
  }
}

const servers = { legacy: new Lines(), batches: new Lines(), modern: new Lines() };
let probes = 0;

after(() => {
  for (const s of Object.values(servers)) s.child.kill('SIGKILL');
});

const VERSIONS = { legacy: '2025-11-25', batches: '2025-03-26' } as const;
let handshakes = 0;

/** Opens (or, after a fuzzed `initialize` renegotiated it, restores) a legacy session. */
async function handshake(era: keyof typeof VERSIONS): Promise<void> {
  const server = servers[era];
  const id = `fuzz-init-${++handshakes}`;
  const answered = server.answer(id);
  server.write(
    `${JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: {
        protocolVersion: VERSIONS[era],
        capabilities: {},
        clientInfo: { name: 'f', version: '1' },
      },
    })}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
  );
  await answered;
}

before(async () => {
  await handshake('legacy');
  await handshake('batches');
});

function property(era: Era) {
  const server = servers[era];
  return fc.asyncProperty(payload(era), async (l) => {
    server.current = typeof l.data === 'string' ? l.data : l.data.toString('latin1');
    const answers = l.sent.flatMap((s) => (s.answeredId === undefined ? [] : [s.answeredId]));
    const waiting = [...new Set(answers)].map((id) => server.answer(id));
    const probe = `fuzz-probe-${++probes}`;
    const probed = server.answer(probe);
    const message = modern(era)
      ? { jsonrpc: '2.0', id: probe, method: 'server/discover', params: { _meta: MODERN_META } }
      : { jsonrpc: '2.0', id: probe, method: 'ping' };
    // The fuzzed line, then the probe on a line of its own (bytes may end mid-line).
    server.write(
      Buffer.concat([Buffer.from(l.data), Buffer.from(`\n${JSON.stringify(message)}\n`)]),
    );
    await Promise.all([...waiting, probed]);
    // A repeated initialize renegotiates the session (by design): put this era's version back.
    if (era !== 'modern' && server.current.includes('"initialize"')) await handshake(era);
    assert.deepEqual(server.problems, []);
    assert.equal(server.child.exitCode, null, server.stderr);
  });
}

function modern(era: Era): boolean {
  return era === 'modern';
}

describe('mhl serve mcp on stdio under random lines', () => {
  it('answers lines on a legacy session well-formed', async (t) => {
    await holds(t, property('legacy'), 150);
  });

  it('answers lines on a 2025-03-26 session (batches allowed) well-formed', async (t) => {
    await holds(t, property('batches'), 100);
  });

  it('answers stateless 2026-07-28 lines well-formed', async (t) => {
    await holds(t, property('modern'), 150);
  });
});

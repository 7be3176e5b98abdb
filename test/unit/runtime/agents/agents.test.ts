import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { agentCacheKey } from '../../../../src/runtime/agents/agent-cache.js';
import { AGENT_FAILURES, type AgentError } from '../../../../src/runtime/agents/agent-error.js';
import type { AgentArg, AgentSpec } from '../../../../src/runtime/agents/agent-spec.js';
import {
  type AgentContext,
  createAgentState,
  runAgent,
} from '../../../../src/runtime/agents/agents.js';
import { REDACTED, Redactor } from '../../../../src/runtime/services/redact.js';
import { until } from '../../../helpers/poll.js';

const FAKE = resolve(import.meta.dirname, '../../../fixtures/bin/fake-agent.mjs');
const ROOT = mkdtempSync(join(tmpdir(), 'mhl-agents-'));
after(() => rmSync(ROOT, { recursive: true, force: true }));

const text = (value: string): AgentArg => ({ kind: 'text', value });
const PROMPT: AgentArg = { kind: 'prompt' };
const SCHEMA: AgentArg = { kind: 'schema' };

function agent(overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    name: 'Fake',
    engine: undefined,
    command: FAKE,
    args: [text('-p'), PROMPT],
    endpoint: undefined,
    temperature: undefined,
    timeoutMs: undefined,
    retry: { maxAttempts: 1, delayMs: 1, retryOn: undefined },
    cache: undefined,
    rateLimit: undefined,
    logPath: undefined,
    trace: false,
    fallback: [],
    ...overrides,
  };
}

interface Harness {
  readonly dir: string;
  readonly ctx: AgentContext;
  readonly lines: string[];
}

function harness(overrides: Partial<AgentContext> = {}): Harness {
  const dir = mkdtempSync(join(ROOT, 't-'));
  const lines: string[] = [];
  const ctx: AgentContext = {
    signal: new AbortController().signal,
    cwd: dir,
    childEnv: { PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}` },
    redactor: new Redactor(),
    output: (line) => lines.push(line),
    cacheDir: '.mhl-cache',
    state: createAgentState(),
    ...overrides,
  };
  return { dir, ctx, lines };
}

/** The lines of a file the fake agent appends to; none when it was never written. */
function linesOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Awaits `promise`, expecting an `AgentError`, and returns it. */
async function failure(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (e) {
    assert.equal((e as AgentError).code, 'AGENT');
    assert.equal((e as AgentError).span, undefined);
    return e as AgentError;
  }
  assert.fail('expected the call to fail');
}

/** A process is gone once it no longer exists or is a zombie nobody has reaped yet. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Every pid the fake agent recorded with `[grandchild:<file>]` (agents and grandchildren). */
function recordedPids(file: string): number[] {
  return linesOf(file).flatMap((l) => l.split(' ').map(Number));
}

type Echo = { prompt: string; schema?: string; name: string; argv: string[]; env: object };

describe('runAgent: argv', () => {
  it('puts the prompt at the first ${prompt}, the schema at ${schema}, later ${prompt} verbatim', async () => {
    const { ctx } = harness();
    const args = [text('--name'), text('a'), text('-p'), PROMPT, text('--json-schema'), SCHEMA];
    const spec = agent({ args: [...args, text('tail'), PROMPT] });
    const out = await runAgent(spec, { prompt: 'hi [json]', schema: '{"type":"object"}' }, ctx);
    const echo = JSON.parse(out) as Echo;
    assert.deepEqual(echo.argv, [
      '--name',
      'a',
      '-p',
      'hi [json]',
      '--json-schema',
      '{"type":"object"}',
      'tail',
      '${prompt}',
    ]);
    assert.equal(echo.prompt, 'hi [json]');
    assert.equal(echo.schema, '{"type":"object"}');
  });

  it('appends the prompt last without a placeholder and drops a schema without one', async () => {
    const { ctx } = harness();
    const spec = agent({ args: [text('--name'), text('b')] });
    const out = await runAgent(spec, { prompt: 'tail [json]', schema: 'S' }, ctx);
    assert.deepEqual((JSON.parse(out) as Echo).argv, ['--name', 'b', 'tail [json]']);
  });

  it('rejects ${schema} without a schema, before spawning', async () => {
    const { ctx, dir } = harness();
    const count = join(dir, 'count');
    const spec = agent({ args: [text('-p'), PROMPT, text('--json-schema'), SCHEMA] });
    const error = await failure(
      runAgent(spec, { prompt: `[count:${count}]`, schema: undefined }, ctx),
    );
    assert.equal(error.failure, AGENT_FAILURES.CONFIG);
    assert.deepEqual(linesOf(count), []);
  });
});

describe('runAgent: results and failures', () => {
  it('returns stdout trimmed', async () => {
    const { ctx } = harness();
    assert.equal(
      await runAgent(agent(), { prompt: 'hello', schema: undefined }, ctx),
      'answer: hello',
    );
  });

  it('fails on an empty response', async () => {
    const { ctx } = harness();
    const error = await failure(runAgent(agent(), { prompt: '[empty]', schema: undefined }, ctx));
    assert.equal(error.failure, AGENT_FAILURES.EMPTY);
    assert.match(error.summary, /^agent "Fake" returned an empty response$/);
  });

  it('fails on a non-zero exit with the trimmed stderr', async () => {
    const { ctx } = harness();
    const error = await failure(runAgent(agent(), { prompt: '[fail:3]', schema: undefined }, ctx));
    assert.equal(error.failure, AGENT_FAILURES.EXIT);
    assert.equal(error.exitCode, 3);
    assert.ok(error.summary.endsWith(': fake-agent: failing with code 3'), error.summary);
  });

  it('fails when the command cannot start, has no command, or names an unknown engine', async () => {
    const { ctx } = harness();
    const req = { prompt: 'x', schema: undefined };
    const missing = await failure(runAgent(agent({ command: join(ROOT, 'nope') }), req, ctx));
    assert.equal(missing.failure, AGENT_FAILURES.PROCESS);
    const none = await failure(runAgent(agent({ command: undefined }), req, ctx));
    assert.equal(none.failure, AGENT_FAILURES.CONFIG);
    const openai = await failure(runAgent(agent({ engine: 'openai/gpt-5' }), req, ctx));
    assert.equal(openai.failure, AGENT_FAILURES.UNSUPPORTED);
    assert.match(openai.summary, /is not supported yet/);
  });

  it('gives the child exactly ctx.childEnv', async () => {
    process.env['MHL_AGENTS_TEST_API_TOKEN'] = 'parent-only-secret';
    try {
      const { ctx } = harness();
      const childEnv = { ...ctx.childEnv, MHL_MARKER: 'on' };
      const out = await runAgent(
        agent(),
        { prompt: '[json]', schema: undefined },
        { ...ctx, childEnv },
      );
      assert.deepEqual((JSON.parse(out) as Echo).env, childEnv);
    } finally {
      delete process.env['MHL_AGENTS_TEST_API_TOKEN'];
    }
  });

  it('redacts registered secrets in error messages, trace lines and the log', async () => {
    const { ctx, dir, lines } = harness();
    const secret = 'sk-test-0123456789';
    ctx.redactor.register(secret);
    const bad = await failure(
      runAgent(agent(), { prompt: `[stderr:${secret}][fail:2]`, schema: undefined }, ctx),
    );
    assert.ok(!bad.message.includes(secret) && bad.message.includes(REDACTED), bad.message);
    const spec = agent({ trace: true, logPath: 'logs/fake.log' });
    for (let i = 0; i < 2; i++)
      await runAgent(spec, { prompt: `tell ${secret}`, schema: undefined }, ctx);
    assert.deepEqual(lines.slice(0, 2), [
      'calling Fake…',
      `Fake response: answer: tell ${REDACTED}`,
    ]);
    const log = readFileSync(join(dir, 'logs/fake.log'), 'utf8');
    assert.equal(log, `\n  answer: tell ${REDACTED}  \n\n`.repeat(2));
  });
});

describe('runAgent: retry, cancellation and timeouts', () => {
  it('retries a failed attempt and returns the later success', async () => {
    const { ctx, dir } = harness();
    const count = join(dir, 'count');
    const spec = agent({ retry: { maxAttempts: 2, delayMs: 1, retryOn: undefined } });
    const prompt = `[count:${count}][fail-once:${join(dir, 'marker')}]`;
    assert.match(await runAgent(spec, { prompt, schema: undefined }, ctx), /^answer: /);
    assert.equal(linesOf(count).length, 2);
  });

  it('retries only errors matching retry_on', async () => {
    const { ctx, dir } = harness();
    const count = join(dir, 'count');
    const req = { prompt: `[count:${count}][fail:7]`, schema: undefined };
    const other = agent({ retry: { maxAttempts: 3, delayMs: 1, retryOn: ['429'] } });
    assert.equal((await failure(runAgent(other, req, ctx))).failure, AGENT_FAILURES.EXIT);
    assert.equal(linesOf(count).length, 1);
    const matching = agent({ retry: { maxAttempts: 3, delayMs: 1, retryOn: ['code 7'] } });
    await failure(runAgent(matching, req, ctx));
    assert.equal(linesOf(count).length, 4);
  });

  it('caps each backoff wait at 30 s and stops waiting when cancelled', async () => {
    const controller = new AbortController();
    const { ctx, dir, lines } = harness({
      signal: controller.signal,
      random: () => 0.999_999,
      output: (line) => {
        lines.push(line);
        if (line.includes('retrying in')) controller.abort();
      },
    });
    const count = join(dir, 'count');
    const spec = agent({
      trace: true,
      retry: { maxAttempts: 5, delayMs: 60_000, retryOn: undefined },
    });
    const error = await failure(
      runAgent(spec, { prompt: `[count:${count}][fail:1]`, schema: undefined }, ctx),
    );
    assert.equal(error.failure, AGENT_FAILURES.CANCELLED);
    assert.match(lines.at(-1) ?? '', /retrying in 29999ms$/);
    assert.equal(linesOf(count).length, 1);
  });

  it('kills the whole process group when cancelled mid-call, without retrying', async () => {
    const controller = new AbortController();
    const { ctx, dir } = harness({ signal: controller.signal });
    const pids = join(dir, 'pids');
    const spec = agent({ retry: { maxAttempts: 3, delayMs: 1, retryOn: undefined } });
    const call = runAgent(spec, { prompt: `[grandchild:${pids}]`, schema: undefined }, ctx);
    await until(() => recordedPids(pids).length === 2, { what: 'both agent pids recorded' });
    controller.abort();
    assert.equal((await failure(call)).failure, AGENT_FAILURES.CANCELLED);
    const [leader, grandchild] = recordedPids(pids);
    await until(() => gone(leader ?? 0) && gone(grandchild ?? 0), {
      what: 'the agent and its grandchild to exit',
    });
  });

  it('rejects at once when already cancelled', async () => {
    const { ctx, dir } = harness({ signal: AbortSignal.abort() });
    const count = join(dir, 'count');
    const error = await failure(
      runAgent(agent(), { prompt: `[count:${count}]`, schema: undefined }, ctx),
    );
    assert.equal(error.failure, AGENT_FAILURES.CANCELLED);
    assert.deepEqual(linesOf(count), []);
  });

  it('times out each attempt, kills its process group, and retries timeouts', async () => {
    const { ctx, dir } = harness();
    const pids = join(dir, 'pids');
    // Long enough for each attempt to start its grandchild on a loaded machine (a node start
    // can take a few hundred ms there), which the pid count below relies on.
    const spec = agent({
      timeoutMs: 1500,
      retry: { maxAttempts: 2, delayMs: 1, retryOn: ['timeout'] },
    });
    const error = await failure(
      runAgent(spec, { prompt: `[grandchild:${pids}]`, schema: undefined }, ctx),
    );
    assert.equal(error.failure, AGENT_FAILURES.TIMEOUT);
    const all = recordedPids(pids);
    assert.equal(all.length, 4);
    await until(() => all.every(gone), { what: 'every agent process to exit' });
  });
});

describe('runAgent: fallback', () => {
  const primary = agent({ name: 'Primary', args: [text('--name'), text('primary')] });
  const backup = agent({ name: 'Backup', args: [text('--name'), text('backup')] });

  it('answers from the first fallback that succeeds', async () => {
    const { ctx } = harness();
    const spec = { ...primary, fallback: [backup] };
    const out = await runAgent(
      spec,
      { prompt: '[json][fail-for:primary]', schema: undefined },
      ctx,
    );
    assert.equal((JSON.parse(out) as Echo).name, 'backup');
  });

  it('raises the last error when every leg fails', async () => {
    const { ctx } = harness();
    const spec = { ...primary, fallback: [agent({ engine: 'openai/x' }), backup] };
    const error = await failure(runAgent(spec, { prompt: '[fail:4]', schema: undefined }, ctx));
    assert.equal(error.agent, 'Backup');
    assert.equal(error.exitCode, 4);
  });
});

describe('runAgent: cache', () => {
  it('serves a repeated call from memory until the ttl passes', async () => {
    let clock = 1_000;
    const { ctx, dir } = harness({ now: () => clock });
    const count = join(dir, 'count');
    const spec = agent({ cache: { ttlMs: 60_000, storage: 'memory' } });
    const req = { prompt: `[count:${count}] q`, schema: undefined };
    const first = await runAgent(spec, req, ctx);
    assert.equal(await runAgent(spec, req, ctx), first);
    assert.equal(linesOf(count).length, 1);
    clock += 60_000;
    await runAgent(spec, req, ctx);
    assert.equal(linesOf(count).length, 2);
  });

  it('keeps disk entries (mode 0600) across process-level caches', async () => {
    const { ctx, dir } = harness();
    const count = join(dir, 'count');
    const spec = agent({ cache: { ttlMs: 60_000, storage: 'disk' } });
    const req = { prompt: `[count:${count}] q`, schema: undefined };
    const first = await runAgent(spec, req, ctx);
    const again = await runAgent(spec, req, { ...ctx, state: createAgentState() });
    assert.equal(again, first);
    assert.equal(linesOf(count).length, 1);
    const file = join(dir, '.mhl-cache', `${agentCacheKey(spec, req)}.json`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const later = { ...ctx, state: createAgentState(), now: () => Date.now() + 61_000 };
    await runAgent(spec, req, later);
    assert.equal(linesOf(count).length, 2);
  });

  it('treats a corrupt disk entry as a miss', async () => {
    const { ctx, dir } = harness();
    const spec = agent({ cache: { ttlMs: 60_000, storage: 'disk' } });
    const req = { prompt: 'corrupt', schema: undefined };
    await runAgent(spec, req, ctx);
    writeFileSync(join(dir, '.mhl-cache', `${agentCacheKey(spec, req)}.json`), '{not json');
    assert.equal(
      await runAgent(spec, req, { ...ctx, state: createAgentState() }),
      'answer: corrupt',
    );
  });
});

describe('runAgent: rate_limit', () => {
  it('serializes concurrent calls under concurrency 1', async () => {
    const { ctx, dir } = harness();
    const span = join(dir, 'span');
    const spec = agent({ rateLimit: { concurrency: 1, requestsPerMinute: undefined } });
    const call = (n: number) =>
      runAgent(spec, { prompt: `[span:${span}][sleep:150] ${n}`, schema: undefined }, ctx);
    await Promise.all([call(1), call(2)]);
    assert.deepEqual(linesOf(span), ['start', 'end', 'start', 'end']);
  });

  it('queues a call beyond requests_per_minute until the window moves', async () => {
    let clock = 0;
    const { ctx, dir } = harness({ now: () => clock });
    const count = join(dir, 'count');
    const spec = agent({ rateLimit: { concurrency: undefined, requestsPerMinute: 1 } });
    const req = { prompt: `[count:${count}]`, schema: undefined };
    await runAgent(spec, req, ctx);
    const blocked = await failure(
      runAgent(spec, req, { ...ctx, signal: AbortSignal.timeout(200) }),
    );
    assert.equal(blocked.failure, AGENT_FAILURES.CANCELLED);
    assert.equal(linesOf(count).length, 1);
    clock = 60_000;
    await runAgent(spec, req, ctx);
    assert.equal(linesOf(count).length, 2);
  });
});

describe('runAgent: ollama engine', () => {
  it('POSTs to <endpoint>/api/generate and returns `response`', async () => {
    const seen: unknown[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        seen.push({ url: req.url, method: req.method, body: JSON.parse(body) as unknown });
        const ok = !body.includes('boom');
        res
          .writeHead(ok ? 200 : 500)
          .end(ok ? JSON.stringify({ response: '  hi there \n' }) : 'boom');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const { ctx } = harness();
      const spec = agent({
        engine: 'ollama/llama3',
        endpoint: `http://127.0.0.1:${port}/`,
        temperature: 0.2,
      });
      assert.equal(await runAgent(spec, { prompt: 'p', schema: undefined }, ctx), 'hi there');
      assert.deepEqual(seen, [
        {
          url: '/api/generate',
          method: 'POST',
          body: { model: 'llama3', prompt: 'p', stream: false, options: { temperature: 0.2 } },
        },
      ]);
      const error = await failure(runAgent(spec, { prompt: 'boom', schema: undefined }, ctx));
      assert.equal(error.failure, AGENT_FAILURES.HTTP);
    } finally {
      server.close();
    }
  });
});

/**
 * `prompts/get` under the rules a synchronous tool call follows: an execution slot, agent
 * caches under the server's root and its shared rate limits, the caller's principal, output and
 * errors shown redacted and relative to the served folder, and a body's failure answered as the
 * prompt's own (`data.code`), not as an internal error. Real catalog, real fake-agent processes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { type Catalog, loadCatalog } from '../../../src/catalog/index.js';
import { type LogLevel, type RequestContext, RpcError } from '../../../src/protocol/index.js';
import { Admission } from '../../../src/runs/index.js';
import { AgentLimiters, REDACTED } from '../../../src/runtime/index.js';
import { type PromptSurfaceOptions, promptMethods } from '../../../src/surfaces/prompts.js';
import { tempDir } from '../../helpers/cli.js';
import { requestContext } from './request-context.js';

/** Every folder a test made, removed when the file is done. */
const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
const temporary = (prefix: string) => {
  const dir = tempDir(prefix);
  made.push(dir);
  return dir;
};

const FAKE = resolve(import.meta.dirname, '../../fixtures/bin/fake-agent.mjs');

const SOURCE = `
agent Cached { command: env("FAKE_AGENT")  args: ["-p", "\${prompt}"]  cache: { ttl: 1m, storage: "disk" } }
agent Single { command: env("FAKE_AGENT")  args: ["-p", "\${prompt}"]  rate_limit: { concurrency: 1 } }
prompt Who() { "principal=\${context.principal}" }
prompt Plain() { "plain" }
prompt Logs(note: string = log("at \${env("ROOT")}/x.txt")) { "logged" }
prompt Reads(text: string = fs.read("missing.txt")) { "\${text}" }
prompt Leaks(token: string = env("API_TOKEN")) { "\${fs.read(token)}" }
prompt Sleeps(x: string = time.sleep(30s)) { "slept" }
prompt Pauses(x: string = pause("no")) { "paused" }
prompt Asks(count: string) { "\${Cached.run(prompt: "[count:\${count}] q")}" }
prompt Spans(span: string, n: string) { "\${Single.run(prompt: "[span:\${span}][sleep:100] \${n}")}" }
pipeline W { step S { log("x") } }
`;

/** A served folder (deep in tmp) with the prompts above, and a working directory beside it. */
function folder(): { root: string; cwd: string; catalog: Catalog } {
  const base = temporary('mhl-prompts-get-');
  const root = join(base, 'served');
  const cwd = join(base, 'work');
  mkdirSync(root);
  mkdirSync(cwd);
  writeFileSync(join(root, 'p.mh'), SOURCE);
  const loaded = loadCatalog(root);
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
  return { root, cwd, catalog: loaded.catalog };
}

interface Served {
  readonly root: string;
  readonly cwd: string;
  readonly cacheRoot: string;
  readonly admission: Admission;
  /** The server log, one parsed JSON line each. */
  readonly logged: Record<string, unknown>[];
  readonly get: (
    params: Record<string, unknown>,
    ctx?: Partial<RequestContext>,
  ) => Promise<Record<string, unknown>>;
}

function serve(overrides: Partial<PromptSurfaceOptions> = {}): Served {
  const { root, cwd, catalog } = folder();
  const cacheRoot = temporary('mhl-prompts-cache-');
  const admission = overrides.admission ?? new Admission(4);
  const logged: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const methods = promptMethods({
    catalog,
    logger: pino({ level: 'debug' }, sink),
    defaultCwd: cwd,
    childEnv: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    env: { ROOT: root, FAKE_AGENT: FAKE, API_TOKEN: 's3cr3t-value' },
    cacheRoot,
    defaultTimeoutMs: 10_000,
    admission,
    ...overrides,
  });
  const get = methods.find((m) => m.method === 'prompts/get') ?? assert.fail('no prompts/get');
  return {
    root,
    cwd,
    cacheRoot,
    admission,
    logged,
    get: (params, ctx = {}) => get.handler(params, requestContext(ctx as Partial<RequestContext>)),
  };
}

async function refusal(promise: Promise<unknown>): Promise<RpcError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RpcError, String(error));
    return error;
  }
  return assert.fail('expected an RpcError');
}

const textOf = (result: Record<string, unknown>) =>
  (result['messages'] as { content: { text: string } }[])[0]?.content.text;

describe('prompts/get takes an execution slot', () => {
  it('answers -32000, retryable, when every slot is busy or admission is closed', async () => {
    const served = serve({ admission: new Admission(1) });
    const held = served.admission.tryAcquire();
    assert.ok(typeof held !== 'string');
    const full = await refusal(served.get({ name: 'Plain' }));
    assert.deepEqual(
      [full.code, full.data],
      [-32000, { code: 'EXECUTION_CAPACITY_FULL', retryable: true }],
    );
    // Arguments are checked first: a bad request is -32602 whatever the load.
    assert.equal((await refusal(served.get({ name: 'Asks', arguments: {} }))).code, -32602);
    held.release();
    assert.equal(textOf(await served.get({ name: 'Plain' })), 'plain');
    await refusal(served.get({ name: 'Reads' }));
    assert.equal(served.admission.active, 0, 'the slot is released after success and failure');
    served.admission.close();
    const closed = await refusal(served.get({ name: 'Plain' }));
    assert.deepEqual(
      [closed.code, closed.data],
      [-32000, { code: 'EXECUTOR_SHUTTING_DOWN', retryable: true }],
    );
  });
});

describe('prompts/get agents', () => {
  it('gives each rendering its own disk cache folder under the root, removed after it', async () => {
    const served = serve();
    const count = join(served.cwd, 'count');
    for (let i = 0; i < 2; i += 1) {
      const got = await served.get({ name: 'Asks', arguments: { count } });
      assert.match(textOf(got) ?? '', /^answer: /);
      assert.deepEqual(readdirSync(served.cacheRoot), []);
    }
    // Nothing cached is shared between two callers' renderings.
    assert.equal(readFileSync(count, 'utf8').split('\n').filter(Boolean).length, 2);
  });

  it("shares the server's agent rate limits between renderings", async () => {
    const served = serve({ agentLimiters: new AgentLimiters() });
    const span = join(served.cwd, 'span');
    await Promise.all(['1', '2'].map((n) => served.get({ name: 'Spans', arguments: { span, n } })));
    assert.deepEqual(readFileSync(span, 'utf8').split('\n').filter(Boolean), [
      'start',
      'end',
      'start',
      'end',
    ]);
  });
});

describe('prompts/get context and output', () => {
  it("reads the caller's principal as context.principal", async () => {
    const served = serve();
    assert.equal(
      textOf(await served.get({ name: 'Who' }, { principal: 'alice' })),
      'principal=alice',
    );
    assert.equal(textOf(await served.get({ name: 'Who' })), 'principal=');
  });

  it('forwards output lines with server paths made relative to the served folder', async () => {
    const served = serve();
    const lines: [LogLevel, unknown, string | undefined][] = [];
    const log = (level: LogLevel, data: unknown, logger?: string) => {
      lines.push([level, data, logger]);
    };
    await served.get({ name: 'Logs' }, { log });
    assert.deepEqual(lines, [['info', 'at x.txt', 'Logs']]);
    assert.ok(!JSON.stringify(served.logged).includes(served.root));
  });
});

describe('prompts/get failures', () => {
  it('answers a failing body as PROMPT_FAILED, relative and redacted, logged at warn', async () => {
    const served = serve();
    const failed = await refusal(served.get({ name: 'Reads' }));
    assert.deepEqual([failed.code, failed.data], [-32603, { code: 'PROMPT_FAILED' }]);
    assert.match(
      failed.message,
      /^p\.mh:\d+:\d+: fs\.read: no such file or directory: missing\.txt$/,
    );
    const leaked = await refusal(served.get({ name: 'Leaks' }));
    assert.deepEqual(leaked.data, { code: 'PROMPT_FAILED' });
    assert.ok(leaked.message.includes(REDACTED), leaked.message);
    const log = JSON.stringify(served.logged);
    for (const hidden of ['s3cr3t-value', served.root, served.cwd]) {
      assert.ok(!`${failed.message}${leaked.message}${log}`.includes(hidden), hidden);
    }
    const warnings = served.logged.filter((entry) => entry['msg'] === 'prompt failed');
    assert.deepEqual(
      warnings.map((w) => [w['level'], w['code']]),
      [
        [40, 'PROMPT_FAILED'],
        [40, 'PROMPT_FAILED'],
      ],
    );
  });

  it('answers pause() in a body as PROMPT_FAILED: a prompt has no run to suspend', async () => {
    const paused = await refusal(serve().get({ name: 'Pauses' }));
    assert.deepEqual([paused.code, paused.data], [-32603, { code: 'PROMPT_FAILED' }]);
  });

  it('answers a body that outlives --default-timeout-ms as TIMEOUT', async () => {
    const served = serve({ defaultTimeoutMs: 100 });
    const timedOut = await refusal(served.get({ name: 'Sleeps' }));
    assert.deepEqual([timedOut.code, timedOut.data], [-32603, { code: 'TIMEOUT' }]);
    assert.match(timedOut.message, /timed out after 100 ms/);
  });
});

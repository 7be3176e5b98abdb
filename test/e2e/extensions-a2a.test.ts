/**
 * `extension a2a` end to end: the built CLI runs test/fixtures/extensions/a2a-calls.mh against
 * a small A2A agent built with @a2a-js/sdk's server side (test/fixtures/extensions/
 * a2a-server.mjs), once speaking A2A 1.0 (its card lists 1.0 and 0.3) and once a 0.3-only agent
 * with a 0.3 card, both behind a bearer token. Asserts on the run's JSON result and on the
 * A2A-Version the agent saw. The last suite calls
 * `mhl serve a2a test/fixtures/extensions/served` itself: mhl on both ends.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { a2aStarter } from '../helpers/a2a.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { runPipeline } from '../helpers/extension-run.js';

const FILE = 'test/fixtures/extensions/a2a-calls.mh';
const AGENT = resolve(REPO_ROOT, 'test/fixtures/extensions/a2a-server.mjs');
const TOKEN = 'a2a-extension-test-token-0123456789';
const STATE = tempDir('mhl-ext-a2a-');

/** The fixture agent as a child process; resolves its base URL once it prints its port. */
class FixtureAgent {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: Promise<string>;
  constructor(args: string[]) {
    this.child = spawn(process.execPath, [AGENT, ...args], {
      env: { ...process.env, A2A_FIXTURE_TOKEN: TOKEN },
      stdio: 'pipe',
    });
    let err = '';
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    this.url = new Promise((done, fail) => {
      let out = '';
      this.child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const line = out.split('\n')[0];
        if (out.includes('\n') && line)
          done(`http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`);
      });
      this.child.on('close', () => fail(new Error(`fixture agent exited: ${err}`)));
    });
    this.url.catch(() => undefined);
  }
  async seen(): Promise<string[]> {
    return (await (await fetch(`${await this.url}/_seen`)).json()) as string[];
  }
  async canceled(): Promise<string[]> {
    return (await (await fetch(`${await this.url}/_canceled`)).json()) as string[];
  }
  stop(): Promise<void> {
    return new Promise((done) => {
      if (this.child.exitCode !== null) return done();
      this.child.once('close', () => done());
      this.child.kill('SIGTERM');
    });
  }
}

function run(
  pipeline: string,
  url: string,
  options: { bearer?: string; inputs?: Record<string, string> } = {},
): ReturnType<typeof runPipeline> {
  return runPipeline(
    { file: FILE, state: STATE, pipeline },
    { A2A_URL: url, A2A_BEARER: options.bearer ?? TOKEN },
    options.inputs,
  );
}

/** The URL of a loopback port nothing listens on (one just bound and released). */
function closedPort(): Promise<string> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(`http://127.0.0.1:${port}`));
    });
  });
}

/** A task that keeps working, started with the SDK's own client (polling, so it returns). */
async function startHangingTask(url: string): Promise<string> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${TOKEN}`);
    return fetch(input, { ...init, headers });
  };
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
    clientConfig: { polling: true },
  });
  const client = await factory.createFromUrl(url);
  const { SendMessageRequest } = await import('@a2a-js/sdk');
  const task = await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: { messageId: `hang-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'hang' }] },
      configuration: { returnImmediately: true },
    }),
  );
  assert.ok('id' in task && typeof task.id === 'string');
  return task.id;
}

for (const [label, args, version] of [
  ['A2A 1.0', [], '1.0'],
  ['A2A 0.3 only', ['--legacy-only'], '0.3'],
] as const) {
  describe(`extension a2a calling an ${label} agent`, () => {
    const agent = new FixtureAgent([...args]);
    let url = '';
    before(async () => {
      url = await agent.url;
    });
    after(() => agent.stop());

    it('sends a message, polls the task to completion and decodes the artifact', async () => {
      const { exit, result } = await run('SendEcho', url);
      assert.equal(exit, 0, JSON.stringify(result));
      const reply = result.vars?.['reply'] as Record<string, unknown>;
      assert.equal(reply['kind'], 'task');
      assert.equal(reply['state'], 'completed');
      assert.equal(reply['text'], 'hi there');
      assert.deepEqual(reply['data'], { echo: 'hi there', metadata: { skill: 'echo' } });
      assert.equal(result.vars?.['card'], 'fixture-agent');
      assert.equal(result.vars?.['again'], 'completed');
      const seen = await agent.seen();
      assert.ok(seen.length > 0 && seen.every((v) => v === version), seen.join(','));
    });

    it('polls a task that is still working until it completes', async () => {
      const before = (await agent.seen()).length;
      const { result } = await run('SendSlow', url);
      const reply = result.vars?.['reply'] as Record<string, unknown>;
      assert.equal(reply['state'], 'completed');
      assert.equal(reply['text'], 'done slowly');
      // SendMessage, then at least one GetTask while the task worked.
      assert.ok((await agent.seen()).length - before >= 2);
    });

    it('sends an object as a data part', async () => {
      const { result } = await run('SendData', url);
      const reply = result.vars?.['reply'] as Record<string, unknown>;
      assert.deepEqual(reply['data'], { x: 1, tags: ['a', 'b'] });
    });

    it("raises a failed task as EXTENSION with the agent's status message", async () => {
      const { exit, result } = await run('SendFail', url);
      assert.equal(exit, 1);
      assert.equal(result.code, 'EXTENSION');
      assert.match(result.error ?? '', /the fixture agent could not do it/);
    });

    it('cancels a working task and reads it back', async () => {
      const task = await startHangingTask(url);
      const { exit, result } = await run('Cancel', url, { inputs: { task } });
      assert.equal(exit, 0, JSON.stringify(result));
      const canceled = result.vars?.['canceled'] as Record<string, unknown> | undefined;
      assert.equal(canceled?.['id'], task);
      assert.equal(result.vars?.['state'], 'canceled');
    });

    it("raises an unknown task as EXTENSION with the agent's error", async () => {
      const { result } = await run('MissingTask', url);
      assert.equal(result.code, 'EXTENSION');
      assert.match(result.error ?? '', /not found/i);
    });

    it("stops polling at the step's deadline and cancels the task it leaves", async () => {
      const before = await agent.canceled();
      const { exit, result } = await run('SendTimeout', url);
      assert.equal(exit, 1);
      assert.equal(result.code, 'STEP_TIMEOUT');
      assert.equal((await agent.canceled()).length, before.length + 1);
    });

    it('raises a rejected token as EXTENSION without echoing it', async () => {
      const { result, stdout } = await run('SendEcho', url, { bearer: 'wrong-token-9876' });
      assert.equal(result.code, 'EXTENSION');
      assert.ok(!stdout.includes(TOKEN));
    });
  });
}

/** A loopback HTTP server answering every request with `answer`; stopped when the file ends. */
async function hostile(
  answer: (url: string, res: import('node:http').ServerResponse, base: string) => void,
): Promise<string> {
  const server = createHttpServer((req, res) => answer(req.url ?? '', res, base));
  let base = '';
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  after(() => new Promise<void>((done) => server.close(() => done())));
  return base;
}

describe('extension a2a against hostile agents', () => {
  it('raises EXTENSION for a card that is not JSON', async () => {
    const url = await hostile((_path, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not a card</html>');
    });
    const { exit, result } = await run('SendEcho', url);
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
  });

  it('raises EXTENSION for an endpoint that answers HTML errors', async () => {
    const url = await hostile((path, res, base) => {
      if (path.startsWith('/.well-known/')) {
        const card = {
          name: 'hostile',
          description: 'answers garbage',
          version: '1',
          supportedInterfaces: [
            { url: `${base}/rpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
          ],
          capabilities: {},
          defaultInputModes: ['text/plain'],
          defaultOutputModes: ['text/plain'],
          skills: [],
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
      } else res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>boom</h1>'.repeat(1000));
    });
    const { exit, result } = await run('SendEcho', url);
    assert.equal(exit, 1);
    assert.equal(result.code, 'EXTENSION');
    // A 13 kB error page is cut to a readable message.
    assert.ok((result.error ?? '').length < 2500, `${(result.error ?? '').length} characters`);
  });
});

describe('extension a2a failures that never reach an agent', () => {
  it('fails closed on an unset bearer variable', async () => {
    const { result } = await run('SendEcho', await closedPort(), { bearer: '' });
    assert.equal(result.code, 'EXTENSION');
  });

  it('reports an unreachable agent as EXTENSION', async () => {
    const { result } = await run('SendEcho', await closedPort());
    assert.equal(result.code, 'EXTENSION');
    assert.match(result.error ?? '', /ECONNREFUSED/);
  });
});

// mhl calling mhl: a workflow's `extension a2a` against `mhl serve a2a` serving
// test/fixtures/extensions/served behind a token, both real processes.
describe('extension a2a calling mhl serve a2a', () => {
  const start = a2aStarter();
  it('calls its Greet workflow and decodes the artifact', async () => {
    const server = start('test/fixtures/extensions/served', ['--token', TOKEN]);
    const port = await server.ready;
    const { exit, result } = await run('SendGreet', `http://127.0.0.1:${port}`, { bearer: TOKEN });
    assert.equal(exit, 0, JSON.stringify(result));
    const reply = result.vars?.['reply'] as Record<string, unknown>;
    assert.equal(reply['state'], 'completed');
    assert.deepEqual(reply['data'], { greeting: 'hello ann', length: 9 });
  });

  it('surfaces the server refusing a wrong token as EXTENSION', async () => {
    const server = start('test/fixtures/extensions/served', ['--token', TOKEN]);
    const port = await server.ready;
    const { result } = await run('SendGreet', `http://127.0.0.1:${port}`, { bearer: 'wrong' });
    assert.equal(result.ok, false);
    assert.equal(result.code, 'EXTENSION');
  });
});

/**
 * Secrets end to end (issue 16, seed 002 "secret setup"): the built CLI and a real
 * `mhl serve mcp --http` process sharing one vault folder, the setup page driven over real
 * HTTP, the workflow called with the official MCP client. A secret set through the page
 * reaches the workflow through vault() and appears nowhere else: not in the server's log, a
 * result, a run record, a run log or the page. Capabilities replayed, expired, minted by
 * another server or posted from another origin are refused; hostile form bodies are refused
 * and leave the capability usable.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { controlProof, parseVaultKey } from '../../src/secrets/key.js';
import { CLI, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { holds } from '../helpers/fuzz.js';
import { type HttpServer, type Reply, send, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/secrets');
const VALUE = 'pg-Secret-value-91f3c2';
const OTHER_VALUE = 'other-Secret-value-77ab10';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const start = serverStarter(FOLDER);

interface Setup {
  readonly config: string;
  readonly stateDir: string;
  readonly server: HttpServer;
  readonly port: number;
}

async function boot(env: Record<string, string> = {}): Promise<Setup> {
  const config = tempDir('mhl-secrets-config-');
  const stateDir = tempDir('mhl-secrets-state-');
  const server = start(['--state-dir', stateDir], { XDG_CONFIG_HOME: config, ...env });
  return { config, stateDir, server, port: await server.ready };
}

function cli(setup: { config: string }, args: string[], input = '') {
  return runCli(['secrets', ...args], { env: { XDG_CONFIG_HOME: setup.config }, input });
}

/** A setup link minted through the CLI, as a user gets it. */
async function mint(setup: Setup, mode: 'add' | 'edit', name: string): Promise<string> {
  const minted = await cli(setup, [mode, name, '--open', '--port', String(setup.port), '--json']);
  assert.equal(minted.code, 0, minted.stderr);
  const { url } = JSON.parse(minted.stdout) as { url: string };
  assert.match(
    url,
    new RegExp(
      `^http://127\\.0\\.0\\.1:${setup.port}/secrets/setup\\?capability=[A-Za-z0-9_-]{43}$`,
    ),
  );
  return url;
}

function challenge(port: number) {
  return send(port, { path: '/secrets/challenge', body: '' });
}

/** A mint's credential as the CLI makes it: the vault key's proof over a fresh challenge. */
async function answer(setup: { config: string; port: number }): Promise<string> {
  const { nonce, instance_id } = (await challenge(setup.port)).json() as {
    nonce: string;
    instance_id: string;
  };
  const ready = (await send(setup.port, { method: 'GET', path: '/health/ready' })).json();
  assert.equal(ready['instance_id'], instance_id);
  const key = parseVaultKey(readFileSync(join(setup.config, 'mhl', 'vault.key'), 'utf8'), 'key');
  const origin = `http://127.0.0.1:${setup.port}`;
  return `Bearer ${nonce}.${controlProof(key, { nonce, instanceId: instance_id, origin })}`;
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

function post(
  port: number,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
) {
  return send(port, {
    method: 'POST',
    path,
    headers: { ...FORM, origin: `http://127.0.0.1:${port}`, ...headers },
    body,
  });
}

const page = (port: number, path: string) => send(port, { method: 'GET', path });
const form = (value: string, label = '') =>
  `value=${encodeURIComponent(value)}&label=${encodeURIComponent(label)}`;

/** Every file under `dir`, as text. */
function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) for (const [p, t] of filesUnder(path)) out.set(p, t);
    else out.set(path, readFileSync(path, 'utf8'));
  }
  return out;
}

async function mcpClient(port: number): Promise<Client> {
  const client = new Client({ name: 'secrets-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return client;
}

function diagnostic(result: Record<string, unknown>): Record<string, unknown> {
  return ((result['_meta'] as Record<string, unknown>)['mhl/diagnostic'] ?? {}) as Record<
    string,
    unknown
  >;
}

describe('secrets through the setup page', () => {
  let setup: Setup;
  let client: Client;
  let url: string;
  let setupPage: Reply;
  let donePage: Reply;

  before(async () => {
    setup = await boot();
    url = await mint(setup, 'add', 'db/password');
    setupPage = await page(setup.port, pathOf(url));
    donePage = await post(setup.port, pathOf(url), form(VALUE, 'the <database>'));
    client = await mcpClient(setup.port);
  });
  after(async () => client.close());

  it('serves a form that works without script, under a CSP, uncached and without referrer', () => {
    assert.equal(setupPage.status, 200, setupPage.text);
    assert.match(setupPage.text, /<form method="post" action="\/secrets\/setup\?capability=/);
    assert.match(setupPage.text, /<input type="password" id="value" name="value"/);
    assert.doesNotMatch(setupPage.text, /<script|style=|onclick|javascript:/i);
    assert.match(String(setupPage.headers['content-security-policy']), /default-src 'none'/);
    assert.match(String(setupPage.headers['content-security-policy']), /form-action 'self'/);
    assert.equal(setupPage.headers['cache-control'], 'no-store');
    assert.equal(setupPage.headers['referrer-policy'], 'no-referrer');
    assert.equal(setupPage.headers['x-frame-options'], 'DENY');
  });

  it('stores the secret on POST and answers with redacted metadata', async () => {
    assert.equal(donePage.status, 200, donePage.text);
    assert.match(donePage.text, /sec_[0-9a-f]{32}/);
    assert.match(donePage.text, /the &lt;database&gt;/, 'the label is escaped');
    assert.ok(!donePage.text.includes(VALUE), 'the page never shows the value');
    const listed = await cli(setup, ['list', '--json']);
    const { secrets } = JSON.parse(listed.stdout) as { secrets: Record<string, unknown>[] };
    assert.deepEqual(
      secrets.map((s) => [s['name'], s['kind'], s['label']]),
      [['db/password', 'generic', 'the <database>']],
    );
    assert.ok(!listed.stdout.includes(VALUE));
  });

  it('refuses the used capability: a replayed POST and a GET', async () => {
    const replay = await post(setup.port, pathOf(url), form(OTHER_VALUE));
    assert.equal(replay.status, 403);
    assert.equal((await page(setup.port, pathOf(url))).status, 403);
    const secret = (await client.callTool({ name: 'secrets.list', arguments: {} })) as Record<
      string,
      unknown
    >;
    assert.ok(!JSON.stringify(secret).includes(OTHER_VALUE));
  });

  it('resolves vault() host-side: the workflow gets the value, its result and log show it masked', async () => {
    const out = join(tempDir(), 'value.txt');
    const result = (await client.callTool({ name: 'UseSecret', arguments: { out } })) as Record<
      string,
      unknown
    >;
    assert.notEqual(result['isError'], true, JSON.stringify(result));
    assert.equal(readFileSync(out, 'utf8'), VALUE, 'the workflow received the value');
    assert.deepEqual(result['structuredContent'], { echoed: 'value is [REDACTED]' });
    assert.ok(!JSON.stringify(result).includes(VALUE));
  });

  it('keeps the value out of async run records, checkpoints and logs', async () => {
    const out = join(tempDir(), 'value.txt');
    const started = (await client.callTool({
      name: 'mhl_run_start',
      arguments: { workflow: 'UseSecret', arguments: { out } },
    })) as unknown as { structuredContent: { runId: string } };
    const { runId } = started.structuredContent;
    const done = await until(
      async () => {
        const status = (await client.callTool({
          name: 'mhl_run_status',
          arguments: { runId },
        })) as {
          structuredContent: Record<string, unknown>;
        };
        const state = status.structuredContent['state'];
        return state === 'completed' || state === 'failed' ? status : undefined;
      },
      { what: 'the async run to finish', timeoutMs: 20_000 },
    );
    assert.equal(done.structuredContent['state'], 'completed', JSON.stringify(done));
    assert.equal(readFileSync(out, 'utf8'), VALUE);
    const logs = await client.callTool({ name: 'mhl_run_logs', arguments: { runId } });
    assert.match(JSON.stringify(logs), /value is \[REDACTED\]/);
    const files = filesUnder(setup.stateDir);
    assert.ok(files.size > 0, 'the run left records');
    for (const [path, text] of files) assert.ok(!text.includes(VALUE), `${path} holds the value`);
  });

  it('shows slot guidance in tools/list, never a record id', async () => {
    const { tools } = await client.listTools();
    const text = JSON.stringify(tools);
    assert.doesNotMatch(text, /sec_[0-9a-f]{32}/);
    const tool = tools.find((t) => t.name === 'UseSecret');
    assert.match(String(tool?.description), /credentials\.db\/password/);
    const credentials = tool?.inputSchema.properties?.['credentials'] as {
      properties: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(credentials.properties), ['db/password']);
  });

  it('takes a record id under credentials.<slot>, never a value', async () => {
    const added = await cli(
      setup,
      ['add', 'db/other', '--stdin', '--kind', 'password', '--json'],
      `${OTHER_VALUE}\n`,
    );
    assert.equal(added.code, 0, added.stderr);
    const { id } = (JSON.parse(added.stdout) as { secret: { id: string } }).secret;
    const out = join(tempDir(), 'value.txt');
    const byId = (await client.callTool({
      name: 'UseSecret',
      arguments: { out, credentials: { 'db/password': id } },
    })) as Record<string, unknown>;
    assert.notEqual(byId['isError'], true, JSON.stringify(byId));
    assert.equal(readFileSync(out, 'utf8'), OTHER_VALUE);
    for (const credentials of [{ 'db/password': VALUE }, { other: id }, 'x', [id]]) {
      const refused = (await client.callTool({
        name: 'UseSecret',
        arguments: { out, credentials },
      })) as Record<string, unknown>;
      assert.equal(refused['isError'], true);
      assert.equal(diagnostic(refused)['code'], 'INVALID_ARGUMENT', JSON.stringify(refused));
      assert.ok(
        !JSON.stringify(refused).includes(VALUE),
        'a value passed by mistake is not echoed',
      );
    }
    const unknown = (await client.callTool({
      name: 'UseSecret',
      arguments: { out, credentials: { 'db/password': `sec_${'0'.repeat(32)}` } },
    })) as Record<string, unknown>;
    assert.equal(diagnostic(unknown)['error_code'], 'SECRET_NOT_FOUND', JSON.stringify(unknown));
  });

  it("lists a slot's kinds and refuses a record of another kind", async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'UseToken');
    assert.match(String(tool?.description), /credentials\.api\/token \(kind token\)/);
    assert.match(String(tool?.description), /credentials\.api\/token/);
    const other = JSON.parse(
      (await cli(setup, ['list', '--kind', 'password', '--json'])).stdout,
    ) as {
      secrets: { id: string }[];
    };
    const out = join(tempDir(), 'token.txt');
    const wrong = (await client.callTool({
      name: 'UseToken',
      arguments: { out, credentials: { 'api/token': other.secrets[0]?.id } },
    })) as Record<string, unknown>;
    assert.equal(diagnostic(wrong)['error_code'], 'SECRET_KIND_MISMATCH', JSON.stringify(wrong));
    assert.ok(!JSON.stringify(wrong).includes(OTHER_VALUE));
    assert.equal(
      (await cli(setup, ['add', 'api/token', '--kind', 'token', '--stdin'], VALUE)).code,
      0,
    );
    const right = (await client.callTool({ name: 'UseToken', arguments: { out } })) as Record<
      string,
      unknown
    >;
    assert.notEqual(right['isError'], true, JSON.stringify(right));
    assert.equal(readFileSync(out, 'utf8'), VALUE);
  });

  it('lists metadata by kind over MCP, never a value', async () => {
    const listed = (await client.callTool({
      name: 'secrets.list',
      arguments: { kind: 'password' },
    })) as unknown as {
      structuredContent: { secrets: Record<string, unknown>[] };
    };
    assert.deepEqual(
      listed.structuredContent.secrets.map((s) => s['name']),
      ['db/other'],
    );
    assert.deepEqual(Object.keys(listed.structuredContent.secrets[0] ?? {}).sort(), [
      'created',
      'id',
      'kind',
      'label',
      'name',
      'updated',
    ]);
    const bad = (await client.callTool({
      name: 'secrets.list',
      arguments: { kind: 'nope' },
    })) as Record<string, unknown>;
    assert.equal(diagnostic(bad)['code'], 'INVALID_ARGUMENT');
  });

  it('answers a damaged vault with its code over MCP and on the setup path, never a path', async () => {
    const file = join(setup.config, 'mhl', 'vault.json');
    const sealed = readFileSync(file, 'utf8');
    // An edit link made while the vault is whole shows the record's kind and label.
    const edit = await page(setup.port, pathOf(await mint(setup, 'edit', 'db/password')));
    assert.match(edit.text, /Kind: <code>generic<\/code>/);
    assert.match(edit.text, /value="the &lt;database&gt;"/);
    writeFileSync(file, 'not a vault');
    try {
      const listed = (await client.callTool({ name: 'secrets.list', arguments: {} })) as Record<
        string,
        unknown
      >;
      assert.equal(diagnostic(listed)['code'], 'VAULT_CORRUPT');
      const out = join(tempDir(), 'value.txt');
      const used = (await client.callTool({ name: 'UseSecret', arguments: { out } })) as Record<
        string,
        unknown
      >;
      assert.equal(diagnostic(used)['error_code'], 'VAULT_CORRUPT', JSON.stringify(used));
      for (const reply of [listed, used]) assert.ok(!JSON.stringify(reply).includes(setup.config));
      const mintReply = await cli(setup, [
        'add',
        'x',
        '--open',
        '--port',
        String(setup.port),
        '--json',
      ]);
      assert.equal(mintReply.code, 1);
      assert.equal(readFileSync(file, 'utf8'), 'not a vault', 'left as it was');
    } finally {
      writeFileSync(file, sealed);
    }
  });

  it('never writes a value or a capability to the server log', () => {
    const log = setup.server.stderr;
    assert.match(log, /secret stored through the setup page/, 'the log was captured');
    assert.ok(!log.includes(VALUE) && !log.includes(OTHER_VALUE), 'a value in the log');
    assert.ok(
      !log.includes(new URL(url).searchParams.get('capability') as string),
      'a capability in the log',
    );
    assert.ok(!log.includes('capability='), 'a setup URL in the log');
  });
});

describe('pause and failure reasons that carry a secret', () => {
  const TOKEN = 'tok-Secret-value-5e0a41';
  let setup: Setup;
  let client: Client;
  const call = async (name: string, on = client) =>
    (await on.callTool({ name, arguments: {} })) as Record<string, unknown>;

  before(async () => {
    setup = await boot({ MHL_TEST_API_TOKEN: TOKEN });
    assert.equal((await cli(setup, ['add', 'db/password', '--stdin'], VALUE)).code, 0);
    client = await mcpClient(setup.port);
  });
  after(async () => client.close());

  it('masks vault() in a WORKFLOW_PAUSED text, its _meta reason and a nested object reason', async () => {
    const text = await call('PauseText');
    assert.equal(diagnostic(text)['code'], 'WORKFLOW_PAUSED');
    assert.equal(diagnostic(text)['reason'], 'waiting [REDACTED]');
    const object = await call('PauseObject');
    assert.deepEqual(JSON.parse(String(diagnostic(object)['reason'])), {
      nested: ['again [REDACTED]'],
      why: '[REDACTED]',
    });
    for (const result of [text, object]) assert.ok(!JSON.stringify(result).includes(VALUE));
  });

  it('masks a sensitive env() value in a pause, and vault() in a fail() message', async () => {
    const paused = await call('PauseEnv');
    assert.equal(diagnostic(paused)['reason'], '{"why":"env [REDACTED]"}');
    assert.ok(!JSON.stringify(paused).includes(TOKEN));
    const failed = await call('FailSecret');
    assert.equal(diagnostic(failed)['code'], 'WORKFLOW_FAILED');
    assert.match(JSON.stringify(failed), /refused \[REDACTED\]/);
    assert.ok(!JSON.stringify(failed).includes(VALUE));
  });

  it('masks the reason an elicitation shows and the pause it checkpoints', async () => {
    const asked: string[] = [];
    const eliciting = new Client(
      { name: 'secrets-elicit', version: '1' },
      { capabilities: { elicitation: {} } },
    );
    eliciting.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: 'decline' };
    });
    await eliciting.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${setup.port}/mcp`)),
    );
    try {
      const declined = await call('PauseText', eliciting);
      assert.equal(diagnostic(declined)['code'], 'WORKFLOW_PAUSED');
      assert.deepEqual(asked, ['waiting [REDACTED]']);
      assert.ok(!JSON.stringify(declined).includes(VALUE));
    } finally {
      await eliciting.close();
    }
    for (const [path, text] of filesUnder(setup.stateDir))
      assert.ok(!text.includes(VALUE), `${path} holds the value`);
  });

  it('masks the reason in mhl run --format json and text', async () => {
    const file = join(FOLDER, 'pause-secret.mh');
    const env = { XDG_CONFIG_HOME: setup.config, MHL_TEST_API_TOKEN: TOKEN };
    for (const [pipeline, reason] of [
      ['PauseText', 'waiting [REDACTED]'],
      ['PauseObject', { nested: ['again [REDACTED]'], why: '[REDACTED]' }],
      ['PauseEnv', { why: 'env [REDACTED]' }],
    ] as const) {
      const cwd = tempDir();
      const json = await runCli(['run', file, '--pipeline', pipeline, '--format', 'json'], {
        env,
        cwd,
      });
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual((JSON.parse(json.stdout) as { reason: unknown }).reason, reason);
      const text = await runCli(['run', file, '--pipeline', pipeline], { env, cwd });
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stderr, /paused: .*\[REDACTED\]/);
      for (const out of [json.stdout, json.stderr, text.stdout, text.stderr])
        assert.ok(!out.includes(VALUE) && !out.includes(TOKEN), out);
      for (const [path, saved] of filesUnder(join(cwd, '.mhl')))
        assert.ok(!saved.includes(VALUE) && !saved.includes(TOKEN), path);
    }
  });
});

describe('setup capabilities that must not work', () => {
  let setup: Setup;
  before(async () => {
    setup = await boot();
  });

  it('refuses an expired capability (MHL_SECRETS_CAPABILITY_TTL_MS=0 expires every link at once)', async () => {
    const expiring = await boot({ MHL_SECRETS_CAPABILITY_TTL_MS: '0' });
    const url = await mint(expiring, 'add', 'db/password');
    assert.equal((await page(expiring.port, pathOf(url))).status, 403);
    assert.equal((await post(expiring.port, pathOf(url), form(VALUE))).status, 403);
    assert.deepEqual(JSON.parse((await cli(expiring, ['list', '--json'])).stdout), { secrets: [] });
  });

  it('refuses a capability minted by another server, and a POST from another origin', async () => {
    const other = await boot();
    const url = await mint(setup, 'add', 'db/password');
    assert.equal((await page(other.port, pathOf(url))).status, 403, 'another server');
    for (const headers of [
      { origin: `http://127.0.0.1:${other.port}` },
      { origin: `http://localhost:${other.port}` },
      // The link was issued on 127.0.0.1: another loopback spelling is another origin.
      { origin: `http://localhost:${setup.port}` },
      { origin: `http://[::1]:${setup.port}` },
      { origin: `http://127.0.0.1:${setup.port}/` },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const refused = await post(setup.port, pathOf(url), form(VALUE), headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
    }
    // Refused before the guards' own Origin check reaches the row: a non-loopback origin.
    assert.equal(
      (await post(setup.port, pathOf(url), form(VALUE), { origin: 'http://evil.example' })).status,
      403,
    );
    assert.equal((await page(setup.port, pathOf(url))).status, 200, 'refusals did not use it up');
    const stored = await post(setup.port, pathOf(url), form(VALUE), {
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(stored.status, 200, stored.text);
  });

  it('refuses malformed, oversized and hostile form bodies and keeps the capability usable', async () => {
    const url = await mint(setup, 'edit', 'db/password');
    const path = pathOf(url);
    const cases: [string, string | Buffer, Record<string, string>, number][] = [
      ['no value', 'label=x', {}, 400],
      ['empty', '', {}, 400],
      ['twice', 'value=aaaa&value=bbbb', {}, 400],
      ['unknown field', `${form(OTHER_VALUE)}&capability=x`, {}, 400],
      ['prototype key', `${form(OTHER_VALUE)}&__proto__=x`, {}, 400],
      ['bad escape', 'value=%zz%zz', {}, 400],
      ['not UTF-8', 'value=%ff%fe%fd%fc', {}, 400],
      ['too short', 'value=abc', {}, 400],
      ['a NUL', 'value=abcd%00', {}, 400],
      [
        'a label with a line break',
        `${form(OTHER_VALUE)}`.replace('label=', 'label=a%0Ab'),
        {},
        400,
      ],
      ['JSON', JSON.stringify({ value: OTHER_VALUE }), { 'content-type': 'application/json' }, 415],
      ['multipart', 'x', { 'content-type': 'multipart/form-data; boundary=x' }, 415],
      ['oversized', `value=${'a'.repeat(300 * 1024)}`, {}, 413],
    ];
    for (const [what, body, headers, status] of cases) {
      const refused = await post(setup.port, path, body, headers);
      assert.equal(refused.status, status, `${what}: ${refused.text.slice(0, 200)}`);
      assert.ok(!refused.text.includes(OTHER_VALUE), `${what}: the value is echoed`);
      assert.equal((await page(setup.port, path)).status, 200, `${what} used the capability up`);
    }
    for (const bad of [
      `${path}&x=1`,
      `${path}x`,
      path.slice(0, -1),
      '/secrets/setup',
      '/secrets/setup?capability=',
    ]) {
      assert.equal((await page(setup.port, bad)).status, 403, bad);
    }
    assert.equal((await send(setup.port, { method: 'PUT', path })).status, 405);
  });

  it('answers any form body with a refusal, never a fault, and keeps the link (property)', async (t) => {
    // A link to add a name that is then taken: no body, however well formed, can store it.
    const url = await mint(setup, 'add', 'fuzzed');
    assert.equal((await cli(setup, ['add', 'fuzzed', '--stdin'], VALUE)).code, 0);
    const path = pathOf(url);
    const types = [
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded; charset=latin1',
      'text/plain',
      '',
    ];
    const fields = fc.constantFrom(
      'value',
      'label',
      'VALUE',
      '__proto__',
      'capability',
      '',
      '%76alue',
    );
    const pair = fc.tuple(fields, fc.string({ maxLength: 40 })).map(([k, v]) => `${k}=${v}`);
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(pair, { maxLength: 5 }).map((pairs) => pairs.join('&')),
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    await holds(
      t,
      fc.asyncProperty(body, fc.constantFrom(...types), async (text, type) => {
        const reply = await post(
          setup.port,
          path,
          text,
          type === '' ? {} : { 'content-type': type },
        );
        assert.ok([400, 415].includes(reply.status), `${reply.status} for ${JSON.stringify(text)}`);
      }),
      150,
    );
    assert.equal((await page(setup.port, path)).status, 200, 'the link still works');
  });

  it('mints only for the holder of the vault key', async () => {
    const body = JSON.stringify({ mode: 'add', name: 'x' });
    const { nonce } = (await challenge(setup.port)).json() as { nonce: string };
    const forged = [
      undefined,
      'Bearer nope',
      `Bearer ${'A'.repeat(43)}`,
      `Bearer ${nonce}.${'A'.repeat(43)}`,
      `Bearer ${nonce}.${'A'.repeat(43)}`,
    ];
    for (const authorization of forged) {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const refused = await send(setup.port, { path: '/secrets/capabilities', headers, body });
      assert.equal(refused.status, 403, String(authorization));
    }
    // With the right proof, every malformed or hostile mint body is refused by code.
    await cli(setup, ['add', 'seed', '--stdin'], VALUE);
    const mints: [string, string, Record<string, string>, number, string | undefined][] = [
      ['not JSON', '{"mode":', {}, 400, 'INVALID_REQUEST'],
      [
        'an extra key',
        JSON.stringify({ mode: 'add', name: 'x', value: VALUE }),
        {},
        400,
        'INVALID_REQUEST',
      ],
      ['a bad mode', JSON.stringify({ mode: 'delete', name: 'x' }), {}, 400, 'INVALID_REQUEST'],
      [
        'a bad name',
        JSON.stringify({ mode: 'add', name: '../../etc' }),
        {},
        400,
        'SECRET_NAME_INVALID',
      ],
      [
        'a bad kind',
        JSON.stringify({ mode: 'add', name: 'x', kind: 'pgp' }),
        {},
        400,
        'SECRET_KIND_INVALID',
      ],
      ['an array', '[]', {}, 400, 'INVALID_REQUEST'],
      ['a taken name', JSON.stringify({ mode: 'add', name: 'seed' }), {}, 409, 'SECRET_EXISTS'],
      [
        'edit of nothing',
        JSON.stringify({ mode: 'edit', name: 'none' }),
        {},
        404,
        'SECRET_NOT_FOUND',
      ],
      [
        'form encoded',
        'mode=add&name=x',
        { 'content-type': 'text/plain' },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'oversized',
        JSON.stringify({ mode: 'add', name: 'x', label: 'x'.repeat(8000) }),
        {},
        413,
        'BODY_TOO_LARGE',
      ],
    ];
    for (const [what, body, extra, status, code] of mints) {
      const headers = { authorization: await answer(setup) };
      const refused = await send(setup.port, {
        path: '/secrets/capabilities',
        headers: { ...headers, ...extra },
        body,
      });
      assert.equal(refused.status, status, `${what}: ${refused.text}`);
      assert.equal(refused.json()['error'], code, what);
      assert.ok(!refused.text.includes(VALUE), what);
    }
    const stranger = { config: tempDir('mhl-secrets-stranger-') };
    const other = await cli(stranger, ['add', 'x', '--open', '--port', String(setup.port)]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /SETUP_REFUSED/);
  });

  it('refuses a used answer, and tells no unauthenticated caller which names exist', async () => {
    await cli(setup, ['add', 'taken', '--stdin'], VALUE);
    const authorization = await answer(setup);
    const path = '/secrets/capabilities';
    const edit = JSON.stringify({ mode: 'edit', name: 'unknown-name' });
    const first = await send(setup.port, { path, headers: { authorization }, body: edit });
    assert.equal(first.json()['error'], 'SECRET_NOT_FOUND', 'the proof held once');
    for (const body of [edit, JSON.stringify({ mode: 'add', name: 'taken' })]) {
      const again = await send(setup.port, { path, headers: { authorization }, body });
      assert.equal(again.status, 403, again.text);
      assert.equal(again.json()['error'], 'FORBIDDEN');
    }
  });

  it('gives a look-alike server on the port nothing it can replay against the real one', async () => {
    // The look-alike relays readiness and a real challenge, and records the CLI's answer.
    const recorded: string[] = [];
    const fake: Server = createServer((req, res) => {
      const relay = async () => {
        if (req.url === '/health/ready' || req.url === '/secrets/challenge') {
          const real = await send(setup.port, {
            method: req.method ?? 'GET',
            path: req.url,
            ...(req.method === 'POST' ? { body: '' } : {}),
          });
          res.writeHead(real.status, { 'content-type': 'application/json' });
          return res.end(real.text);
        }
        recorded.push(String(req.headers.authorization));
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{}');
      };
      relay().catch(() => res.destroy());
    });
    await new Promise<void>((done) => fake.listen(0, '127.0.0.1', done));
    const port = (fake.address() as AddressInfo).port;
    try {
      const asked = await cli(setup, ['add', 'squatted', '--open', '--port', String(port)]);
      assert.equal(asked.code, 1);
    } finally {
      fake.close();
    }
    assert.equal(recorded.length, 1, 'the CLI answered the relayed challenge');
    const body = JSON.stringify({ mode: 'add', name: 'squatted' });
    const replay = await send(setup.port, {
      path: '/secrets/capabilities',
      headers: { authorization: recorded[0] as string },
      body,
    });
    assert.equal(replay.status, 403, replay.text);
    assert.ok(!replay.text.includes('capability='));
  });
});

describe('mhl secrets on the command line', () => {
  const setup = { config: tempDir('mhl-secrets-cli-') };

  it('reads a value from standard input only, and lists metadata only', async () => {
    const byArgv = await cli(setup, ['add', 'api', '--value', VALUE]);
    assert.equal(byArgv.code, 2, 'no option takes a value');
    const added = await cli(
      setup,
      ['add', 'api', '--kind', 'token', '--label', 'API'],
      `${VALUE}\n`,
    );
    assert.equal(added.code, 0, added.stderr);
    assert.ok(!added.stdout.includes(VALUE));
    const again = await cli(setup, ['add', 'api', '--json'], `${VALUE}\n`);
    assert.equal(again.code, 1);
    assert.equal(
      (JSON.parse(again.stdout) as { error: { code: string } }).error.code,
      'SECRET_EXISTS',
    );
    const edited = await cli(setup, ['edit', 'api', '--stdin'], OTHER_VALUE);
    assert.equal(edited.code, 0, edited.stderr);
    const listed = await cli(setup, ['list']);
    assert.match(listed.stdout, /^api\ttoken\tsec_[0-9a-f]{32}\t/);
    assert.ok(!listed.stdout.includes(VALUE) && !listed.stdout.includes(OTHER_VALUE));
    const removed = await cli(setup, ['remove', 'api', '--json']);
    assert.equal(removed.code, 0);
    assert.equal((await cli(setup, ['remove', 'api'])).code, 1);
  });

  it('hands vault() to mhl run, which writes the value nowhere but where the workflow puts it', async () => {
    const own = { config: tempDir('mhl-secrets-run-') };
    assert.equal((await cli(own, ['add', 'db/password', '--stdin'], VALUE)).code, 0);
    const cwd = tempDir();
    const out = join(cwd, 'value.txt');
    const run = await runCli(
      ['run', join(FOLDER, 'use-secret.mh'), '--input', `out=${out}`, '--format', 'json'],
      {
        env: { XDG_CONFIG_HOME: own.config },
        cwd,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(out, 'utf8'), VALUE);
    assert.match(run.stdout, /value is \[REDACTED\]/);
    assert.ok(!run.stdout.includes(VALUE) && !run.stderr.includes(VALUE));
    for (const [path, text] of filesUnder(join(cwd, '.mhl')))
      assert.ok(!text.includes(VALUE), path);
  });

  it('fails a resume loudly rather than pass the checkpointed placeholder as the credential', async () => {
    const own = { config: tempDir('mhl-secrets-resume-') };
    assert.equal((await cli(own, ['add', 'db/password', '--stdin'], VALUE)).code, 0);
    const cwd = tempDir();
    const out = join(cwd, 'out.txt');
    const args = [
      'run',
      join(FOLDER, 'resume-secret.mh'),
      ...['--input', `out=${out}`, '--input', `marks=${join(cwd, 'marks')}`],
      ...['--format', 'json'],
    ];
    const env = { XDG_CONFIG_HOME: own.config };
    const first = await runCli(args, { env, cwd });
    assert.equal(first.code, 1, first.stderr);
    assert.equal((JSON.parse(first.stdout) as { code: string }).code, 'FAIL');
    const resumed = await runCli([...args, '--resume'], { env, cwd });
    assert.equal(resumed.code, 1, resumed.stderr);
    const failed = JSON.parse(resumed.stdout) as { code: string; line: number };
    assert.deepEqual([failed.code, failed.line], ['SECRET_NOT_RESUMABLE', 7]);
    assert.ok(!existsSync(out), 'step Use never ran, so never received [REDACTED]');
    assert.ok(!resumed.stdout.includes(VALUE) && !resumed.stderr.includes(VALUE));
  });

  it('prompts on a terminal with echo off', async (t) => {
    // util-linux `script` gives the CLI a real pseudo-terminal.
    if (!existsSync('/usr/bin/script')) {
      if (process.env['CI'] === 'true')
        assert.fail('/usr/bin/script is needed for the terminal test');
      return t.skip('no /usr/bin/script on this machine: the terminal prompt is not tested');
    }
    const own = { config: tempDir('mhl-secrets-tty-') };
    const command = `'${process.execPath}' '${CLI}' secrets add typed`;
    const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, XDG_CONFIG_HOME: own.config },
      stdio: 'pipe',
    });
    let screen = '';
    let typed = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      screen += d;
      // Typed once the prompt is on the screen: the terminal is in raw mode by then.
      if (!typed && screen.includes('(not shown): ')) {
        typed = true;
        child.stdin.write(`${VALUE}\r`);
      }
    });
    const code = await new Promise<number | null>((done) => child.on('close', done));
    assert.equal(code, 0, screen);
    assert.match(screen, /added typed \(generic\) sec_/);
    assert.ok(!screen.includes(VALUE), 'the value was echoed');
    const run = await runCli(['secrets', 'list', '--json'], {
      env: { XDG_CONFIG_HOME: own.config },
    });
    assert.match(run.stdout, /"name":"typed"/);
  });

  it('refuses a value past 64 KiB on standard input', async () => {
    const big = await cli(setup, ['add', 'big'], 'a'.repeat(70 * 1024));
    assert.equal(big.code, 1);
    assert.match(big.stderr, /SECRET_VALUE_INVALID/);
  });

  it('reports a damaged vault with its code and leaves the file as it is', async () => {
    const damaged = { config: tempDir('mhl-secrets-damaged-') };
    assert.equal((await cli(damaged, ['add', 'db', '--stdin'], VALUE)).code, 0);
    const file = join(damaged.config, 'mhl', 'vault.json');
    writeFileSync(file, '{"format":"mhl-vault"');
    for (const args of [['list'], ['add', 'other', '--stdin'], ['remove', 'db']]) {
      const refused = await cli(damaged, args, VALUE);
      assert.equal(refused.code, 1, args.join(' '));
      assert.match(refused.stderr, /VAULT_CORRUPT/);
    }
    assert.equal(readFileSync(file, 'utf8'), '{"format":"mhl-vault"');
    const run = await runCli(
      [
        'run',
        join(FOLDER, 'use-secret.mh'),
        '--input',
        `out=${join(tempDir(), 'x')}`,
        '--format',
        'json',
      ],
      {
        env: { XDG_CONFIG_HOME: damaged.config },
        cwd: tempDir(),
      },
    );
    assert.equal(run.code, 1);
    assert.match(run.stdout, /VAULT_CORRUPT/);
    assert.ok(!run.stdout.includes(damaged.config), 'no vault path in a run result');
  });

  it('accepts only a setup URL of the exact shape on the configured origin', async () => {
    const answers = [
      `http://evil.example/secrets/setup?capability=${'A'.repeat(43)}`,
      `http://127.0.0.1:1/secrets/setup?capability=${'A'.repeat(43)}`,
      `PORT/secrets/setup?capability=${'A'.repeat(43)}&next=http://evil.example`,
      `PORT/secrets/other?capability=${'A'.repeat(43)}`,
      `PORT/secrets/setup?capability=${'A'.repeat(42)}`,
    ];
    let reply = '';
    const instance_id = '550e8400-e29b-41d4-a716-446655440000';
    const fake: Server = createServer((req, res) => {
      res.writeHead(req.url === '/health/ready' ? 200 : 201, {
        'content-type': 'application/json',
      });
      if (req.url === '/health/ready') return res.end(JSON.stringify({ instance_id }));
      if (req.url === '/secrets/challenge')
        return res.end(JSON.stringify({ nonce: 'N'.repeat(43), instance_id }));
      res.end(JSON.stringify({ url: reply, expires_at: new Date().toISOString() }));
    });
    await new Promise<void>((done) => fake.listen(0, '127.0.0.1', done));
    const port = (fake.address() as AddressInfo).port;
    try {
      for (const shape of answers) {
        reply = shape.replace('PORT', `http://127.0.0.1:${port}`);
        const refused = await cli(setup, ['add', 'x', '--open', '--port', String(port)]);
        assert.equal(refused.code, 1, reply);
        assert.match(refused.stderr, /SETUP_BAD_ANSWER/);
        assert.ok(
          !refused.stdout.includes('capability=') && !refused.stderr.includes('evil'),
          reply,
        );
      }
    } finally {
      fake.close();
    }
  });
});

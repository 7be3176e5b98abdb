// `mhl serve mcp` with its caches (the V8 code cache of the CLI, checked catalogs) as a user
// restarting a server meets them: the built CLI, a real cache folder (MHL_CACHE_DIR), real
// clients. A warm start must answer exactly as a start that ignores the cache; a cache that
// cannot be written must not stop the server; a pack's catalog must never reach the cache.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { HttpServer } from '../helpers/http-server.js';
import { StdioServer } from '../helpers/stdio-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/serve');
const PROMPTS = resolve(REPO_ROOT, 'test/fixtures/prompts');
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

const servers: StdioServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.end()));
});

/** A copy of `source`, so a test may edit it. */
function copyOf(source: string): string {
  const dir = join(tempDir('mhl-serve-cache-'), 'workflows');
  cpSync(source, dir, { recursive: true });
  return dir;
}

function catalogEntries(cache: string): string[] {
  const dir = join(cache, 'catalogs');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** `value` with every `…_ms` figure (how long a call took) set to 0: those vary by run. */
function timeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(timeless);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k.endsWith('_ms') ? 0 : timeless(v)]),
  );
}

/** What a client sees of a served folder: discover, tools, prompts, a call, a prompt. */
async function session(folder: string, env: Record<string, string>, args: string[] = []) {
  const server = new StdioServer(folder, args, { env });
  servers.push(server);
  const meta = { _meta: MODERN_META };
  const discover = await server.request('server/discover', meta);
  const tools = await server.request('tools/list', meta);
  const prompts = await server.request('prompts/list', meta);
  const call = await server.request('tools/call', {
    name: 'Greet',
    arguments: { name: 'cache', times: 2 },
    ...meta,
  });
  const refused = await server.request('tools/call', {
    name: 'Greet',
    arguments: { times: 'x' },
    ...meta,
  });
  assert.equal(await server.end(), 0, server.stderr);
  const answers = [discover, tools, prompts, call, refused].map((a) =>
    timeless(a['result'] ?? a['error']),
  );
  return { answers, stderr: server.stderr };
}

describe('mhl serve mcp with a catalog cache', () => {
  it('answers a warm start exactly as a start without the cache', async () => {
    const folder = copyOf(FOLDER);
    cpSync(PROMPTS, join(folder, 'prompts'), { recursive: true });
    const cache = tempDir('mhl-cache-');
    const env = { MHL_CACHE_DIR: cache };
    const uncached = await session(folder, env, ['--no-catalog-cache']);
    assert.deepEqual(catalogEntries(cache), [], '--no-catalog-cache writes no entry');
    const cold = await session(folder, env);
    const [entry] = catalogEntries(cache);
    assert.ok(entry !== undefined, 'the first start writes an entry');
    const written = statSync(join(cache, 'catalogs', entry));
    const warm = await session(folder, env);
    // A hit reads the entry and leaves it as it was.
    assert.deepEqual(catalogEntries(cache), [entry]);
    assert.equal(statSync(join(cache, 'catalogs', entry)).mtimeMs, written.mtimeMs);
    assert.deepEqual(cold.answers, uncached.answers);
    assert.deepEqual(warm.answers, uncached.answers);
    const call = warm.answers[3] as { structuredContent?: { message?: string } };
    assert.match(String(call.structuredContent?.message), /cache/);
  });

  it('checks an edited folder afresh: a new error stops the start as it would uncached', async () => {
    const folder = copyOf(FOLDER);
    const cache = tempDir('mhl-cache-');
    await session(folder, { MHL_CACHE_DIR: cache });
    writeFileSync(join(folder, 'broken.mh'), 'pipeline Broken { step S { log(nope) } }\n');
    const result = await runCli(['serve', 'mcp', folder], { env: { MHL_CACHE_DIR: cache } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /broken\.mh:1:32: error: /);
  });

  it('serves when the cache folder cannot be created, with no trace of it on stderr', async () => {
    const blocker = join(tempDir('mhl-cache-'), 'a-file');
    writeFileSync(blocker, 'not a folder');
    const env = { MHL_CACHE_DIR: join(blocker, 'cache') };
    const first = await session(copyOf(FOLDER), env);
    const uncached = await session(copyOf(FOLDER), { MHL_NO_CACHE: '1' });
    assert.deepEqual(first.answers.slice(3), uncached.answers.slice(3));
    assert.doesNotMatch(first.stderr, /ENOTDIR|EEXIST|\n\s+at /);
  });

  it('never writes a pack’s catalog to the cache', async () => {
    const dir = copyOf(FOLDER);
    const pack = join(tempDir('mhl-pack-out-'), 'workflows.dmpk');
    const made = await runCli(['pack', dir, '-o', pack, '--new-key'], {
      env: { MHL_SERVE_WORKFLOWS_KEY: '' },
    });
    assert.equal(made.code, 0, made.stderr);
    const cache = tempDir('mhl-cache-');
    const server = new HttpServer(dir, ['--workflows-pack', pack], {
      MHL_SERVE_WORKFLOWS_KEY: made.stdout.trim(),
      MHL_CACHE_DIR: cache,
    });
    const port = await server.ready;
    const client = new Client({ name: 'cache-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'Greet'));
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
    assert.deepEqual(catalogEntries(cache), []);
  });
});

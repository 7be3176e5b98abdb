// `mhl serve mcp` with its caches (the V8 code cache of the CLI, checked catalogs) as a user
// restarting a server meets them: the built CLI, a real cache folder (MHL_CACHE_DIR), real
// clients. A warm start must answer exactly as a start that ignores the cache; a cache that
// cannot be written must not stop the server; a pack's catalog must never reach the cache.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { rewriteCacheEntry } from '../helpers/cache-entry.js';
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

/**
 * Rewrites the one catalog entry under `cache` as a writer with a bug could have: `edit` changes
 * the decoded entry and the header's hash is made to match again, so only its content is wrong.
 */
function rewriteEntry(cache: string, edit: (entry: Record<string, unknown>) => void): void {
  const [name] = catalogEntries(cache);
  rewriteCacheEntry(join(cache, 'catalogs', name as string), edit);
}

/** The operator log's lines (pino JSON on stderr) with `code`. */
function logged(stderr: string, code: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['code'] === code);
}

/** A copy of the serve fixture whose Extra.mh imports a file outside the served folder. */
function withOutsideImport(): { folder: string; shared: string } {
  const folder = copyOf(FOLDER);
  const shared = join(folder, '..', 'shared.mh');
  writeFileSync(shared, 'export tool Helper {\n  greet(who: string) -> "hi ${who}"\n}\n');
  writeFileSync(
    join(folder, 'extra.mh'),
    'import { Helper } from "../shared.mh"\npipeline Extra { step S { log(Helper.greet("x")) } }\n',
  );
  return { folder, shared };
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

  it('serves from a fresh load when a hit’s programs do not match its entry, and says so', async () => {
    const folder = copyOf(FOLDER);
    const cache = tempDir('mhl-cache-');
    const env = { MHL_CACHE_DIR: cache };
    const uncached = await session(folder, env, ['--no-catalog-cache']);
    await session(folder, env);
    const [name] = catalogEntries(cache);
    rewriteEntry(cache, (entry) => {
      const span = { file: join(folder, 'greet.mh'), start: 0, end: 1, line: 1, col: 1 };
      entry['warnings'] = [{ severity: 'warning', code: 'UNREACHABLE', message: 'no', span }];
    });
    const warm = await session(folder, env);
    assert.deepEqual(warm.answers, uncached.answers);
    const [line, ...more] = logged(warm.stderr, 'CATALOG_CACHE_FALLBACK');
    assert.deepEqual(more, [], warm.stderr);
    assert.equal(line?.['reason'], 'mismatch');
    assert.equal(line?.['entry'], join(cache, 'catalogs', name as string));
    assert.deepEqual(catalogEntries(cache), [], 'the entry is dropped; the next start writes it');
    await session(folder, env);
    assert.deepEqual(catalogEntries(cache), [name]);
  });

  it('stops as an uncached start would when the programs of a hit no longer load', async () => {
    const { folder, shared } = withOutsideImport();
    const cache = tempDir('mhl-cache-');
    const env = { MHL_CACHE_DIR: cache };
    await session(folder, env);
    const broken = 'export tool Helper {\n  greet(who: string) -> nope\n}\n';
    writeFileSync(shared, broken);
    rewriteEntry(cache, (entry) => {
      const reads = entry['reads'] as [string, string | null][];
      assert.ok(
        reads.some(([path]) => path === shared),
        'the entry lists the import',
      );
      entry['reads'] = reads.map(([path, hash]) => [
        path,
        path === shared ? createHash('sha256').update(broken).digest('hex') : hash,
      ]);
    });
    const uncached = await runCli(['serve', 'mcp', folder], { env: { MHL_NO_CACHE: '1' } });
    assert.equal(uncached.code, 1);
    assert.match(uncached.stderr, /shared\.mh:2:\d+: error: /);
    const server = new StdioServer(folder, [], { env });
    servers.push(server);
    assert.equal(await server.exited, 1);
    const [line] = logged(server.stderr, 'CATALOG_CACHE_FALLBACK');
    assert.equal(line?.['reason'], 'problems');
    const diagnostics = (text: string) => text.split('\n').filter((l) => !l.startsWith('{'));
    assert.deepEqual(diagnostics(server.stderr), diagnostics(uncached.stderr));
    assert.deepEqual(catalogEntries(cache), []);
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

// `mhl pack` and `mhl serve mcp --http --workflows-pack`, driven as a user would: the built CLI,
// real packs on disk, a real SDK client. Exhaustive tampering runs in-process in
// test/unit/pack/tamper.test.ts; here a sample of each refusal goes through the real server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  type FSWatcher,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { basename, join, relative, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { collectPackFiles, encodePack, type PackEntry } from '../../src/pack/index.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { HttpServer } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const FIXTURE = resolve(REPO_ROOT, 'test/fixtures/pack');
const EXAMPLES = resolve(REPO_ROOT, 'examples');
const FAKE_AGENT = resolve(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs');
const KEY_ENV = 'MHL_SERVE_WORKFLOWS_KEY';
const KEY = 'c0ffee00'.repeat(8);

/** `mhl serve mcp <dir> --http --workflows-pack <pack>`; `port` is read from "listening on". */
class PackServer extends HttpServer {
  constructor(dir: string, pack: string, env: Record<string, string>, args: string[] = []) {
    super(dir, ['--workflows-pack', pack, ...args], env);
  }
}

const servers: PackServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** A copy of `source` in a fresh temporary folder, so a test can delete it. */
function copyOf(source: string): string {
  const dir = join(tempDir('mhl-pack-e2e-'), 'workflows');
  cpSync(source, dir, { recursive: true });
  return dir;
}

/** Packs `dir` with `--new-key`; returns the pack's path and the key printed on stdout. */
async function packWithNewKey(dir: string): Promise<{ pack: string; key: string }> {
  const pack = join(tempDir('mhl-pack-out-'), 'workflows.dmpk');
  const result = await runCli(['pack', dir, '-o', pack, '--new-key'], { env: { [KEY_ENV]: '' } });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^[0-9a-f]{64}\n$/);
  return { pack, key: result.stdout.trim() };
}

async function connectClient(port: number): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  const client = new Client({ name: 'pack-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, cwd: string): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: { context: { cwd } } });
  assert.equal(result.isError, undefined, `${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, unknown>;
}

/** A git repository with one commit of a file holding one TODO. */
function gitRepo(): string {
  const dir = tempDir('mhl-pack-repo-');
  writeFileSync(join(dir, 'notes.txt'), 'TODO: ship the pack\n');
  const git = (...args: string[]) => {
    const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
  };
  git('init', '-q');
  git('add', 'notes.txt');
  git('commit', '-q', '-m', 'first');
  return dir;
}

/** The names of the pipelines and workflows declared in the `.mh` files of `dir`. */
function declaredWorkflows(dir: string): string[] {
  const names: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.mh'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const m of text.matchAll(/^\s*(?:loop\s+)?(?:pipeline|workflow)\s+(\w+)/gm)) {
      names.push(m[1] as string);
    }
  }
  return names.sort();
}

/**
 * Watches every folder under `root` (one watcher per folder, added as folders appear, each
 * scanned when added), reporting every path created, changed or removed under it.
 */
function watchTree(root: string, onPath: (path: string) => void): () => void {
  const watchers = new Map<string, FSWatcher>();
  const add = (dir: string) => {
    if (watchers.has(dir)) return;
    const watcher = watch(dir, (_event, name) => {
      if (name === null) return;
      const path = join(dir, name.toString());
      onPath(path);
      if (isDir(path)) add(path);
    });
    watchers.set(dir, watcher);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      onPath(path);
      if (entry.isDirectory()) add(path);
    }
  };
  add(root);
  return () => {
    for (const w of watchers.values()) w.close();
  };
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Gone already: nothing to watch.
    return false;
  }
}

/** Every regular file under `root`, recursively. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** A port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Whether something accepts a connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.on('error', () => done(false));
  });
}

interface Refusal {
  readonly code: number | null;
  readonly stderr: string;
  /** Whether a connection to the requested port succeeded at any point while it ran. */
  readonly listened: boolean;
}

/** Starts a pack server that must refuse to start, probing its port until it exits. */
async function startRefused(
  dir: string,
  pack: string,
  env: Record<string, string>,
): Promise<Refusal> {
  const port = await freePort();
  const server = new PackServer(dir, pack, env, ['--port', String(port)]);
  let running = true;
  let listened = false;
  const probing = (async () => {
    while (running) {
      listened = (await accepts(port)) || listened;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const code = await server.exited;
  running = false;
  await probing;
  listened = (await accepts(port)) || listened;
  return { code, stderr: server.stderr, listened };
}

describe('mhl pack', () => {
  it('prints only a new key on stdout and writes a mode-0600 DMPK v2 pack', async () => {
    const { pack, key } = await packWithNewKey(copyOf(FIXTURE));
    assert.equal(statSync(pack).mode & 0o777, 0o600);
    const bytes = readFileSync(pack);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x44, 0x4d, 0x50, 0x4b, 2, 0, 0, 0]);
    assert.equal(bytes.readUInt32LE(8), 6, 'three .mh files and three assets');
    assert.equal(bytes.includes(Buffer.from('pipeline')), false, 'the pack is encrypted');
    assert.notEqual(key, KEY);
  });

  it('packs with the key from MHL_SERVE_WORKFLOWS_KEY and prints nothing on stdout', async () => {
    const dir = copyOf(FIXTURE);
    writeFileSync(join(dir, '.env'), 'NOT=packed\n');
    const pack = join(tempDir(), 'w.dmpk');
    const result = await runCli(['pack', dir, '-o', pack], { env: { [KEY_ENV]: KEY } });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /packed 6 files \(3 workflows, \d+ bytes\)/);
  });

  it('removes what a killed pack to the same output left, and no live writer’s file', async () => {
    const dir = copyOf(FIXTURE);
    const out = tempDir();
    const pack = join(out, 'w.dmpk');
    // A process that has exited: what a SIGKILLed `mhl pack` looks like to the next one.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(dead.stdout.toString());
    const leftover = join(out, `.w.dmpk.tmp-${deadPid}-0123456789abcdef`);
    const live = join(out, `.w.dmpk.tmp-${process.pid}-0123456789abcdef`);
    const unrelated = join(out, `.other.dmpk.tmp-${deadPid}-0123456789abcdef`);
    for (const file of [leftover, live, unrelated]) writeFileSync(file, 'partial pack');
    const result = await runCli(['pack', dir, '-o', pack], { env: { [KEY_ENV]: KEY } });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      [existsSync(leftover), existsSync(live), existsSync(unrelated)],
      [false, true, true],
    );
    assert.deepEqual(
      readdirSync(out).sort(),
      [basename(live), basename(unrelated), 'w.dmpk'].sort(),
    );
  });

  it('writes nothing, and keeps an older pack, when the workflows do not load from the pack', async () => {
    const dir = copyOf(FIXTURE);
    rmSync(join(dir, 'lib/ask.prompt.md'));
    const pack = join(tempDir(), 'w.dmpk');
    writeFileSync(pack, 'older pack');
    const result = await runCli(['pack', dir, '-o', pack], { env: { [KEY_ENV]: KEY } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /ask\.prompt\.md/);
    assert.match(result.stderr, /nothing written/);
    assert.equal(readFileSync(pack, 'utf8'), 'older pack');
  });

  it('refuses a missing, contradictory or malformed key without echoing it', async () => {
    const dir = copyOf(FIXTURE);
    const pack = join(tempDir(), 'w.dmpk');
    const run = (env: Record<string, string>, ...extra: string[]) =>
      runCli(['pack', dir, '-o', pack, ...extra], { env: { [KEY_ENV]: '', ...env } });
    const missing = await run({});
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /MHL_SERVE_WORKFLOWS_KEY/);
    assert.equal((await run({ [KEY_ENV]: KEY }, '--new-key')).code, 2);
    const base64 = Buffer.from(KEY, 'hex').toString('base64');
    const malformed = await run({ [KEY_ENV]: base64 });
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /PACK_KEY_MALFORMED/);
    assert.equal(malformed.stderr.includes(base64), false);
    assert.equal(malformed.stderr.includes(base64.slice(0, 12)), false);
    assert.throws(() => statSync(pack), /ENOENT/);
  });
});

describe('mhl serve mcp --workflows-pack', () => {
  it('serves examples/ from its pack with the folder deleted, every workflow callable', async () => {
    const dir = copyOf(EXAMPLES);
    const { pack, key } = await packWithNewKey(dir);
    rmSync(dir, { recursive: true });
    const server = new PackServer(dir, pack, { [KEY_ENV]: key }, ['--port', '0']);
    servers.push(server);
    const client = await connectClient(await server.ready);
    try {
      const names = declaredWorkflows(EXAMPLES);
      const { tools } = await client.listTools();
      const served = tools.map((t) => t.name).filter((n) => names.includes(n));
      assert.deepEqual(served.sort(), names);
      const repo = gitRepo();
      const results = new Map<string, Record<string, unknown>>();
      for (const name of names) results.set(name, await call(client, name, repo));
      const recent = results.get('RepoReport')?.['recent'] as string[];
      assert.equal(recent.length, 1);
      assert.match(recent[0] ?? '', / first$/);
      assert.match(String(results.get('RepoReport')?.['summary']), /^1 recent commits/);
      assert.equal(results.get('TodoScan')?.['count'], 1);
      assert.deepEqual(results.get('TodoScan')?.['files'], ['./notes.txt']);
    } finally {
      await client.close();
    }
    assert.equal(await server.stop(), 0);
  });

  it('keeps the key from children and env(), and writes no file of the pack anywhere', async () => {
    const dir = copyOf(FIXTURE);
    const packed = collectPackFiles(dir).entries;
    const pack = join(tempDir(), 'w.dmpk');
    const made = await runCli(['pack', dir, '-o', pack], { env: { [KEY_ENV]: KEY } });
    assert.equal(made.code, 0, made.stderr);
    rmSync(dir, { recursive: true });
    // The host materialises what an engine opens by path, at <dir>/<path in the pack>.
    const schema = join(dir, 'lib/answer.schema.json');
    mkdirSync(join(dir, 'lib'), { recursive: true });
    cpSync(join(FIXTURE, 'lib/answer.schema.json'), schema);
    const serverTmp = tempDir('mhl-pack-tmpdir-');
    const seen = new Set<string>();
    const stops = [dir, serverTmp].map((root) => watchTree(root, (p) => seen.add(p)));
    const server = new PackServer(
      dir,
      pack,
      {
        [KEY_ENV]: KEY,
        // Would hand the key to every child, were it still in the environment.
        MHL_PASS_ENV: KEY_ENV,
        FAKE_AGENT,
        TMPDIR: serverTmp,
      },
      ['--port', '0'],
    );
    servers.push(server);
    try {
      const client = await connectClient(await server.ready);
      const cwd = tempDir('mhl-pack-cwd-');
      try {
        const dump = String((await call(client, 'EnvDump', cwd))['out']);
        assert.match(dump, /^PATH=/m, 'the child ran env');
        assert.equal(dump.includes(KEY), false);
        assert.equal(dump.includes(KEY_ENV), false);
        assert.equal((await call(client, 'EnvRead', cwd))['key'], '');
        const asked = await call(client, 'AskAgent', cwd);
        assert.equal(asked['schema_path'], schema);
        assert.equal(asked['schema_text'], readFileSync(schema, 'utf8'));
        assert.equal(asked['label'], 'topic: packs');
        const reply = asked['reply'] as Record<string, unknown>;
        assert.equal(reply['prompt'], 'terse | [json] Tell me about packs, from the pack.');
        assert.equal(reply['outputSchema'], readFileSync(schema, 'utf8'));
        assert.equal(JSON.stringify(reply['env']).includes(KEY), false);
      } finally {
        await client.close();
      }
      // Documented limit: the process's own initial environment block still holds the key.
      const environ = `/proc/${server.child.pid}/environ`;
      if (statSync('/proc/self/environ', { throwIfNoEntry: false })) {
        assert.equal(readFileSync(environ).includes(`${KEY_ENV}=${KEY}`), true);
      }
      // The watchers work: a file made now is seen.
      for (const root of [dir, serverTmp]) writeFileSync(join(root, 'canary'), 'c');
      await until(() => seen.has(join(dir, 'canary')) && seen.has(join(serverTmp, 'canary')), {
        what: 'the watchers to see both canaries',
      });
    } finally {
      for (const stop of stops) stop();
    }
    assert.equal(await server.stop(), 0);
    const ours = [join(dir, 'lib'), schema, join(dir, 'canary'), join(serverTmp, 'canary')];
    assertNoPackFiles(packed, seen, { dir, tmp: serverTmp }, ours);
  });

  it('is refused with stdio', async () => {
    const result = await runCli(['serve', 'mcp', tempDir(), '--workflows-pack', 'w.dmpk'], {
      env: { [KEY_ENV]: KEY },
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--workflows-pack is only valid with --http/);
  });

  it('exits 1 before listening, naming the check, for each kind of bad key or pack', async () => {
    const dir = tempDir();
    const entries = collectPackFiles(FIXTURE).entries;
    const good = encodePack(entries, Buffer.from(KEY, 'hex'));
    const lengthOfEntry0 = good.readUInt32LE(24);
    const cases: { name: string; bytes?: Buffer; key?: string; code: RegExp }[] = [
      { name: 'missing key', key: '', code: /PACK_KEY_MISSING/ },
      { name: 'malformed key', key: `${KEY.slice(0, 60)}zzzz`, code: /PACK_KEY_MALFORMED/ },
      { name: 'wrong key', key: 'ab'.repeat(32), code: /PACK_AUTH_FAILED: entry 0/ },
      { name: 'magic', bytes: flip(good, 1), code: /PACK_BAD_MAGIC/ },
      { name: 'version', bytes: flip(good, 4), code: /PACK_UNSUPPORTED_VERSION/ },
      { name: 'count', bytes: flip(good, 8), code: /PACK_(TRUNCATED|COUNT_MISMATCH)/ },
      { name: 'nonce', bytes: flip(good, 13), code: /PACK_AUTH_FAILED: entry 0/ },
      { name: 'ciphertext', bytes: flip(good, 40), code: /PACK_AUTH_FAILED: entry 0/ },
      {
        name: 'tag of entry 0',
        bytes: flip(good, 28 + lengthOfEntry0 - 1),
        code: /PACK_AUTH_FAILED: entry 0/,
      },
      { name: 'last byte', bytes: flip(good, good.length - 1), code: /PACK_AUTH_FAILED: entry 5/ },
      { name: 'empty file', bytes: good.subarray(0, 0), code: /PACK_TRUNCATED/ },
      { name: 'cut in the header', bytes: good.subarray(0, 11), code: /PACK_TRUNCATED/ },
      { name: 'cut by one byte', bytes: good.subarray(0, good.length - 1), code: /PACK_TRUNCATED/ },
      { name: 'count too small', bytes: withCount(good, 5), code: /PACK_COUNT_MISMATCH/ },
      { name: 'count too large', bytes: withCount(good, 7), code: /PACK_TRUNCATED/ },
      {
        name: 'repeated path',
        bytes: encodePack([...entries, entries[0] as PackEntry], Buffer.from(KEY, 'hex')),
        code: /PACK_DUPLICATE_PATH: entry 6 repeats the path "agent\.mh" of entry 0/,
      },
    ];
    const refusals = await Promise.all(
      cases.map(async (c, i) => {
        const file = join(dir, `${i}.dmpk`);
        writeFileSync(file, c.bytes ?? good);
        return startRefused(join(dir, 'root'), file, { [KEY_ENV]: c.key ?? KEY });
      }),
    );
    for (const [i, refusal] of refusals.entries()) {
      const c = cases[i] as (typeof cases)[number];
      assert.equal(refusal.code, 1, `${c.name}: ${refusal.stderr}`);
      assert.match(refusal.stderr, c.code, c.name);
      assert.equal(refusal.listened, false, `${c.name}: something listened`);
      assert.doesNotMatch(refusal.stderr, /listening on/, c.name);
      assert.equal(refusal.stderr.includes(KEY), false, `${c.name}: the key was echoed`);
      assert.equal(refusal.stderr.includes(KEY.slice(0, 16)), false, c.name);
    }
  });
});

/**
 * The server's own temporary folders, directly under $TMPDIR: async-run state and the agent
 * cache folders of runs and of synchronous calls.
 */
function isRunState(path: string, tmp: string): boolean {
  return /^mhl-(serve|cache)-[^/]+(\/|$)/.test(relative(tmp, path));
}

function flip(bytes: Buffer, at: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] = (copy[at] as number) ^ 0x01;
  return copy;
}

function withCount(bytes: Buffer, count: number): Buffer {
  const copy = Buffer.from(bytes);
  copy.writeUInt32LE(count, 8);
  return copy;
}

/**
 * Nothing appeared under `roots` while serving except what the test made itself (`expected`)
 * and the server's own run state in $TMPDIR, nothing named like a packed file appeared at all,
 * and no file left there carries a packed file's bytes (the materialised schema aside).
 */
function assertNoPackFiles(
  packed: readonly PackEntry[],
  seen: ReadonlySet<string>,
  roots: { readonly dir: string; readonly tmp: string },
  expected: readonly string[],
): void {
  const names = new Set(packed.map((e) => basename(e.path)));
  const unexpected = [...seen].filter((p) => !expected.includes(p) && !isRunState(p, roots.tmp));
  assert.deepEqual(unexpected, [], 'files appeared under <dir> or $TMPDIR while serving');
  const named = [...seen].filter((p) => !expected.includes(p) && names.has(basename(p)));
  assert.deepEqual(named, [], 'a file named like a pack entry appeared');
  const contents = packed.map((e) => Buffer.from(e.content));
  for (const file of [roots.dir, roots.tmp].flatMap(filesUnder)) {
    if (expected.includes(file)) continue;
    const bytes = readFileSync(file);
    const leaked = contents.some((c) => c.length > 0 && bytes.includes(c));
    assert.equal(leaked, false, `${relative('/', file)} holds a packed file's bytes`);
  }
}

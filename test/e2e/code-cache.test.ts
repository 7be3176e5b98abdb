// The launcher's V8 code cache (src/cli/launch.ts) with the built CLI: one entry per command,
// written 0600 in a 0700 folder, read back on the next start, and a corrupt or untrusted entry
// ignored (the command still works) and replaced. MHL_NO_CACHE leaves the folder alone.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cacheKey } from '../../src/store/index.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

function codeEntries(cache: string): string[] {
  const dir = join(cache, 'code');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** `mhl --help`: a command of the "other" kind that loads the CLI (--version does not). */
async function help(env: Record<string, string>): Promise<void> {
  const result = await runCli(['--help'], { env });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^Usage: mhl /);
  assert.equal(result.stderr, '');
}

describe('the code cache', () => {
  it('writes one private entry per command and keeps it while it is valid', async () => {
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    await help({ MHL_CACHE_DIR: cache });
    const [entry, ...rest] = codeEntries(cache);
    assert.ok(entry?.endsWith('-other.bin'), String(entry));
    assert.deepEqual(rest, []);
    const path = join(cache, 'code', entry as string);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(cache, 'code')).mode & 0o777, 0o700);
    const written = statSync(path).mtimeMs;
    await help({ MHL_CACHE_DIR: cache });
    assert.equal(statSync(path).mtimeMs, written, 'a valid entry is read, not rewritten');
    const lint = await runCli(['lint', 'examples'], { env: { MHL_CACHE_DIR: cache } });
    assert.equal(lint.code, 0, lint.stderr);
    assert.ok(codeEntries(cache).some((e) => e.endsWith('-lint.bin')));
  });

  it('keys its entries on the digest of the bundle as it was built', async () => {
    // scripts/bundle.mjs defines the digest in the launcher rather than each start hashing the
    // bundle: it must be the digest of the bytes the launcher runs, or a later build step that
    // changed them would leave a stale key behind.
    const bundle = readFileSync(join(REPO_ROOT, 'dist/bin/mhl-main.cjs'));
    const digest = createHash('sha256').update(bundle).digest('hex');
    const launcher = readFileSync(join(REPO_ROOT, 'dist/bin/mhl.js'), 'latin1');
    assert.ok(launcher.includes(`"${digest}"`), 'the launcher holds the digest of the bundle');
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    await help({ MHL_CACHE_DIR: cache });
    const key = cacheKey(['mhl-code-cache', process.version, process.arch, digest]);
    assert.deepEqual(codeEntries(cache), [`${key}-other.bin`]);
  });

  it("keeps a server command's entry, made under the V8 flag that command sets", async () => {
    // `serve` turns allocation-site pretenuring off (launch-run.ts). V8 refuses an entry made
    // under other flags, so were the flag set after compiling, each start would refuse the last
    // one's entry and write it again.
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    const flows = tempDir('mhl-code-cache-flows-');
    writeFileSync(join(flows, 'echo.mh'), 'pipeline Echo {\n  input text: string\n}\n');
    const serve = async () => {
      // On stdio: the closed stdin ends the server, and the entry is written as it exits.
      const result = await runCli(['serve', 'mcp', flows], { env: { MHL_CACHE_DIR: cache } });
      assert.equal(result.code, 0, result.stderr);
    };
    await serve();
    const entry = codeEntries(cache).find((e) => e.endsWith('-serve.bin'));
    assert.ok(entry !== undefined, String(codeEntries(cache)));
    const path = join(cache, 'code', entry);
    const written = statSync(path).mtimeMs;
    await serve();
    assert.equal(statSync(path).mtimeMs, written, 'the entry was read, not refused and rewritten');
  });

  it('ignores a corrupt or untrusted entry and replaces it', async () => {
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    await help({ MHL_CACHE_DIR: cache });
    const [entry] = codeEntries(cache);
    const path = join(cache, 'code', entry as string);
    const bytes = readFileSync(path);
    bytes[bytes.length - 100] = (bytes[bytes.length - 100] as number) ^ 0xff;
    writeFileSync(path, bytes);
    await help({ MHL_CACHE_DIR: cache });
    assert.notDeepEqual(readFileSync(path), bytes, 'the corrupt entry was replaced');
    chmodSync(path, 0o666);
    await help({ MHL_CACHE_DIR: cache });
    assert.equal(statSync(path).mode & 0o777, 0o600, 'the untrusted entry was replaced');
  });

  it('answers --version without loading the CLI or touching the cache', async () => {
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    const result = await runCli(['--version'], { env: { MHL_CACHE_DIR: cache } });
    assert.equal(result.code, 0, result.stderr);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    assert.equal(result.stdout, `${pkg.version}\n`);
    assert.equal(existsSync(cache), false);
  });

  it('reads and writes nothing with MHL_NO_CACHE', async () => {
    const cache = join(tempDir('mhl-code-cache-'), 'cache');
    await help({ MHL_CACHE_DIR: cache, MHL_NO_CACHE: '1' });
    assert.equal(existsSync(cache), false);
  });
});

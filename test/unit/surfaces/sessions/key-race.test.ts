/**
 * The sessions key under a creation race: several processes starting at once on an empty key
 * directory (two servers on one workspace, as CI caught) must all come up with the one key, and
 * none may read the file while another is still writing it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

const KEY_MODULE = pathToFileURL(
  join(import.meta.dirname, '../../../../src/surfaces/sessions/store/key.ts'),
).href;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One process that loads (or creates) the key in `dir` and prints it as hex. */
function loadInChild(dir: string): Promise<{ code: number | null; out: string; err: string }> {
  const script = `const { loadKey } = await import(${JSON.stringify(KEY_MODULE)});
process.stdout.write(loadKey(${JSON.stringify(dir)}).toString('hex'));`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('close', (code) => done({ code, out, err }));
  });
}

test('processes racing to create the key all get the same complete key', async () => {
  for (let round = 0; round < 3; round++) {
    const dir = join(mkdtempSync(join(tmpdir(), 'mhl-key-race-')), 'keys');
    dirs.push(dir);
    const results = await Promise.all(Array.from({ length: 6 }, () => loadInChild(dir)));
    for (const r of results) assert.equal(r.code, 0, r.err);
    const keys = new Set(results.map((r) => r.out));
    assert.equal(keys.size, 1, 'one key for every process');
    assert.equal(readFileSync(join(dir, 'secret')).toString('hex'), [...keys][0]);
    assert.equal(statSync(join(dir, 'secret')).mode & 0o777, 0o600);
    // No temporary file is left beside it.
    assert.deepEqual(readdirSync(dir), ['secret']);
  }
});

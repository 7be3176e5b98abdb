/**
 * Atomic writes on the write worker thread (`src/store/write-offload.ts`): with a worker of the
 * test's own started, the dir store passes the whole Store contract, and `writeAtomic` on the real file
 * system keeps every promise of the thread-pool path: 0600 files, no temp file left after a
 * success or a failure, the old bytes kept when a write fails or is aborted, the errno codes the
 * store maps, a full disk (on a real tmpfs) reported as ENOSPC. Concurrent writes, which the
 * busy worker declines to the thread pool, all land. How a worker starts, stops and dies is
 * `write-offload-lifecycle.test.ts`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DirStore, NODE_FS, WriteOffloader, writeAtomic } from '../../../src/store/index.js';
import { freeBytes, needMount, writeFiller } from '../../helpers/tmpfs.js';
import { storeContract } from './store-contract.js';

const roots: string[] = [];
const offloader = new WriteOffloader({ startAfter: 0 });
after(async () => {
  await offloader.stop();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-offload-'));
  roots.push(dir);
  return dir;
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

before(async () => {
  assert.ok(await offloader.start(), 'the write worker runs on this machine');
});

storeContract(
  'DirStore on the write worker',
  async () => new DirStore(join(tempDir(), 'root'), { offloader }),
);

describe('writeAtomic on the write worker', () => {
  it('writes a new file 0600 and replaces it, leaving no temp file', async () => {
    const dir = tempDir();
    const path = join(dir, 'Build.json');
    await writeAtomic(NODE_FS, path, bytes('first'), { offloader });
    assert.equal(readFileSync(path, 'utf8'), 'first');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    await writeAtomic(NODE_FS, path, bytes('second, longer'), { offloader });
    assert.equal(readFileSync(path, 'utf8'), 'second, longer');
    assert.deepEqual(readdirSync(dir), ['Build.json']);
  });

  it('answers ENOENT when the directory is missing, as the store expects to create it', async () => {
    const dir = tempDir();
    await assert.rejects(writeAtomic(NODE_FS, join(dir, 'gone', 'k'), bytes('v'), { offloader }), {
      code: 'ENOENT',
    });
  });

  it('keeps a directory in the way and removes its temp file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'taken', 'inside'), { recursive: true });
    await assert.rejects(
      writeAtomic(NODE_FS, join(dir, 'taken'), bytes('v'), { offloader }),
      (err: unknown) => {
        const code = (err as { code?: string }).code;
        assert.ok(code === 'EISDIR' || code === 'ENOTEMPTY', `code ${code}`);
        return true;
      },
    );
    assert.deepEqual(readdirSync(dir), ['taken']);
  });

  it('leaves the old bytes when the signal is aborted', async () => {
    const dir = tempDir();
    const path = join(dir, 'k');
    await writeAtomic(NODE_FS, path, bytes('old'), { offloader });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await assert.rejects(
      writeAtomic(NODE_FS, path, bytes('new'), { signal: controller.signal, offloader }),
      {
        message: 'stop',
      },
    );
    assert.equal(readFileSync(path, 'utf8'), 'old');
    assert.deepEqual(readdirSync(dir), ['k']);
  });

  it('lands every one of many concurrent writes, worker and thread pool alike', async () => {
    const store = new DirStore(join(tempDir(), 'root'), { offloader });
    const keys = Array.from({ length: 24 }, (_, i) => `state/s${i % 3}/k${i}.json`);
    await Promise.all(keys.map((key) => store.put(key, `value of ${key}`)));
    for (const key of keys) assert.equal(await store.get(key), `value of ${key}`);
    assert.deepEqual(await store.list('state/'), [...keys].sort());
  });

  it('reports a full tmpfs as ENOSPC and keeps the previous file whole', async (t) => {
    const disk = needMount(t, '1m');
    if (!disk) return;
    const path = join(disk.dir, 'Build.json');
    await writeAtomic(NODE_FS, path, bytes('old'), { offloader });
    writeFiller(join(disk.dir, 'filler'), freeBytes(disk.dir) - 4096);
    await assert.rejects(writeAtomic(NODE_FS, path, Buffer.alloc(64 * 1024, 1), { offloader }), {
      code: 'ENOSPC',
    });
    assert.equal(readFileSync(path, 'utf8'), 'old');
    assert.deepEqual(readdirSync(disk.dir).sort(), ['Build.json', 'filler']);
  });
});

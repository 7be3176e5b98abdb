/**
 * The dir store: the shared Store contract, then what only a file system shows: file and
 * directory modes, no temp files left behind, empty directories pruned, the cross-device
 * rename fallback, and keys that never escape the root.
 */
import assert from 'node:assert/strict';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DirStore, NODE_FS } from '../../../src/store/index.js';
import { storeContract } from './store-contract.js';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A fresh temp directory; the store root is a not-yet-existing folder inside it. */
function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-dir-store-'));
  roots.push(dir);
  return join(dir, 'state-root');
}

/** Every path under `dir`, relative, directories with a trailing "/". */
function walk(dir: string, base = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? [`${base}${e.name}/`, ...walk(join(dir, e.name), `${base}${e.name}/`)]
      : [`${base}${e.name}`],
  );
}

storeContract('DirStore', async () => new DirStore(tempRoot()));

describe('DirStore on disk', () => {
  it('stores a key as a UTF-8 file at root/key', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('state/abc/Build.json', '{"a":"é"}');
    assert.equal(readFileSync(join(root, 'state/abc/Build.json'), 'utf8'), '{"a":"é"}');
  });

  it('writes files 0600 and creates directories 0700, the root included', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('a/b/c/file', 'x');
    await store.put('a/b/c/file', 'overwritten');
    assert.equal(statSync(root).mode & 0o777, 0o700);
    for (const dir of ['a', 'a/b', 'a/b/c'])
      assert.equal(statSync(join(root, dir)).mode & 0o777, 0o700, dir);
    assert.equal(statSync(join(root, 'a/b/c/file')).mode & 0o777, 0o600);
  });

  it('leaves no temp files behind after concurrent, aborted and failed writes', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => store.put(`t/k${i % 3}`, 'v'.repeat(10_000 + i))),
    );
    const controller = new AbortController();
    const aborted = store.put('t/k0', 'w'.repeat(5_000_000), { signal: controller.signal });
    controller.abort();
    await assert.rejects(aborted, { name: 'AbortError' });
    await assert.rejects(store.put('t/k0/child', 'v'), { code: 'STORE_KEY_CONFLICT' });
    assert.deepEqual(walk(root).sort(), ['t/', 't/k0', 't/k1', 't/k2']);
  });

  it('removes directories a delete leaves empty, but never the root', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('state/s1/P.json', '{}');
    await store.put('state/s1/result.json', '{}');
    await store.put('state/P.latest', 's1\n');
    await store.delete('state/s1/P.json');
    assert.deepEqual(walk(root).sort(), [
      'state/',
      'state/P.latest',
      'state/s1/',
      'state/s1/result.json',
    ]);
    await store.delete('state/s1/result.json');
    await store.delete('state/P.latest');
    assert.deepEqual(walk(root), []);
    assert.ok(statSync(root).isDirectory());
  });

  it('never lists dot files or temp files found on disk', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('l/real', '1');
    writeFileSync(join(root, 'l/.tmp-deadbeef'), 'partial');
    writeFileSync(join(root, '.DS_Store'), '');
    assert.deepEqual(await store.list(''), ['l/real']);
  });

  it('deletes without the directory fsync when told durable: false, pruning all the same', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('state/s1/Build.json', '1');
    await store.put('state/s1/result.json', '2');
    await store.delete('state/s1/Build.json', { durable: false });
    assert.deepEqual(walk(root).sort(), ['state/', 'state/s1/', 'state/s1/result.json']);
    await store.delete('state/s1/result.json', { durable: false });
    assert.deepEqual(walk(root), []);
  });

  it('fsyncs the directory after a delete unless durable: false', async () => {
    const root = tempRoot();
    let dirSyncs = 0;
    const open = (async (path: string, flags: string, mode?: number) => {
      if (flags === 'r') dirSyncs++;
      return NODE_FS.open(path, flags, mode);
    }) as typeof NODE_FS.open;
    const store = new DirStore(root, { fs: { ...NODE_FS, open } });
    await store.put('s/a', '1');
    await store.put('s/b', '1');
    dirSyncs = 0;
    await store.delete('s/a');
    assert.equal(dirSyncs, 1);
    await store.delete('s/b', { durable: false });
    assert.equal(dirSyncs, 1);
  });

  it('does not follow a symbolic link planted at a key', async () => {
    const root = tempRoot();
    const store = new DirStore(root);
    await store.put('s/placeholder', '1');
    const outside = join(root, '..', 'outside-secret');
    writeFileSync(outside, 'secret');
    symlinkSync(outside, join(root, 's/link'));
    await assert.rejects(store.get('s/link'), { code: 'STORE_IO' });
    assert.deepEqual(await store.list('s/'), ['s/placeholder']);
  });

  it('removes a temp file the disk refused to delete once a later write succeeds', async () => {
    const root = tempRoot();
    let readOnly = false;
    const refuse = () => Object.assign(new Error('read-only file system'), { code: 'EROFS' });
    const fs = {
      ...NODE_FS,
      // As after a remount read-only between the write and the rename: both refused.
      rename: (async (from, to) => {
        if (readOnly) throw refuse();
        return NODE_FS.rename(from, to);
      }) as typeof NODE_FS.rename,
      unlink: (async (path) => {
        if (readOnly) throw refuse();
        return NODE_FS.unlink(path);
      }) as typeof NODE_FS.unlink,
    };
    const store = new DirStore(root, { fs });
    await store.put('x/key', 'first');
    readOnly = true;
    await assert.rejects(store.put('x/key', 'second'));
    assert.equal(walk(root).filter((name) => name.includes('.tmp-')).length, 1);
    readOnly = false;
    await store.put('x/key', 'third');
    assert.deepEqual(walk(root).sort(), ['x/', 'x/key']);
    assert.equal(await store.get('x/key'), 'third');
  });

  it('falls back to an in-place rewrite when rename fails with EXDEV', async () => {
    const root = tempRoot();
    let renames = 0;
    const fs = {
      ...NODE_FS,
      rename: async () => {
        renames++;
        throw Object.assign(new Error('cross-device link not permitted'), { code: 'EXDEV' });
      },
    };
    const store = new DirStore(root, { fs });
    await store.put('x/key', 'first');
    await store.put('x/key', 'second');
    assert.equal(renames, 2);
    assert.equal(await store.get('x/key'), 'second');
    assert.equal(statSync(join(root, 'x/key')).mode & 0o777, 0o600);
    assert.deepEqual(walk(root).sort(), ['x/', 'x/key']);
  });

  it('reports a full device as STORE_FULL, keeping the old value and no temp file', async () => {
    const root = tempRoot();
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    const open = (async (path: string, flags: string, mode?: number) => {
      const handle = await NODE_FS.open(path, flags, mode);
      if (flags !== 'wx') return handle;
      // The device fills mid-write: some bytes land in the temp file, then ENOSPC.
      return Object.assign(Object.create(handle), {
        writeFile: async (data: Uint8Array) => {
          await handle.write(data.subarray(0, 2));
          throw full;
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      });
    }) as typeof NODE_FS.open;
    await new DirStore(root).put('x/key', 'old');
    const store = new DirStore(root, { fs: { ...NODE_FS, open } });
    await assert.rejects(store.put('x/key', 'new value'), (err: unknown) => {
      const e = err as { code: string; key: string; cause: unknown };
      assert.equal(e.code, 'STORE_FULL');
      assert.equal(e.key, 'x/key');
      assert.equal(e.cause, full);
      return true;
    });
    assert.equal(await store.get('x/key'), 'old');
    assert.deepEqual(walk(root).sort(), ['x/', 'x/key']);
  });

  it("reports a read-only mount's EROFS, not the ENOENT Node's recursive mkdir answers", async () => {
    const root = tempRoot();
    const errno = (code: string) => Object.assign(new Error(code), { code });
    let attempts = 0;
    const mkdir = (async (path: string, options?: { recursive?: boolean }) => {
      if (options?.recursive) {
        attempts++;
        throw errno('ENOENT');
      }
      if (path.startsWith(root)) throw errno('EROFS');
      return NODE_FS.mkdir(path, options);
    }) as typeof NODE_FS.mkdir;
    const store = new DirStore(root, { fs: { ...NODE_FS, mkdir } });
    await assert.rejects(store.put('x/key', 'v'), (err: unknown) => {
      const e = err as { code: string; cause: { code: string } };
      assert.equal(e.code, 'STORE_IO');
      assert.equal(e.cause.code, 'EROFS');
      return true;
    });
    assert.equal(attempts, 1, 'a refusal is not retried as a concurrent delete');
  });

  it('wraps unexpected file system errors as STORE_IO with the key and cause', async () => {
    const root = tempRoot();
    const failure = Object.assign(new Error('disk on fire'), { code: 'EIO' });
    const fs = {
      ...NODE_FS,
      readFile: async () => {
        throw failure;
      },
    };
    const store = new DirStore(root, { fs });
    await assert.rejects(store.get('k'), (err: unknown) => {
      const e = err as { code: string; key: string; cause: unknown };
      assert.equal(e.code, 'STORE_IO');
      assert.equal(e.key, 'k');
      assert.equal(e.cause, failure);
      return true;
    });
  });
});

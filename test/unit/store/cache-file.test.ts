// The cache entry files every mhl cache shares: where they live for a given environment, and
// that only an intact entry this user alone could have written is ever read back.
import assert from 'node:assert/strict';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  cacheRoot,
  readCacheEntry,
  removeCacheEntry,
  writeCacheEntry,
} from '../../../src/store/index.js';

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-cache-file-'));
  temps.push(dir);
  return dir;
}

describe('cacheRoot', () => {
  it('takes MHL_CACHE_DIR, then an absolute XDG_CACHE_HOME, then ~/.cache', () => {
    assert.equal(cacheRoot({ MHL_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x' }), '/c');
    assert.equal(cacheRoot({ XDG_CACHE_HOME: '/x' }), '/x/mhl');
    assert.equal(cacheRoot({ XDG_CACHE_HOME: 'relative' }), join(homedir(), '.cache', 'mhl'));
    assert.equal(cacheRoot({}), join(homedir(), '.cache', 'mhl'));
  });

  it('is off with MHL_NO_CACHE set to anything but 0 or nothing', () => {
    assert.equal(cacheRoot({ MHL_NO_CACHE: '1', MHL_CACHE_DIR: '/c' }), undefined);
    assert.equal(cacheRoot({ MHL_NO_CACHE: 'yes' }), undefined);
    assert.equal(cacheRoot({ MHL_NO_CACHE: '0', MHL_CACHE_DIR: '/c' }), '/c');
    assert.equal(cacheRoot({ MHL_NO_CACHE: '', MHL_CACHE_DIR: '/c' }), '/c');
  });
});

describe('cache entries', () => {
  it('reads back what was written, and nothing for a missing entry', () => {
    const dir = join(temp(), 'entries');
    assert.equal(writeCacheEntry(dir, 'a.bin', Buffer.from('payload')), true);
    assert.equal(readCacheEntry(dir, 'a.bin')?.toString(), 'payload');
    assert.equal(readCacheEntry(dir, 'b.bin'), undefined);
    assert.deepEqual(readdirSync(dir), ['a.bin'], 'no temp file is left');
  });

  it('removes an entry, and reports false when there is none', () => {
    const dir = join(temp(), 'cache');
    assert.equal(writeCacheEntry(dir, 'e.bin', Buffer.from('x')), true);
    assert.equal(removeCacheEntry(dir, 'e.bin'), true);
    assert.equal(readCacheEntry(dir, 'e.bin'), undefined);
    assert.equal(removeCacheEntry(dir, 'e.bin'), false);
    assert.equal(removeCacheEntry(join(dir, 'nowhere'), 'e.bin'), false);
  });

  it('refuses a torn entry, a foreign file and a symlink', () => {
    const dir = temp();
    writeCacheEntry(dir, 'a.bin', Buffer.from('payload'));
    const bytes = readFileSync(join(dir, 'a.bin'));
    writeFileSync(join(dir, 'torn.bin'), bytes.subarray(0, bytes.length - 1));
    assert.equal(readCacheEntry(dir, 'torn.bin'), undefined);
    writeFileSync(join(dir, 'foreign.bin'), 'x'.repeat(64));
    assert.equal(readCacheEntry(dir, 'foreign.bin'), undefined);
    symlinkSync(join(dir, 'a.bin'), join(dir, 'link.bin'));
    assert.equal(readCacheEntry(dir, 'link.bin'), undefined);
  });

  it('keeps only the newest entries of a folder', () => {
    const dir = temp();
    for (let i = 0; i < 5; i++) {
      writeCacheEntry(dir, `e${i}.bin`, Buffer.from(String(i)), 3);
      // Distinct ages without waiting: each older entry is dated back a minute more.
      const at = new Date(Date.now() - (5 - i) * 60_000);
      utimesSync(join(dir, `e${i}.bin`), at, at);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['e2.bin', 'e3.bin', 'e4.bin']);
  });
});

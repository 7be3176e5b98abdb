/**
 * The start-up write probe of a state directory: it creates the directory (0700), leaves
 * nothing behind, and says why a directory cannot be written. A read-only mount and a full
 * device are tested on a real tmpfs in test/e2e/faults.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { probeWritable } from '../../../src/store/index.js';

const base = mkdtempSync(join(tmpdir(), 'mhl-probe-'));
after(() => rmSync(base, { recursive: true, force: true }));

describe('probeWritable', () => {
  it('creates a missing directory and its parents, and leaves it empty', () => {
    const dir = join(base, 'a', 'b', '.mhl');
    assert.equal(probeWritable(dir), undefined);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(dir), []);
    assert.equal(probeWritable(dir), undefined, 'an existing directory is fine too');
  });

  it('names the errno and the reason when a file is in the way', () => {
    const file = join(base, 'file');
    writeFileSync(file, '');
    assert.deepEqual(probeWritable(join(file, '.mhl')), {
      code: 'ENOTDIR',
      reason: 'a part of the path is not a directory',
    });
  });
});

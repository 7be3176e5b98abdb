/**
 * The release digest against an independent computation: SHA-256 of the RFC 8785 JSON of
 * `[{path, sha256}]` over the whole path list sorted by UTF-8 bytes (docs/engine.md, "Release
 * layout"), on names where a folder walk's per-folder order differs from that (`a/y.md` and
 * `a-b/x.md`: `-` is 0x2d, `/` is 0x2f).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readReleaseFiles } from '../../../../src/surfaces/engine/release-files.js';

const sha = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

describe('readReleaseFiles digest', () => {
  const root = mkdtempSync(join(tmpdir(), 'mhl-release-files-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('digests the listing sorted by whole path, not in walk order', () => {
    const files: Record<string, string> = {
      'a/y.md': 'y\n',
      'a-b/x.md': 'x\n',
      'a.md': 'dot\n',
      'b/c/d.md': 'd\n',
      'b/c-d.md': 'cd\n',
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    // Independent: byte-order sort of ASCII paths is plain code-unit order; the keys `path` and
    // `sha256` are already in RFC 8785 order, and these strings need no escaping.
    const paths = Object.keys(files).sort();
    assert.deepEqual(paths, ['a-b/x.md', 'a.md', 'a/y.md', 'b/c-d.md', 'b/c/d.md']);
    const listing = paths.map((p) => `{"path":"${p}","sha256":"${sha(files[p] as string)}"}`);
    const expected = sha(`[${listing.join(',')}]`);
    const read = readReleaseFiles(root);
    assert.ok(read.ok);
    assert.equal(read.digest, expected);
  });
});

// `findDeclaredStore` reads the folder's `.mh` files, or the texts the catalog load has just read
// of them (`sources`), so the server scans the bytes it checked rather than reading them again.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findDeclaredStore } from '../../../src/server/store-declaration.js';

const DECLARED = 'extension store State { dsn: "postgres://mhl@127.0.0.1:5432/test" }\n';
const PLAIN = 'pipeline Echo {\n  input text: string\n}\n';

function folder(text: string): { root: string; file: string } {
  const root = mkdtempSync(join(tmpdir(), 'mhl-store-decl-'));
  const file = join(root, 'flows.mh');
  writeFileSync(file, text);
  return { root, file };
}

describe('findDeclaredStore', () => {
  it('reads the files on disk when it is given no sources', () => {
    const { root } = folder(DECLARED);
    const found = findDeclaredStore(root, {});
    assert.equal(found.kind, 'store');
    assert.equal(findDeclaredStore(folder(PLAIN).root, {}).kind, 'none');
  });

  it('scans the texts the catalog load read instead of the disk', () => {
    // The disk says one thing, the sources another: the sources win both ways.
    const declaredOnDisk = folder(DECLARED);
    const none = findDeclaredStore(
      declaredOnDisk.root,
      {},
      {
        files: [declaredOnDisk.file],
        texts: [PLAIN],
      },
    );
    assert.equal(none.kind, 'none');
    const plainOnDisk = folder(PLAIN);
    const store = findDeclaredStore(
      plainOnDisk.root,
      {},
      {
        files: [plainOnDisk.file],
        texts: [DECLARED],
      },
    );
    assert.equal(store.kind, 'store');
  });
});

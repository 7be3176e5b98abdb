import assert from 'node:assert/strict';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  listResources,
  loadCatalog,
  loadPackCatalog,
  readResource,
} from '../../../src/catalog/index.js';
import {
  collectPackFiles,
  comparePackPaths,
  encodePack,
  MAX_PACK_BYTES,
  PACK_ERROR_CODES,
  PackError,
  packHost,
  readPackFile,
} from '../../../src/pack/index.js';

const FIXTURE = resolve('test/fixtures/pack');
const KEY = Buffer.alloc(32, 5);

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-pack-unit-'));
  temps.push(dir);
  return dir;
}

/** A temporary folder holding `files` (relative path → text). */
function folder(files: Record<string, string>): string {
  const dir = temp();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof PackError, String(e));
    return e.code;
  }
  assert.fail('expected a PackError');
}

describe('collectPackFiles', () => {
  it('packs every non-hidden file, sorted by the bytes of its path', () => {
    const dir = folder({
      'b.mh': 'b',
      'a/z.txt': 'z',
      'Z.md': 'Z',
      'é.txt': 'e',
      'node_modules/m.txt': 'm',
      '.env': 'SECRET=1',
      '.drafts/hidden.mh': 'h',
      'a/.cache/x': 'x',
    });
    const { entries, skipped } = collectPackFiles(dir);
    const paths = entries.map((e) => e.path);
    assert.deepEqual(paths, ['Z.md', 'a/z.txt', 'b.mh', 'node_modules/m.txt', 'é.txt']);
    assert.deepEqual([...paths].sort(comparePackPaths), paths);
    assert.equal(Buffer.from(entries[0]?.content ?? []).toString(), 'Z');
    assert.deepEqual(skipped, []);
  });

  it('follows symlinks to files in the folder, reports links out of it, symlinked folders and broken links, skips the output', () => {
    const dir = folder({ 'real.mh': 'r', 'sub/x.txt': 'x', 'out.dmpk': 'old pack' });
    const outside = folder({ 'shared.txt': 'shared' });
    symlinkSync(join(dir, 'sub', 'x.txt'), join(dir, 'linked.txt'));
    symlinkSync(join(outside, 'shared.txt'), join(dir, 'escapes.txt'));
    symlinkSync(outside, join(dir, 'linked-dir'));
    symlinkSync(join(dir, 'missing'), join(dir, 'broken'));
    const { entries, skipped } = collectPackFiles(dir, join(dir, 'out.dmpk'));
    assert.deepEqual(
      entries.map((e) => [e.path, Buffer.from(e.content).toString()]),
      [
        ['linked.txt', 'x'],
        ['real.mh', 'r'],
        ['sub/x.txt', 'x'],
      ],
    );
    assert.deepEqual(skipped.map((s) => s.path).sort(), ['broken', 'escapes.txt', 'linked-dir']);
    const escaped = skipped.find((s) => s.path === 'escapes.txt');
    assert.match(escaped?.reason ?? '', /out of the folder/);
  });

  it('refuses a folder that does not exist, and a name a pack cannot carry', () => {
    assert.equal(
      codeOf(() => collectPackFiles(join(temp(), 'nope'))),
      PACK_ERROR_CODES.UNREADABLE,
    );
    const dir = folder({ 'line\nbreak.txt': 'x' });
    assert.equal(
      codeOf(() => collectPackFiles(dir)),
      PACK_ERROR_CODES.BAD_PATH,
    );
  });
});

describe('packHost', () => {
  it('serves only the pack: a file that exists on disk under the root is not there', () => {
    const dir = folder({ 'on-disk.mh': 'disk' });
    const host = packHost(dir, [{ path: 'in-pack.mh', content: Buffer.from('pack') }]);
    assert.equal(host.readText(join(dir, 'in-pack.mh')), 'pack');
    assert.equal(host.readText(join(dir, 'on-disk.mh')), undefined);
    assert.equal(host.readText('/etc/hostname'), undefined);
  });
});

describe('loadPackCatalog', () => {
  it('serves a packed folder after the folder is gone, every file read from memory', () => {
    const dir = temp();
    cpSync(FIXTURE, dir, { recursive: true });
    const pack = encodePack(collectPackFiles(dir).entries, KEY);
    rmSync(dir, { recursive: true });
    const loaded = loadPackCatalog(pack, KEY, dir);
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.problems));
    assert.equal(loaded.catalog.source, 'pack');
    assert.equal(loaded.catalog.root, dir);
    assert.deepEqual([...loaded.catalog.workflows.keys()], ['AskAgent', 'EnvDump', 'EnvRead']);
    const ask = loaded.catalog.workflows.get('AskAgent');
    assert.equal(ask?.file, join(dir, 'agent.mh'));
    const assets = [...(ask?.program.root.assets.values() ?? [])];
    assert.deepEqual(assets.map((a) => a.path).sort(), [
      join(dir, 'lib/answer.schema.json'),
      join(dir, 'lib/ask.prompt.md'),
      join(dir, 'lib/terse.skill.md'),
    ]);
  });

  it('reports workflow problems as a load does, and serves what loadCatalog would', () => {
    const broken = encodePack([{ path: 'a.mh', content: Buffer.from('pipeline {') }], KEY);
    const result = loadPackCatalog(broken, KEY, '/srv/w');
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.problems[0]?.code, 'INVALID_SOURCE');
    const skipped = encodePack(
      [
        { path: 'node_modules/x.mh', content: Buffer.from('pipeline X { step S { log("x") } }') },
        { path: 'y.mh', content: Buffer.from('pipeline Y { step S { log("y") } }') },
      ],
      KEY,
    );
    const served = loadPackCatalog(skipped, KEY, '/srv/w');
    assert.deepEqual(served.ok && [...served.catalog.workflows.keys()], ['Y']);
  });

  it('finds no file outside the pack, so an import leaving the folder fails to load', () => {
    const outer = folder({
      'lib.mh': 'export tool T {\n  f() -> 1\n}\n',
      'w/a.mh': 'import { T } from "../lib.mh"\npipeline A {\n  step S { log(T.f()) }\n}\n',
    });
    const dir = join(outer, 'w');
    assert.equal(loadCatalog(dir).ok, true, 'the folder itself loads from disk');
    const loaded = loadPackCatalog(encodePack(collectPackFiles(dir).entries, KEY), KEY, dir);
    assert.equal(loaded.ok, false);
    assert.deepEqual(!loaded.ok && loaded.problems.map((p) => p.code), ['INVALID_SOURCE']);
    assert.match(!loaded.ok ? (loaded.problems[0]?.message ?? '') : '', /lib\.mh/);
  });
});

describe('readPackFile', () => {
  it('reads a pack whole', () => {
    const dir = temp();
    const bytes = encodePack([], KEY);
    writeFileSync(join(dir, 'w.dmpk'), bytes);
    assert.deepEqual(readPackFile(join(dir, 'w.dmpk')), bytes);
  });

  it('refuses a missing file, a folder, and a file over the size limit before reading it', () => {
    const dir = temp();
    assert.equal(
      codeOf(() => readPackFile(join(dir, 'none'))),
      PACK_ERROR_CODES.UNREADABLE,
    );
    assert.equal(
      codeOf(() => readPackFile(dir)),
      PACK_ERROR_CODES.UNREADABLE,
    );
    const huge = join(dir, 'huge.dmpk');
    writeFileSync(huge, '');
    truncateSync(huge, MAX_PACK_BYTES + 1);
    assert.equal(
      codeOf(() => readPackFile(huge)),
      PACK_ERROR_CODES.TOO_LARGE,
    );
  });
});

describe('a catalog served from a pack', () => {
  it('keeps the workflow sources off the wire: no source resources, no source in manifests', () => {
    const { entries } = collectPackFiles(FIXTURE);
    const packed = loadPackCatalog(encodePack(entries, KEY), KEY, FIXTURE);
    const fromDisk = loadCatalog(FIXTURE);
    assert.ok(packed.ok && fromDisk.ok);
    const names = [...packed.catalog.workflows.keys()];
    assert.ok(names.length > 0);
    for (const name of names) {
      assert.equal(readResource(packed.catalog, `mhl://workflow/${name}/source`), undefined);
      assert.ok(readResource(fromDisk.catalog, `mhl://workflow/${name}/source`));
      const manifest = JSON.parse(
        readResource(packed.catalog, `mhl://workflow/${name}`)?.contents[0]?.text ?? '{}',
      ) as Record<string, unknown>;
      assert.equal(manifest['name'], name);
      assert.equal(manifest['source'], undefined);
    }
    assert.deepEqual(
      listResources(packed.catalog).map((r) => r.uri),
      names.map((n) => `mhl://workflow/${n}`),
    );
  });
});

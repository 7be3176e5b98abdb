// The catalog cache on real folders and a real cache directory: a hit gives what a fresh load
// gives, any edit (a listed file, an imported file outside the folder, a prompt file, a file
// added or renamed) misses, and a corrupt, foreign or untrusted entry is ignored and rebuilt.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  type CacheFallback,
  type Catalog,
  type CatalogCacheOptions,
  type CatalogResult,
  loadCatalog,
  loadCatalogCached,
} from '../../../src/catalog/index.js';
import { checkerVersions } from '../../../src/lang/index.js';
import { rewriteCacheEntry } from '../../helpers/cache-entry.js';

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-catalog-cache-'));
  temps.push(dir);
  return dir;
}

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** A served folder `<base>/served` importing `<base>/outside/shared.mh`, with a prompt file. */
function project(): { base: string; served: string } {
  const base = temp();
  write(base, {
    'outside/shared.mh': 'export tool Helper {\n  greet(who: string) -> "hi ${who}"\n}\n',
    'served/build.mh': [
      'import { Helper } from "../outside/shared.mh"',
      'pipeline Build {',
      '  description: "Build the project"',
      '  input target: string',
      '  input verbose: bool = false',
      '  step Compile { log(Helper.greet(target)) }',
      '}',
      '',
    ].join('\n'),
    'served/jump.mh': [
      'workflow Jump {',
      '  input count: number = 1',
      '  step A { goto C }',
      '  step B { log("never") }',
      '  step C { log("c") }',
      '}',
      '',
    ].join('\n'),
    'served/talk.mh': 'prompt Summarize(topic: string) from "talk/summarize.prompt.md"\n',
    'served/talk/summarize.prompt.md':
      '---\ntitle: "Summarize"\ndescription: "A summary"\n---\n\nSummarize ${topic}.\n',
  });
  return { base, served: join(base, 'served') };
}

function options(dir: string, overrides: Partial<CatalogCacheOptions> = {}): CatalogCacheOptions {
  const dependencies = ['ajv@8.20.0', 'yaml@2.9.1'];
  return { dir, version: '0.1.0', buildId: 'build-1', dependencies, ...overrides };
}

function ok(result: CatalogResult): { catalog: Catalog; warnings: CatalogResult['warnings'] } {
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  return result;
}

/** Everything a catalog holds that can be compared, programs included. */
function shape(catalog: Catalog) {
  return {
    root: catalog.root,
    source: catalog.source,
    workflows: [...catalog.workflows.values()].map((w) => ({
      name: w.name,
      kind: w.kind,
      loop: w.loop,
      description: w.description,
      file: w.file,
      source: w.source,
      inputSchema: w.inputSchema,
      credentialSlots: w.credentialSlots,
      decl: w.decl,
      digest: w.definition.digest,
      programRoot: w.program.root.path,
      texts: [...w.program.texts.entries()],
      validated: [w.validate({}), w.validate({ target: 'x', count: 2 }), w.validate([])],
    })),
    prompts: [...catalog.prompts.values()].map((p) => ({
      name: p.name,
      title: p.title,
      description: p.description,
      decl: p.decl,
      module: p.module.path,
      program: p.program.root.path,
    })),
  };
}

function entries(cache: string): string[] {
  try {
    return readdirSync(cache).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
}

/**
 * Rewrites the one entry under `cache` as a writer with a bug could have: `edit` changes the
 * decoded entry, and the header's hash is made to match again, so only its content is wrong.
 */
function rewriteEntry(cache: string, edit: (entry: Record<string, unknown>) => void): void {
  const [name] = entries(cache);
  rewriteCacheEntry(join(cache, name as string), edit);
}

describe('loadCatalogCached', () => {
  it('writes an entry, then serves a hit equal to a fresh load, warnings included', () => {
    const { served } = project();
    const cache = join(temp(), 'catalogs');
    const first = loadCatalogCached(served, options(cache));
    assert.equal(first.cache, 'written');
    assert.equal(entries(cache).length, 1);
    const told: CacheFallback[] = [];
    const second = loadCatalogCached(served, options(cache, { onFallback: (f) => told.push(f) }));
    assert.equal(second.cache, 'hit');
    const fresh = ok(loadCatalog(served));
    const hit = ok(second.result);
    assert.ok(
      fresh.warnings.some((w) => w.code === 'UNREACHABLE'),
      'the fixture has a warning',
    );
    assert.deepEqual(hit.warnings, fresh.warnings);
    assert.deepEqual([...hit.catalog.workflows.keys()], ['Build', 'Jump']);
    assert.deepEqual([...hit.catalog.prompts.keys()], ['Summarize']);
    second.materialise();
    assert.deepEqual(shape(hit.catalog), shape(fresh.catalog));
    assert.deepEqual(told, [], 'the programs come from the entry’s texts, with no fallback');
    assert.equal(entries(cache).length, 1);
    assert.deepEqual(shape(ok(first.result).catalog), shape(fresh.catalog));
  });

  it('loads the programs on first use when materialise was never called', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    const hit = loadCatalogCached(served, options(cache));
    assert.equal(hit.cache, 'hit');
    const build = ok(hit.result).catalog.workflows.get('Build');
    assert.equal(build?.decl.name, 'Build');
    assert.equal(build?.program.root.path, join(served, 'build.mh'));
  });

  const edits: [string, (base: string, served: string) => void][] = [
    [
      'a listed file',
      (_, s) =>
        writeFileSync(
          join(s, 'jump.mh'),
          readFileSync(join(s, 'jump.mh'), 'utf8').replace('"c"', '"d"'),
        ),
    ],
    [
      'an imported file outside the folder',
      (b) =>
        writeFileSync(
          join(b, 'outside/shared.mh'),
          readFileSync(join(b, 'outside/shared.mh'), 'utf8').replace('hi', 'hello'),
        ),
    ],
    [
      'a prompt file',
      (_, s) =>
        writeFileSync(
          join(s, 'talk/summarize.prompt.md'),
          '---\ntitle: "Sum"\n---\n\nSummarize ${topic}.\n',
        ),
    ],
    [
      'a file added',
      (_, s) => writeFileSync(join(s, 'more.mh'), 'pipeline More { step S { log("m") } }\n'),
    ],
    ['a file renamed', (_, s) => renameSync(join(s, 'jump.mh'), join(s, 'jumps.mh'))],
  ];
  for (const [what, edit] of edits) {
    it(`misses after an edit of ${what}, and the rebuilt catalog is the fresh one`, () => {
      const { base, served } = project();
      const cache = temp();
      assert.equal(loadCatalogCached(served, options(cache)).cache, 'written');
      edit(base, served);
      const again = loadCatalogCached(served, options(cache));
      assert.equal(again.cache, 'written');
      assert.deepEqual(shape(ok(again.result).catalog), shape(ok(loadCatalog(served)).catalog));
      assert.equal(loadCatalogCached(served, options(cache)).cache, 'hit');
    });
  }

  it('misses for another mhl version or build', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    assert.equal(loadCatalogCached(served, options(cache, { version: '0.2.0' })).cache, 'written');
    assert.equal(
      loadCatalogCached(served, options(cache, { buildId: 'build-2' })).cache,
      'written',
    );
  });

  it('misses when a package the check runs changes version, not only mhl', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    const upgraded = options(cache, { dependencies: ['ajv@8.20.1', 'yaml@2.9.1'] });
    assert.equal(loadCatalogCached(served, upgraded).cache, 'written');
    const added = options(cache, { dependencies: ['ajv@8.20.0', 'fast-uri@3.1.9', 'yaml@2.9.1'] });
    assert.equal(loadCatalogCached(served, added).cache, 'written');
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'hit');
    assert.equal(loadCatalogCached(served, upgraded).cache, 'hit');
  });

  it('serves credential slots from the entry, so tools/list needs no program', () => {
    const base = temp();
    write(base, {
      'keys.mh': 'pipeline Keys {\n  step S { log(vault("gh", kind: "token")) }\n}\n',
    });
    const cache = temp();
    const first = loadCatalogCached(base, options(cache));
    const slots = [{ name: 'gh', kinds: ['token'] }];
    assert.deepEqual(ok(first.result).catalog.workflows.get('Keys')?.credentialSlots, slots);
    // An entry whose slots differ from the program's: a hit shows the entry's until its
    // programs are loaded, which proves where they came from; loading them finds the mismatch.
    rewriteEntry(cache, (entry) => {
      const [keys] = entry['workflows'] as Record<string, unknown>[];
      (keys as Record<string, unknown>)['credentialSlots'] = [{ name: 'other', kinds: [] }];
    });
    const told: CacheFallback[] = [];
    const hit = loadCatalogCached(base, options(cache, { onFallback: (f) => told.push(f) }));
    assert.equal(hit.cache, 'hit');
    const keys = ok(hit.result).catalog.workflows.get('Keys');
    assert.deepEqual(keys?.credentialSlots, [{ name: 'other', kinds: [] }]);
    assert.equal(told.length, 0, 'no program was loaded for the slots');
    hit.materialise();
    assert.deepEqual(
      told.map((f) => f.reason),
      ['mismatch'],
    );
  });

  it('falls back to a fresh load when the programs do not match the entry, and drops it', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    rewriteEntry(cache, (entry) => {
      entry['warnings'] = [];
    });
    const [name] = entries(cache);
    const told: CacheFallback[] = [];
    const hit = loadCatalogCached(served, options(cache, { onFallback: (f) => told.push(f) }));
    assert.equal(hit.cache, 'hit');
    hit.materialise();
    hit.materialise();
    assert.deepEqual(
      told.map((f) => [f.reason, f.result.ok, f.entry]),
      [['mismatch', true, join(cache, name as string)]],
    );
    assert.deepEqual(shape(ok(hit.result).catalog), shape(ok(loadCatalog(served)).catalog));
    assert.deepEqual(entries(cache), [], 'the entry is removed');
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'written');
  });

  it('reports a fresh load’s problems once when the cached programs no longer load', () => {
    const { base, served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    const shared = join(base, 'outside/shared.mh');
    const broken = 'export tool Helper {\n  greet(who: string) -> nope\n}\n';
    writeFileSync(shared, broken);
    rewriteEntry(cache, (entry) => {
      entry['reads'] = (entry['reads'] as [string, string][]).map(([path, hash]) => [
        path,
        path === shared ? createHash('sha256').update(broken).digest('hex') : hash,
      ]);
    });
    const told: CacheFallback[] = [];
    const hit = loadCatalogCached(served, options(cache, { onFallback: (f) => told.push(f) }));
    assert.equal(hit.cache, 'hit');
    hit.materialise();
    const build = ok(hit.result).catalog.workflows.get('Build');
    assert.throws(() => build?.program);
    assert.throws(() => build?.definition);
    assert.deepEqual(
      told.map((f) => f.reason),
      ['problems'],
    );
    assert.deepEqual(told[0]?.result, loadCatalog(served));
    assert.deepEqual(entries(cache), []);
  });

  it('reads the installed versions of Ajv, yaml and their dependencies, once', () => {
    const versions = checkerVersions();
    assert.ok(versions !== undefined);
    const require = createRequire(import.meta.url);
    for (const name of ['ajv', 'yaml', 'fast-uri']) {
      const { version } = require(`${name}/package.json`) as { version: string };
      assert.ok(versions.includes(`${name}@${version}`), `${name}@${version} in ${versions}`);
    }
    assert.equal(checkerVersions(), versions);
  });

  it('ignores a corrupt entry and rebuilds it', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    const [name] = entries(cache);
    const path = join(cache, name as string);
    const bytes = readFileSync(path);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] as number) ^ 0xff;
    writeFileSync(path, bytes, { mode: 0o600 });
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'written');
    writeFileSync(path, bytes.subarray(0, 20), { mode: 0o600 });
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'written');
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'hit');
  });

  it('ignores a foreign entry: another folder’s, under this folder’s name', () => {
    const one = project();
    const two = project();
    const cache = temp();
    loadCatalogCached(one.served, options(cache));
    const [mine] = entries(cache);
    const other = temp();
    loadCatalogCached(two.served, options(other));
    const [theirs] = entries(other);
    writeFileSync(join(cache, mine as string), readFileSync(join(other, theirs as string)), {
      mode: 0o600,
    });
    const again = loadCatalogCached(one.served, options(cache));
    assert.equal(again.cache, 'written');
    assert.equal(ok(again.result).catalog.root, one.served);
  });

  it('ignores an entry others may write', () => {
    const { served } = project();
    const cache = temp();
    loadCatalogCached(served, options(cache));
    const [name] = entries(cache);
    chmodSync(join(cache, name as string), 0o666);
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'written');
    chmodSync(cache, 0o777);
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'unwritten');
  });

  it('loads as usual when the cache cannot be written, and leaves nothing behind', () => {
    const { served } = project();
    const blocker = join(temp(), 'a-file');
    writeFileSync(blocker, 'not a folder');
    const cache = join(blocker, 'catalogs');
    const loaded = loadCatalogCached(served, options(cache));
    assert.equal(loaded.cache, 'unwritten');
    assert.deepEqual(shape(ok(loaded.result).catalog), shape(ok(loadCatalog(served)).catalog));
  });

  it('never caches a catalog JSON cannot carry exactly (a default of -0)', () => {
    const served = temp();
    write(served, {
      'zero.mh': 'pipeline Zero {\n  input x: number = -0\n  step S { log("x") }\n}\n',
    });
    const cache = temp();
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'unwritten');
    assert.deepEqual(entries(cache), []);
    assert.equal(loadCatalogCached(served, options(cache)).cache, 'unwritten');
  });

  it('never caches a folder that does not load, so its diagnostics are always fresh', () => {
    const { served } = project();
    writeFileSync(join(served, 'bad.mh'), 'pipeline Bad { step S { log(nope) } }\n');
    const cache = temp();
    const loaded = loadCatalogCached(served, options(cache));
    assert.equal(loaded.cache, 'bypassed');
    assert.equal(loaded.result.ok, false);
    assert.deepEqual(loaded.result, loadCatalog(served));
    assert.deepEqual(entries(cache), []);
    const missing = loadCatalogCached(join(served, 'nope'), options(cache));
    assert.equal(missing.cache, 'bypassed');
    assert.deepEqual(missing.result, loadCatalog(join(served, 'nope')));
  });
});

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildCatalog, type CatalogResult, loadCatalog } from '../../../src/catalog/index.js';
import { memoryHost } from '../../../src/lang/index.js';

const FIXTURE = resolve('test/fixtures/catalog/basic');

/** Builds a catalog from in-memory files under `/pack`, as a pack would. */
function fromMemory(files: Record<string, string>): CatalogResult {
  const host = memoryHost(new Map(Object.entries(files)));
  return buildCatalog({ root: '/pack', files: Object.keys(files), host, source: 'pack' });
}

/** The problems of a failed load as `code files…` rows. */
function problems(result: CatalogResult): string[] {
  assert.equal(result.ok, false);
  if (result.ok) return [];
  return result.problems.map((p) => [p.code, ...p.files].join(' '));
}

const temps: string[] = [];
after(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** A temporary folder holding `files` (relative path → text). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-catalog-'));
  temps.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const PIPELINE = (name: string) => `pipeline ${name} { step S { log("x") } }\n`;

describe('loadCatalog', () => {
  const result = loadCatalog('test/fixtures/catalog/basic');
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  const { catalog } = result;

  it('registers every pipeline and workflow once, sorted by name', () => {
    assert.deepEqual([...catalog.workflows.keys()], ['Build', 'Cycle', 'Quiet', 'Shared', 'Types']);
    assert.equal(catalog.root, FIXTURE);
    assert.equal(catalog.source, 'dir');
  });

  it('registers an imported file’s workflow by its own file, rooted there', () => {
    const shared = catalog.workflows.get('Shared');
    const build = catalog.workflows.get('Build');
    assert.equal(shared?.file, join(FIXTURE, 'lib/shared.mh'));
    assert.equal(shared?.program.root.path, join(FIXTURE, 'lib/shared.mh'));
    assert.equal(build?.file, join(FIXTURE, 'build.mh'));
    assert.equal(build?.program.root.path, join(FIXTURE, 'build.mh'));
    assert.match(build?.source ?? '', /^\/\/ Imports a tool/);
  });

  it('shares one module graph across all files', () => {
    const build = catalog.workflows.get('Build');
    const shared = catalog.workflows.get('Shared');
    const imported = build?.program.namespace.modules[1];
    assert.equal(imported, shared?.program.root);
    assert.equal(build?.program.texts, shared?.program.texts);
  });

  it('skips partial fragments and hidden folders', () => {
    assert.equal(catalog.workflows.has('Fragment'), false);
    assert.equal(catalog.workflows.has('Hidden'), false);
  });

  it('records kind, loop flag and declaration', () => {
    const cycle = catalog.workflows.get('Cycle');
    assert.equal(cycle?.kind, 'workflow');
    assert.equal(cycle?.loop, true);
    assert.equal(cycle?.decl.name, 'Cycle');
    assert.equal(catalog.workflows.get('Build')?.kind, 'pipeline');
  });

  it('freezes the catalog, its workflows and their schemas', () => {
    const build = catalog.workflows.get('Build');
    assert.ok(Object.isFrozen(catalog));
    assert.ok(Object.isFrozen(build));
    assert.ok(Object.isFrozen(build?.inputSchema));
    assert.ok(Object.isFrozen(build?.inputSchema['properties']));
  });

  it('skips node_modules', () => {
    const dir = folder({ 'a.mh': PIPELINE('A'), 'node_modules/pkg/b.mh': PIPELINE('B') });
    const loaded = loadCatalog(dir);
    assert.ok(loaded.ok);
    assert.deepEqual([...loaded.catalog.workflows.keys()], ['A']);
  });

  it('reports a folder without workflows', () => {
    assert.deepEqual(problems(loadCatalog(folder({}))), ['NO_WORKFLOWS']);
    const onlyTools = folder({ 'lib.mh': 'export tool T { f() -> 1 }\n' });
    assert.deepEqual(problems(loadCatalog(onlyTools)), ['NO_WORKFLOWS']);
  });

  it('says where it found no workflow', () => {
    const dir = folder({});
    const loaded = loadCatalog(dir);
    assert.ok(!loaded.ok);
    assert.equal(loaded.problems[0]?.message, `no pipeline or workflow declared under ${dir}`);
  });

  it('reports a missing folder', () => {
    assert.deepEqual(problems(loadCatalog(join(folder({}), 'nope'))), ['NOT_FOUND']);
  });

  it('reports a name declared in two files, naming both', () => {
    const dir = folder({ 'a.mh': PIPELINE('Same'), 'sub/b.mh': PIPELINE('Same') });
    const loaded = loadCatalog(dir);
    assert.deepEqual(problems(loaded), [`INVALID_SOURCE ${join(dir, 'sub/b.mh')}`]);
    assert.ok(!loaded.ok);
    const [problem] = loaded.problems;
    assert.equal(problem?.diagnostic?.code, 'DUPLICATE');
    assert.equal(problem?.diagnostic?.span.file, join(dir, 'sub/b.mh'));
    assert.match(problem?.message ?? '', /already declared at \.\.\/a\.mh:1:10/);
  });

  it('refuses a folder with a lint error, carrying the diagnostic', () => {
    const result = fromMemory({
      '/pack/good.mh': PIPELINE('Good'),
      '/pack/bad.mh': 'pipeline Bad {\n  step S { nope() }\n}\n',
    });
    assert.deepEqual(problems(result), ['INVALID_SOURCE /pack/bad.mh']);
    assert.ok(!result.ok);
    const d = result.problems[0]?.diagnostic;
    assert.equal(d?.code, 'UNKNOWN_NAME');
    assert.deepEqual([d?.span.line, d?.span.col], [2, 12]);
    assert.equal(result.texts.get('/pack/bad.mh'), 'pipeline Bad {\n  step S { nope() }\n}\n');
  });

  it('reports a file the host cannot read', () => {
    const host = memoryHost(new Map([['/pack/a.mh', PIPELINE('A')]]));
    const files = ['/pack/a.mh', '/pack/gone.mh'];
    const result = buildCatalog({ root: '/pack', files, host, source: 'pack' });
    assert.deepEqual(problems(result), ['UNREADABLE /pack/gone.mh']);
  });

  it('keeps warnings and still builds', () => {
    const result = fromMemory({
      '/pack/w.mh':
        'workflow W {\n  step A { goto C }\n  step B { log("b") }\n  step C { log("c") }\n}\n',
    });
    assert.ok(result.ok);
    assert.deepEqual(
      result.warnings.map((w) => `${w.code} ${w.span.line}`),
      ['UNREACHABLE 3'],
    );
    assert.equal(result.catalog.source, 'pack');
  });

  it('builds from a file list and host, resolving relative paths against the root', () => {
    const host = memoryHost(new Map([['/pack/x/p.mh', PIPELINE('P')]]));
    const result = buildCatalog({ root: '/pack', files: ['x/p.mh'], host, source: 'pack' });
    assert.ok(result.ok);
    assert.equal(result.catalog.workflows.get('P')?.file, '/pack/x/p.mh');
  });
});

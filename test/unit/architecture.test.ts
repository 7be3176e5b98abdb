/**
 * The shape of src/ (design.md §1–2, issue 10 §2), checked on every import the source makes:
 * imports point down the layers, a layer is entered through its index.ts (or a declared lazy
 * face), each layer's index lists its exports by name, and no file grows past 500 lines
 * without saying why on its first line. Every exception is listed below with its reason; an
 * exception that no longer applies fails too, so the list cannot rot.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

/**
 * Highest first: a layer may import only layers after it. `log` is usable by every layer and
 * imports none. `server` is where `createServer` lives (design.md §1).
 */
const ORDER = [
  'cli',
  // The managed per-user service (mhl service): talks to a server only over loopback HTTP.
  'service',
  // The language server: editor features over lang, used only by `mhl lsp`.
  'lsp',
  'server',
  // The local vault and its setup page: the server and the CLI use it; it serves HTTP rows.
  'secrets',
  'transport',
  'protocol',
  'surfaces',
  'runs',
  'runtime',
  'catalog',
  'pack',
  'lang',
  'store',
] as const;
const SHARED = new Set(['log']);
/** Layers nothing imports, so they need no index.ts. */
const ENTRY_LAYERS = new Set(['cli']);

/** Imports against the flow that the code still makes, `from -> to` by layer, with why. */
const UPWARD_EXCEPTIONS: Readonly<Record<string, string>> = {
  'surfaces -> protocol':
    'surfaces register their methods on the protocol Dispatcher and answer with its RpcError and ' +
    'RequestContext. The dispatcher reaches surfaces only through that registration (protocol ' +
    'imports nothing of surfaces), so calls flow protocol -> surfaces while the types point up; ' +
    'turning it round needs a Surface interface owned below protocol (createServer, src/server).',
  'surfaces -> transport':
    'a surface may contribute HTTP rows (Surface.routes: the runs page, the Agent Card and /a2a), ' +
    "typed by the route table's Route and reading bodies with the transport's shared body reader. The " +
    'transport reaches those rows only through the route table the server builds, so calls flow ' +
    'transport -> surfaces while these imports point up; only HTTP-only modules are imported.',
};

/**
 * Modules another layer may import directly instead of the layer's index: parts loaded lazily
 * (only for HTTP, or only by the commands that need them). The bundle splits by module, so
 * exporting them from the index would put them on every command's start-up path
 * (bench/serve-startup.bench.mjs).
 */
const LAZY_FACES: Readonly<Record<string, string>> = {
  'src/transport/http.ts': 'the HTTP transport: a stdio server never loads it',
  'src/transport/ops.ts': 'health, control and metrics endpoints: HTTP only',
  'src/transport/mcp-endpoint.ts': 'the /mcp rows of the route table: HTTP only',
  'src/transport/routes.ts': 'the HTTP route table: HTTP only',
  'src/transport/body.ts': 'the body budget every HTTP row that reads a body shares: HTTP only',
  'src/server/serve-http.ts': 'serving over HTTP: mhl serve mcp imports it only with --http',
  'src/store/postgres.ts': 'the PostgreSQL store: only a server given one loads it (and pg)',
  'src/surfaces/a2a/index.ts':
    'the A2A surface: HTTP only, so mhl serve imports it only with --http and for serve a2a',
  'src/transport/respond.ts': 'the JSON and plain-text writers of HTTP rows: HTTP only',
  'src/transport/sse.ts': 'event streams of HTTP answers: HTTP only',
  'src/transport/html.ts':
    'HTML escaping of the server-rendered pages (setup page, runs page): HTTP only',
  'src/transport/mcp-post.ts':
    'the POST exchange, and how it reads the principal header: HTTP only',
  'src/transport/client-key.ts': 'who an HTTP request is counted as, for the quotas: HTTP only',
  'src/store/cache-file.ts':
    "the cache entries the launcher reads first: through the index it would load the stores' writer",
  'src/catalog/sources.ts':
    'the .mh file walk, for mhl lint and mhl run, which must not load the catalog validators',
};

const MAX_LINES = 500;
/** The first line of a file allowed past MAX_LINES: `// Over 500 lines: <why>`. */
const LONG_FILE = /^\/\/ Over 500 lines: \S.{9,}/;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

interface Import {
  /** Repository-relative, posix: `src/runtime/execute.ts`. */
  readonly file: string;
  /** The imported module, repository-relative with its `.ts` name. */
  readonly target: string;
  readonly line: number;
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every relative import (static, re-export, dynamic) of every file in src/. */
function imports(): Import[] {
  const found: Import[] = [];
  for (const path of sourceFiles(SRC)) {
    const text = readFileSync(path, 'utf8');
    const file = posix.normalize(relative(ROOT, path).split('\\').join('/'));
    for (const match of text.matchAll(SPECIFIER)) {
      const spec = match[1] ?? match[2];
      if (spec === undefined || !spec.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts');
      const line = text.slice(0, match.index).split('\n').length;
      found.push({ file, target, line });
    }
  }
  return found;
}

function layerOf(file: string): string {
  const layer = file.split('/')[1];
  assert.ok(layer !== undefined && file.split('/').length > 2, `${file} sits outside a layer`);
  return layer;
}

const ALL = imports();
const where = (i: Import) => `${i.file}:${i.line} imports ${i.target}`;

describe('architecture', () => {
  it('finds the imports it checks', () => {
    assert.ok(ALL.length > 300, `only ${ALL.length} imports found: is the parser broken?`);
    for (const i of ALL) assert.ok(existsSync(join(ROOT, i.target)), `${where(i)}: no such file`);
  });

  it('puts every file of src/ in a known layer', () => {
    const known = new Set<string>([...ORDER, ...SHARED]);
    for (const path of sourceFiles(SRC)) {
      const layer = layerOf(relative(ROOT, path).split('\\').join('/'));
      assert.ok(known.has(layer), `src/${layer} is not a layer of design.md §1`);
    }
  });

  it('imports only down the layers (log from anywhere)', () => {
    const rank = (layer: string) => ORDER.indexOf(layer as (typeof ORDER)[number]);
    const used = new Set<string>();
    const wrong: string[] = [];
    for (const i of ALL) {
      const from = layerOf(i.file);
      const to = layerOf(i.target);
      if (from === to || SHARED.has(to)) continue;
      if (SHARED.has(from)) {
        wrong.push(`${where(i)}: log imports no layer`);
        continue;
      }
      if (rank(from) < rank(to)) continue;
      const key = `${from} -> ${to}`;
      if (UPWARD_EXCEPTIONS[key] !== undefined) used.add(key);
      else wrong.push(`${where(i)}: ${from} is below ${to}`);
    }
    assert.deepEqual(wrong, []);
    for (const key of Object.keys(UPWARD_EXCEPTIONS))
      assert.ok(used.has(key), `exception "${key}" is no longer needed: remove it`);
  });

  it('enters another layer only through its index.ts or a declared lazy face', () => {
    const used = new Set<string>();
    const wrong: string[] = [];
    for (const i of ALL) {
      const to = layerOf(i.target);
      if (layerOf(i.file) === to) continue;
      if (i.target === `src/${to}/index.ts`) continue;
      if (LAZY_FACES[i.target] !== undefined) used.add(i.target);
      else wrong.push(`${where(i)}: import it from src/${to}/index.ts`);
    }
    assert.deepEqual(wrong, []);
    for (const face of Object.keys(LAZY_FACES))
      assert.ok(used.has(face), `lazy face ${face} is imported by no other layer: remove it`);
  });

  it('gives every imported layer an index.ts that names its exports', () => {
    for (const layer of [...ORDER, ...SHARED]) {
      const dir = join(SRC, layer);
      if (!existsSync(dir) || ENTRY_LAYERS.has(layer)) continue;
      const index = join(dir, 'index.ts');
      assert.ok(existsSync(index), `src/${layer} has no index.ts`);
      const text = readFileSync(index, 'utf8');
      assert.doesNotMatch(text, /export\s+\*/, `src/${layer}/index.ts: list exports by name`);
      assert.match(text, /^\/\*\*/, `src/${layer}/index.ts: start with a header comment`);
    }
  });

  it(`keeps files under ${MAX_LINES} lines, or says why on their first line`, () => {
    const wrong: string[] = [];
    for (const path of sourceFiles(SRC)) {
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      const file = relative(ROOT, path);
      if (lines > MAX_LINES && !LONG_FILE.test(text))
        wrong.push(`${file}: ${lines} lines; split it or start it with "// Over 500 lines: <why>"`);
      else if (lines <= MAX_LINES && LONG_FILE.test(text))
        wrong.push(`${file}: ${lines} lines; drop its "Over 500 lines" line`);
    }
    assert.deepEqual(wrong, []);
  });

  it('lists only existing modules as lazy faces', () => {
    for (const face of Object.keys(LAZY_FACES))
      assert.ok(existsSync(join(ROOT, face)), `${face} does not exist`);
    assert.ok(existsSync(dirname(SRC)));
  });
});

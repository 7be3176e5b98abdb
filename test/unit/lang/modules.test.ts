import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../src/lang/checker.js';
import { memoryHost } from '../../../src/lang/source-host.js';

/** Lints `/p/main.mh` with the given in-memory files; returns `file:line:col CODE message` rows. */
function lint(files: Record<string, string>, entry = '/p/main.mh'): string[] {
  const host = memoryHost(new Map(Object.entries(files)));
  const { diagnostics } = checkFiles([entry], host);
  return diagnostics.map(
    (d) => `${d.span.file.replace('/p/', '')}:${d.span.line}:${d.span.col} ${d.code} ${d.message}`,
  );
}

const PIPELINE = 'pipeline P { step S { log("x") } }';

describe('modules', () => {
  it('resolves imports relative to the importing file, in both keywords', () => {
    const rows = lint({
      '/p/main.mh': `use { Helper as h } from "lib/a.mh"\nimport { Other } from "lib/b.mh"\npipeline P { step S { h.go()\n Other.go() } }`,
      '/p/lib/a.mh': 'export tool Helper { go() -> 1 }',
      '/p/lib/b.mh': 'import { Helper } from "a.mh"\nexport tool Other { go() -> Helper.go() }',
    });
    assert.deepEqual(rows, []);
  });

  it('reports a missing file at the import path', () => {
    assert.deepEqual(lint({ '/p/main.mh': `import { A } from "nope.mh"\n${PIPELINE}` }), [
      'main.mh:1:19 IMPORT cannot find "nope.mh" (import paths are relative to main.mh)',
    ]);
  });

  it('reports an import cycle with its chain', () => {
    const rows = lint({
      '/p/main.mh': `import { A } from "a.mh"\n${PIPELINE}`,
      '/p/a.mh': 'import { B } from "b.mh"\nexport tool A { f() -> 1 }',
      '/p/b.mh': 'import { A } from "a.mh"\nexport tool B { f() -> 1 }',
    });
    assert.deepEqual(rows, [
      'b.mh:1:19 IMPORT_CYCLE import cycle: a.mh → b.mh → a.mh; move the shared declarations into a third file',
    ]);
  });

  it('refuses names that are not exported or not declared', () => {
    const rows = lint({
      '/p/main.mh': `import { Hidden, Missing } from "a.mh"\n${PIPELINE}`,
      '/p/a.mh': 'tool Hidden { f() -> 1 }',
    });
    assert.deepEqual(rows, [
      `main.mh:1:10 IMPORT 'Hidden' is not exported by "a.mh": add 'export' before its declaration`,
      `main.mh:1:18 IMPORT "a.mh" declares no 'Missing'`,
    ]);
  });

  it('lets a module use a name another file of its program imported (flat namespace)', () => {
    const rows = lint({
      '/p/main.mh':
        'import { Config as config } from "config.mh"\nimport { Worker } from "worker.mh"\npipeline P { step S { Worker.go() } }',
      '/p/config.mh': 'export tool Config { limit() -> 3 }',
      '/p/worker.mh': 'export tool Worker { go() -> config.limit() }',
    });
    assert.deepEqual(rows, []);
  });

  it('allows the same private name in two modules, each seeing its own', () => {
    const rows = lint({
      '/p/main.mh':
        'import { A } from "a.mh"\nimport { B } from "b.mh"\npipeline P { step S { A.f()\n B.f() } }',
      '/p/a.mh':
        'memory Store { type: "kv" store: "memory" }\nexport tool A { f() -> Store.get("k") }',
      '/p/b.mh':
        'memory Store { type: "json" path: "s.json" }\nexport tool B { f() -> Store.get("k") }',
    });
    assert.deepEqual(rows, []);
  });

  it('reports an alias that collides with a declaration', () => {
    const rows = lint({
      '/p/main.mh': `import { A as Local } from "a.mh"\ntool Local { f() -> 1 }\n${PIPELINE}`,
      '/p/a.mh': 'export tool A { f() -> 1 }',
    });
    assert.deepEqual(rows, [
      "main.mh:1:10 DUPLICATE import 'Local' is already declared at line 2:6",
    ]);
  });

  it('merges a whole file with a bare import', () => {
    const rows = lint({
      '/p/main.mh': 'import "parts.mh"\npipeline P { step S { Part.f() } }',
      '/p/parts.mh': 'tool Part { f() -> 1 }',
    });
    assert.deepEqual(rows, []);
  });
});

describe('assets', () => {
  it('checks prompt files: frontmatter and placeholders', () => {
    const rows = lint({
      '/p/main.mh': `prompt Ask(topic: string) from "ask.md"\n${PIPELINE}`,
      '/p/ask.md': '---\nversion: 2\n---\n\nExplain ${topic} and ${depth}.\nKeep \\${literal}.',
    });
    assert.deepEqual(rows, [
      "ask.md:5:22 ASSET prompt 'Ask' from \"ask.md\": ${depth} is not a parameter of prompt 'Ask' (write \\${ to keep it literal)",
    ]);
  });

  it('reports an unclosed or malformed frontmatter at its line', () => {
    const rows = lint({
      '/p/main.mh': `prompt A() from "a.md"\nprompt B() from "b.md"\n${PIPELINE}`,
      '/p/a.md': '---\nname: x\n',
      '/p/b.md': '\n---\njust words\n---\nbody',
    });
    assert.deepEqual(rows, [
      "a.md:1:1 ASSET prompt 'A' from \"a.md\": frontmatter opened with '---' is never closed: add a '---' line after it",
      'b.md:3:1 ASSET prompt \'B\' from "b.md": frontmatter line has no \'key: value\' form: "just words"',
    ]);
  });

  it('requires a skill file to name and describe itself', () => {
    const rows = lint({
      '/p/main.mh': `skill Tidy from "tidy.md"\n${PIPELINE}`,
      '/p/tidy.md': '---\nname: tidy\n---\nKeep it tidy.',
    });
    assert.deepEqual(rows, [
      "tidy.md:1:1 ASSET skill 'Tidy' from \"tidy.md\": the skill file's frontmatter needs a non-empty 'description'",
    ]);
  });

  it('requires schema files to be JSON Schema objects', () => {
    const rows = lint({
      '/p/main.mh': `schema A from "a.json"\nschema B from "b.json"\nschema C from "c.json"\nschema D from "d.json"\nschema E from "e.json"\n${PIPELINE}`,
      '/p/a.json': '{\n  "type": "object",\n  oops\n}',
      '/p/b.json': '[1, 2]',
      '/p/c.json': '{"type": "nonsense"}',
      '/p/d.json':
        '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "definitions": {}}',
      '/p/e.json': '{"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}',
    });
    assert.deepEqual(rows, [
      `a.json:3:3 ASSET schema 'A' from "a.json": invalid JSON: Expected double-quoted property name`,
      `c.json:1:10 ASSET schema 'C' from "c.json": not a valid JSON Schema: "type" must be one of array, boolean, integer, null, number, object, string; found "nonsense"`,
      `main.mh:2:15 ASSET schema 'B' from "b.json": must be a JSON object (a JSON Schema)`,
    ]);
  });

  it('reports a missing asset at its path', () => {
    assert.deepEqual(lint({ '/p/main.mh': `schema S from "s.json"\n${PIPELINE}` }), [
      'main.mh:1:15 ASSET schema \'S\' from "s.json": no such file (paths are relative to main.mh)',
    ]);
  });
});

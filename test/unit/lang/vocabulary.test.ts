/**
 * The editor vocabulary (src/lang/vocabulary.ts) against the tables it describes: every native
 * namespace has its methods listed, every method the runtime implements is listed, every
 * built-in function has a description, and every word that starts a declaration is a keyword.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUILTIN_DESCRIPTIONS,
  BUILTIN_FUNCTIONS,
  KEYWORDS,
  NATIVE_METHODS,
  NATIVE_NAMESPACES,
  parse,
} from '../../../src/lang/index.js';
import { NATIVES } from '../../../src/runtime/natives/index.js';

describe('editor vocabulary', () => {
  it('lists the methods of exactly the native namespaces the checker knows', () => {
    assert.deepEqual(Object.keys(NATIVE_METHODS).sort(), [...NATIVE_NAMESPACES].sort());
  });

  it('lists every method the runtime implements, and no other for a namespace it has', () => {
    for (const [ns, ops] of Object.entries(NATIVES)) {
      const listed = (NATIVE_METHODS[ns] ?? []).map((m) => m.name).sort();
      assert.deepEqual(listed, Object.keys(ops).sort(), `native ${ns}`);
    }
  });

  it('describes every built-in function', () => {
    assert.deepEqual(Object.keys(BUILTIN_DESCRIPTIONS).sort(), [...BUILTIN_FUNCTIONS].sort());
  });

  it('counts every word that starts a declaration as a keyword', () => {
    // Each declaration form parses only when its leading words are the language's.
    const forms: [string, string[]][] = [
      ['import { A } from "a.mh"', ['import', 'from']],
      ['import { A as B } from "a.mh"', ['import', 'as', 'from']],
      ['use { A } from "a.mh"', ['use', 'from']],
      ['agent A { command: "x" }', ['agent']],
      ['prompt P() { "x" }', ['prompt']],
      ['skill S from "s.md"', ['skill', 'from']],
      ['schema S from "s.json"', ['schema', 'from']],
      ['memory M { type: "kv" store: "memory" }', ['memory']],
      ['tool T { m() -> 1 }', ['tool']],
      ['extension mcp E { transport: "stdio" }', ['extension']],
      ['mcp_server E { command: "x" }', ['mcp_server']],
      ['a2a_agent E { url: "x" }', ['a2a_agent']],
      ['router R { agents: [] }', ['router']],
      ['type T = string', ['type']],
      ['enum E { A }', ['enum']],
      [
        'export partial loop workflow W max 3 { entry step S timeout 1s { } }',
        ['export', 'partial', 'loop', 'workflow', 'max', 'entry', 'step', 'timeout'],
      ],
      [
        'pipeline P { input x: string\n var v = 1\n const c = 2\n mem m = 3\n parallel G { step S { } } }',
        ['pipeline', 'input', 'var', 'const', 'mem', 'parallel', 'step'],
      ],
      ['test T { describe C { } }', ['test', 'describe']],
    ];
    for (const [form, words] of forms) {
      assert.deepEqual(parse(form, '/x.mh').diagnostics, [], form);
      for (const word of words) {
        assert.ok(form.includes(word), `${word} is not in ${form}`);
        assert.ok(KEYWORDS.includes(word), `${word} (${form})`);
      }
    }
  });
});

/**
 * `mhl lint` on extension declarations: a table of sources and the `line:col CODE` rows they
 * must produce (none for a good declaration). Positions and codes only, never message text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../src/lang/checker.js';
import { memoryHost } from '../../../src/lang/source-host.js';

/** Lints one file holding `decl` and a pipeline; returns `line:col CODE` rows. */
function lint(decl: string): string[] {
  const source = `${decl}\npipeline P { step S { log("x") } }\n`;
  const { diagnostics } = checkFiles(['/p/main.mh'], memoryHost(new Map([['/p/main.mh', source]])));
  return diagnostics.map((d) => `${d.span.line}:${d.span.col} ${d.code}`);
}

const CASES: readonly [string, string, string[]][] = [
  // Good declarations.
  [
    'stdio server',
    'extension mcp A {\n  transport: "stdio"\n  command: "srv"\n  args: ["--x"]\n}',
    [],
  ],
  [
    'http server with a bearer from env()',
    'extension mcp A {\n  transport: "http"\n  url: "https://x/mcp"\n  headers: { Authorization: "Bearer ${env("T")}" }\n  protocol: "2026-07-28"\n}',
    [],
  ],
  ['protocol from env()', 'extension mcp A { command: "srv", protocol: env("P") }', []],
  [
    'transport from env()',
    'extension mcp A { transport: env("T"), url: env("U"), command: "x" }',
    [],
  ],
  ['vault() value', 'extension mcp A { transport: "http", url: vault("mcp/url") }', []],
  ['legacy mcp_server', 'mcp_server A { transport: "stdio", command: "srv" }', []],
  ['a2a agent', 'extension a2a B { url: "https://a", poll_interval: 2s, poll_timeout: 60000 }', []],
  ['other kinds are not checked', 'extension store S { anything: 1 + 2 }', []],
  // Bad declarations.
  ['stdio without command', 'extension mcp A { transport: "stdio" }', ['1:15 EXTENSION_CONFIG']],
  ['http without url', 'extension mcp A { transport: "http" }', ['1:15 EXTENSION_CONFIG']],
  ['unknown transport', 'extension mcp A { transport: "ftp" }', ['1:30 EXTENSION_CONFIG']],
  ['url on stdio', 'extension mcp A { command: "x", url: "http://x" }', ['1:33 UNKNOWN_PROPERTY']],
  ['args on http', 'extension mcp A { url: "http://x", args: [] }', ['1:36 UNKNOWN_PROPERTY']],
  [
    'unknown protocol',
    'extension mcp A { command: "x", protocol: "2024-11-05" }',
    ['1:43 EXTENSION_CONFIG'],
  ],
  ['a computed value', 'extension mcp A { command: "x" + "y" }', ['1:28 EXTENSION_CONFIG']],
  [
    'a variable',
    'extension mcp A { command: name }',
    ['1:28 EXTENSION_CONFIG', '1:28 UNKNOWN_NAME'],
  ],
  [
    'env() of a computed name',
    'extension mcp A { command: env("A" + "B") }',
    ['1:28 EXTENSION_CONFIG'],
  ],
  ['args not a list', 'extension mcp A { command: "x", args: "a b" }', ['1:39 EXTENSION_CONFIG']],
  [
    'a number in args',
    'extension mcp A { command: "x", args: ["a", 3] }',
    ['1:45 EXTENSION_CONFIG'],
  ],
  [
    'headers not an object',
    'extension mcp A { url: "http://x", headers: "a" }',
    ['1:45 EXTENSION_CONFIG'],
  ],
  [
    'a header that is a number',
    'extension mcp A { url: "http://x", headers: { X: 1 } }',
    ['1:50 EXTENSION_CONFIG'],
  ],
  ['duplicate property', 'extension mcp A { command: "x", command: "y" }', ['1:33 DUPLICATE']],
  ['a2a without url', 'extension a2a B { headers: {} }', ['1:15 EXTENSION_CONFIG']],
  [
    'a2a unknown property',
    'extension a2a B { url: "http://a", transport: "http" }',
    ['1:36 UNKNOWN_PROPERTY'],
  ],
  [
    'a2a poll_interval not a duration',
    'extension a2a B { url: "http://a", poll_interval: "2s" }',
    ['1:51 EXTENSION_CONFIG'],
  ],
  ['legacy a2a_agent without url', 'a2a_agent B { headers: {} }', ['1:11 EXTENSION_CONFIG']],
];

describe('checker: extension declarations', () => {
  for (const [what, decl, expected] of CASES) {
    it(`${expected.length ? 'reports' : 'accepts'} ${what}`, () => {
      assert.deepEqual(lint(decl).sort(), [...expected].sort());
    });
  }
});

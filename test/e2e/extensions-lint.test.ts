/**
 * `mhl lint` on extension declarations, as a user runs it: one `file:line:col: error:` line per
 * problem in text, and stable codes in `--format json`; the extension fixtures lint clean.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, tempDir } from '../helpers/cli.js';

const BAD = [
  'extension mcp Docs {',
  '    transport: "stdio"',
  '    protocol: "2024-11-05"',
  '    url: "http://x"',
  '}',
  'extension a2a Peer { headers: { Authorization: token } }',
  'pipeline P { step S { log("x") } }',
  '',
].join('\n');

describe('mhl lint: extension declarations', () => {
  it('reports each problem at its file:line:col with a stable code', async () => {
    const dir = tempDir('mhl-ext-lint-');
    writeFileSync(join(dir, 'bad.mh'), BAD);
    const text = await runCli(['lint', 'bad.mh'], { cwd: dir });
    assert.equal(text.code, 1);
    for (const at of [
      'bad.mh:1:15: error:',
      'bad.mh:3:15: error:',
      'bad.mh:4:5: error:',
      'bad.mh:6:15: error:',
    ])
      assert.ok(text.stdout.includes(at), `${at} missing from:\n${text.stdout}`);
    const json = await runCli(['lint', '--format', 'json', 'bad.mh'], { cwd: dir });
    const out = JSON.parse(json.stdout) as {
      diagnostics: { line: number; col: number; code: string }[];
    };
    assert.deepEqual(
      out.diagnostics.map((d) => `${d.line}:${d.col} ${d.code}`),
      [
        '1:15 EXTENSION_CONFIG',
        '3:15 EXTENSION_CONFIG',
        '4:5 UNKNOWN_PROPERTY',
        '6:15 EXTENSION_CONFIG',
        '6:48 EXTENSION_CONFIG',
        '6:48 UNKNOWN_NAME',
      ],
    );
  });

  it('accepts the extension test fixtures', async () => {
    const r = await runCli(['lint', 'test/fixtures/extensions']);
    assert.equal(r.code, 0, r.stdout);
  });
});

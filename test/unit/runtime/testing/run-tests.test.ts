/**
 * runTestFile on real files: each assertion's verdict, arity and message rules, what `try` does
 * and does not catch, and the fresh environment of every case. Table-driven: case body → status,
 * code, line.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { diskHost } from '../../../../src/lang/index.js';
import { type CaseResult, runTestFile } from '../../../../src/runtime/index.js';
import { tempDir } from '../../../helpers/cli.js';

async function run(source: string): Promise<CaseResult[]> {
  const file = join(tempDir('mhl-unit-test-'), 'main.mh');
  writeFileSync(file, source);
  const result = await runTestFile(file, diskHost, {
    childEnv: {},
    env: {},
    signal: new AbortController().signal,
  });
  assert.deepEqual(result.diagnostics, []);
  return [...result.cases];
}

/** One case per body; rows are [body, status, failure code or '', failure line or 0]. */
const TABLE: [string, CaseResult['status'], string, number][] = [
  ['are_equal({b: 1, a: [1]}, {a: [1], b: 1})', 'passed', '', 0],
  ['are_equal(1, "1")', 'failed', 'ASSERTION', 1],
  ['is_true(1)', 'failed', 'ASSERTION', 1],
  ['not_null(0)', 'passed', '', 0],
  ['greater_than("b", "a")', 'failed', 'ASSERTION', 1],
  ['includes("abc", "bc")', 'passed', '', 0],
  ['includes({a: 1}, "a")', 'failed', 'ASSERTION', 1],
  ['are_equal(1)', 'failed', 'ARITY', 1],
  ['are_equal(1, 1, "note", "extra")', 'failed', 'ARITY', 1],
  ['is_true(true, 3)', 'failed', 'TYPE', 1],
  ['var x = 1\n try { are_equal(x, 2) } catch (e) { x = 2 }\n are_equal(x, 2)', 'passed', '', 0],
  ['try { incomplete("later") } catch (e) { fail("caught") }', 'pending', '', 0],
  ['var n = null\n log(n.field)', 'failed', 'NULL', 2],
  ['pause("x")', 'failed', 'PAUSE', 0],
];

describe('runTestFile', () => {
  it('gives each body its verdict, code and line', async () => {
    const cases = TABLE.map(([body], i) => `describe c${i} {\n${body}\n}`).join('\n');
    const results = await run(`test T {\n${cases}\n}`);
    assert.equal(results.length, TABLE.length);
    for (const [i, [body, status, code, line]] of TABLE.entries()) {
      const r = results[i] as CaseResult;
      // Line 1 of a body is file line 3 + the lines of the cases before it.
      const first = 3 + TABLE.slice(0, i).reduce((n, [b]) => n + b.split('\n').length + 2, 0);
      const got = [
        r.status,
        r.failure?.code ?? '',
        line === 0 ? 0 : (r.failure?.span.line ?? 0) - first + 1,
      ];
      assert.deepEqual(got, [status, code, line], body);
    }
  });

  it('gives every case a fresh environment', async () => {
    const results = await run(
      'memory M { type: "kv" }\ntest T {\n describe a { M.set("k", 1) }\n describe b { is_null(M.get("k")) }\n}',
    );
    assert.deepEqual(
      results.map((r) => r.status),
      ['passed', 'passed'],
    );
  });

  it('reports a file without tests as having no cases and no diagnostics', async () => {
    assert.deepEqual(await run('workflow W { step S { log("x") } }'), []);
  });
});

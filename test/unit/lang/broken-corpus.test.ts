/**
 * The broken-file corpus: every file in test/fixtures/broken/ states, in `// expect:` header
 * lines, the complete list of diagnostics lint must report for it alone (see its README).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../src/lang/checker.js';
import { diskHost } from '../../../src/lang/source-host.js';

const DIR = resolve(import.meta.dirname, '../../fixtures/broken');
const EXPECT = /^\/\/ expect: (.+)$/;

function expected(file: string): string[] {
  const rows: string[] = [];
  for (const line of readFileSync(resolve(DIR, file), 'utf8').split('\n')) {
    const m = EXPECT.exec(line);
    if (!m) break;
    rows.push(m[1] as string);
  }
  return rows;
}

function actual(file: string): string[] {
  const { diagnostics } = checkFiles([resolve(DIR, file)], diskHost);
  return diagnostics.map((d) => {
    const where = d.span.file === resolve(DIR, file) ? '' : `${relative(DIR, d.span.file)}:`;
    return `${where}${d.span.line}:${d.span.col} ${d.severity} ${d.code} ${d.message}`;
  });
}

describe('broken corpus', () => {
  const files = readdirSync(DIR)
    .filter((f) => f.endsWith('.mh'))
    .sort();

  it('has at least 40 entries, each stating its diagnostics', () => {
    assert.ok(files.length >= 40, `only ${files.length} corpus files`);
    for (const f of files) assert.ok(expected(f).length > 0, `${f} has no // expect: header`);
  });

  for (const file of files) {
    it(file, () => assert.deepEqual(actual(file), expected(file)));
  }
});

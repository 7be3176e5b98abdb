/**
 * Every runtime error code has a hint, and docs/errors.md lists each code with it: the codes
 * raised in src/runtime are read from the source (every `new LangError('CODE'` and
 * `RunFailure(kind, 'CODE'`), so a new raise site with a new code fails here until it has one.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import {
  AGENT_HINTS,
  ERROR_HINTS,
  hintFor,
  NATIVE_HINTS,
  nativeHint,
  RUN_ERROR_CODES,
} from '../../../src/runtime/interpreter/error-hints.js';

const ROOT = resolve(import.meta.dirname, '../../..');

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Codes passed literally to `new LangError(` or `new RunFailure(kind,` in src/runtime. */
function raisedCodes(): Set<string> {
  const codes = new Set<string>();
  const pattern = /new (?:LangError\(\s*|RunFailure\(\s*'[a-z_]+',\s*)'([A-Z_]+)'/g;
  for (const file of sources(join(ROOT, 'src/runtime'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(pattern)) codes.add(m[1] as string);
  }
  return codes;
}

describe('runtime error hints', () => {
  it('has a hint for every code raised in src/runtime', () => {
    const codes = raisedCodes();
    assert.ok(codes.size > 15, `only found ${[...codes].join(', ')}`);
    for (const code of [...codes, ...Object.values(RUN_ERROR_CODES)])
      assert.ok(ERROR_HINTS[code], `no hint for ${code}`);
  });

  it('documents every code and hint in docs/errors.md', () => {
    const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
    for (const [code, hint] of Object.entries(ERROR_HINTS)) {
      assert.ok(doc.includes(`| \`${code}\` |`), `docs/errors.md lacks ${code}`);
      assert.ok(doc.includes(hint), `docs/errors.md lacks the hint of ${code}`);
    }
    for (const hint of [...Object.values(AGENT_HINTS), ...Object.values(NATIVE_HINTS)])
      assert.ok(doc.includes(hint), `docs/errors.md lacks: ${hint}`);
  });

  it('picks a namespace hint for natives and falls back for unknown codes', () => {
    assert.equal(nativeHint('cmd.exec'), NATIVE_HINTS['cmd']);
    assert.equal(nativeHint('nowhere.op'), ERROR_HINTS['NATIVE']);
    assert.match(hintFor('NO_SUCH_CODE'), /docs\/errors\.md/);
  });
});

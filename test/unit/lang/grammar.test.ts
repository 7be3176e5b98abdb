/**
 * editors/mhl.tmLanguage.json, the TextMate grammar editors highlight `.mh` with: it is valid
 * JSON and its keyword, native and built-in patterns cover every word the language tables list
 * (src/lang/vocabulary.ts, builtins.ts), so highlighting cannot fall behind the language.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  BUILTIN_FUNCTIONS,
  KEYWORDS,
  NATIVE_NAMESPACES,
  TEST_ASSERTIONS,
} from '../../../src/lang/index.js';
import { REPO_ROOT } from '../../helpers/cli.js';

interface Rule {
  readonly name?: string;
  readonly match?: string;
  readonly patterns?: readonly Rule[];
}
interface Grammar {
  readonly scopeName: string;
  readonly fileTypes: readonly string[];
  readonly repository: Readonly<Record<string, Rule>>;
}

const grammar = JSON.parse(
  readFileSync(join(REPO_ROOT, 'editors/mhl.tmLanguage.json'), 'utf8'),
) as Grammar;

/** Every `match` of a repository rule and its nested patterns, as JavaScript regular expressions. */
function matchers(rule: Rule | undefined): RegExp[] {
  if (!rule) return [];
  const own = rule.match ? [new RegExp(rule.match)] : [];
  return [...own, ...(rule.patterns ?? []).flatMap(matchers)];
}

function covers(rules: RegExp[], text: string, word: string): boolean {
  return rules.some((re) => re.exec(text)?.[0] === word || re.exec(text)?.[1] === word);
}

describe('TextMate grammar', () => {
  it('is JSON for source.mhl files', () => {
    assert.equal(grammar.scopeName, 'source.mhl');
    assert.deepEqual(grammar.fileTypes, ['mh']);
  });

  it('highlights every keyword', () => {
    const rules = [...matchers(grammar.repository['keywords'])];
    for (const word of KEYWORDS) assert.ok(covers(rules, word, word), `keyword ${word}`);
  });

  it('highlights every native namespace before a dot, and every built-in before a call', () => {
    const natives = matchers(grammar.repository['natives']);
    for (const ns of NATIVE_NAMESPACES) assert.ok(covers(natives, `${ns}.x`, ns), `native ${ns}`);
    const builtins = matchers(grammar.repository['builtins']);
    for (const f of [...BUILTIN_FUNCTIONS, ...TEST_ASSERTIONS])
      assert.ok(covers(builtins, `${f}(x)`, f), `built-in ${f}`);
  });

  it('tells durations from numbers', () => {
    const [duration] = matchers(grammar.repository['duration']);
    assert.ok(duration?.test('30s') && duration.test('250ms') && !duration.test('1.5'));
  });
});

/**
 * Technique markdown read as the public workflow-server's loader reads it (docs/sessions.md,
 * "Technique files"): protocol steps and blocks, interface entries, rules, and the Initial/Final
 * wrap. Fixtures under test/fixtures/sessions/techniques/ (each one was also checked against the
 * public loader itself) and the copied corpus's `create-session`, never edited.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseTechnique } from '../../../../src/surfaces/sessions/definition/technique-parse.js';
import { resolveTechnique } from '../../../../src/surfaces/sessions/definition/techniques.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'sessions');
const ROOT = join(FIXTURES, 'techniques');
const fixture = (name: string) => readFileSync(join(ROOT, 'wf', 'techniques', name), 'utf8');

describe('technique protocol', () => {
  test('a blank line closes a step: the indented paragraph under create-session step 1 is dropped', () => {
    const text = readFileSync(
      join(FIXTURES, 'corpus', 'meta', 'techniques', 'workflow-engine', 'create-session.md'),
      'utf8',
    );
    assert.match(text, /\n\n {3}Omit `context_mode`/);
    const protocol = parseTechnique('create-session', text)?.protocol;
    assert.equal(protocol?.length, 1);
    assert.equal(protocol?.[0]?.title, undefined);
    assert.equal(protocol?.[0]?.steps.length, 1);
    assert.match(
      protocol?.[0]?.steps[0] ?? '',
      /\[handle-sub-workflow\]\(\.\/handle-sub-workflow\.md\)\.$/,
    );
  });

  test('items at any indent are steps; other lines join the open item; fences are plain lines', () => {
    assert.deepEqual(parseTechnique('steps', fixture('steps.md'))?.protocol, [
      {
        steps: [
          // an indented and an unindented continuation line, each joined with one space
          'First step continues on an indented line and on an unindented one.',
          'Second step, trailing spaces trimmed',
          'a nested item is a step of its own',
          // the paragraph after the blank line is gone
          'at any depth',
          'A step with a fence ```yaml',
          'key: a list line inside a fence is an item too ```',
          // the fenced block after a blank line, `-`, `- ` and `-not…` are no step's
          'Starred',
          'Numbered ten',
        ],
      },
    ]);
  });

  test('CRLF files read as LF ones', () => {
    const lf = fixture('steps.md');
    assert.deepEqual(
      parseTechnique('steps', lf.replace(/\n/g, '\r\n')),
      parseTechnique('steps', lf),
    );
  });

  test('### blocks: ordinal off, prose as one paragraph step, empty blocks left out', () => {
    assert.deepEqual(parseTechnique('blocks', fixture('blocks.md'))?.protocol, [
      {
        title: 'Prose only',
        steps: [
          'A block without items is one step: its paragraphs,\n\neach trimmed,\njoined by one empty line.',
        ],
      },
      { title: 'Spaced ordinal', steps: ['one'] },
      { title: 'Last', steps: ['Do last.'] },
    ]);
  });

  test('a protocol with neither steps nor text is no protocol', () => {
    assert.equal(parseTechnique('interface', fixture('interface.md'))?.protocol, undefined);
  });
});

describe('technique interface and rules', () => {
  test('entries keep the public key order; reserved titles in any case; empty parts left out', () => {
    const t = parseTechnique('interface', fixture('interface.md'));
    // JSON text, so that key order counts (it is the order on the wire).
    assert.equal(
      JSON.stringify(t?.inputs),
      JSON.stringify([
        { id: 'with_default', description: 'Has a default.', default: 'v' },
        { id: 'no_description', components: { part: 'A component.' } },
      ]),
    );
    assert.equal(
      JSON.stringify(t?.outputs),
      JSON.stringify([
        {
          id: 'report',
          description: 'Written for a person.',
          components: { summary: 'Authored after the artifact, listed before it.' },
          artifact: { name: 'report.md' },
          audience: 'human',
        },
      ]),
    );
    // An empty rule is left out, and only the first `## Rules` section is read.
    assert.deepEqual(t?.rules, { kept: 'A rule.' });
  });
});

describe('Initial and Final wrap', () => {
  test("ancestors' Initial/Final blocks wrap the technique's own, titles in any case", () => {
    const c = resolveTechnique(ROOT, 'grp::op', 'wf');
    assert.deepEqual(c?.technique.protocol, [
      { title: 'initial', steps: ['Root first.'] },
      { title: 'Initial', steps: ['Group first.'] },
      { steps: ['Own step.'] },
      { title: 'final', steps: ['Group last.'] },
      { title: 'FINAL', steps: ['Root last.'] },
    ]);
  });
});

/**
 * The sessions profile's definition layer: the `when` grammar and structured conditions as
 * tables, the variable-name rule, and the loader on variants of a real corpus folder (copied
 * into a temp dir, never edited in place): fragment refs spliced, a broken activity excluded
 * and reported, a bad manifest failing the whole workflow, borrowed activities keeping their
 * source workflow, and a hot fix seen on the next load.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  conditionText,
  evaluateCondition,
} from '../../../../src/surfaces/sessions/definition/condition.js';
import { isVariableName } from '../../../../src/surfaces/sessions/definition/identifiers.js';
import { findActivity, loadWorkflow } from '../../../../src/surfaces/sessions/definition/loader.js';
import { extractSection } from '../../../../src/surfaces/sessions/definition/resources.js';
import { parseTechnique } from '../../../../src/surfaces/sessions/definition/technique-parse.js';
import { evaluateWhen, parseWhen } from '../../../../src/surfaces/sessions/definition/when.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'sessions', 'corpus');

describe('when grammar', () => {
  const bag = { a: true, b: false, n: 3, s: 'x', deep: { k: 'v' }, zero: 0, nil: null };
  const table: [string, boolean][] = [
    ['a', true],
    ['b', false],
    ['!b', true],
    ['a && b', false],
    ['a || b', true],
    ['!(a && b)', true],
    ['n > 2', true],
    ['n >= 4', false],
    ["s == 'x'", true],
    ['s == "x"', true],
    ['s == x', true],
    ['s != x', false],
    ['deep.k == v', true],
    ['missing', false],
    ['missing == null', false],
    ['nil == null', true],
    ['zero == 0', true],
    ['n > -1', true],
    ['s > 1', false],
    ['true', true],
    ['false || a', true],
    ['a &&', false],
    ['(a', false],
    ['', false],
    ['null', false],
    ['a == ', false],
  ];
  for (const [text, want] of table) {
    test(`${JSON.stringify(text)} is ${want}`, () => assert.equal(evaluateWhen(text, bag), want));
  }
  test('an expression that does not parse has no AST', () => {
    assert.equal(parseWhen('a && && b'), undefined);
    assert.equal(parseWhen("s == 'unterminated"), undefined);
  });
});

describe('structured conditions', () => {
  const bag = { flag: true, count: '5', mode: 'x' };
  test('evaluates simple, and, or, not with strict equality and numeric ordering', () => {
    assert.equal(
      evaluateCondition({ type: 'simple', variable: 'flag', operator: '==', value: true }, bag),
      true,
    );
    assert.equal(
      evaluateCondition({ type: 'simple', variable: 'count', operator: '==', value: 5 }, bag),
      false,
    );
    assert.equal(
      evaluateCondition({ type: 'simple', variable: 'count', operator: '>', value: 4 }, bag),
      true,
    );
    assert.equal(
      evaluateCondition({ type: 'simple', variable: 'mode', operator: '>', value: 1 }, bag),
      false,
    );
    assert.equal(
      evaluateCondition({ type: 'simple', variable: 'none', operator: 'notExists' }, bag),
      true,
    );
    assert.equal(
      evaluateCondition(
        { type: 'not', condition: { type: 'simple', variable: 'flag', operator: 'exists' } },
        bag,
      ),
      false,
    );
  });
  test('prints the text transition warnings compare', () => {
    const c = {
      type: 'and' as const,
      conditions: [
        { type: 'simple' as const, variable: 'a', operator: '==' as const, value: true },
        {
          type: 'not' as const,
          condition: {
            type: 'simple' as const,
            variable: 'm',
            operator: '==' as const,
            value: 'x',
          },
        },
      ],
    };
    assert.equal(conditionText(c), 'a == true AND NOT (m == "x")');
  });
});

describe('variable names', () => {
  test('two snake_case words or an exempt word', () => {
    for (const ok of ['review_passed', 'a_b_c', 'target', 'summary'])
      assert.equal(isVariableName(ok), true, ok);
    for (const bad of ['scope', 'Review_passed', 'review-passed', 'reviewPassed', '_x']) {
      assert.equal(isVariableName(bad), false, bad);
    }
  });
});

describe('techniques and resources', () => {
  test('a technique needs metadata.version and a Capability; Input(s) misspelt is refused', () => {
    const good = '---\nmetadata:\n  version: 1.0.0\n---\n\n## Capability\n\nDoes it.\n';
    assert.equal(parseTechnique('t', good)?.capability, 'Does it.');
    assert.equal(parseTechnique('t', good.replace('version: 1.0.0', 'x: 1')), undefined);
    assert.equal(parseTechnique('t', `${good}\n## Input\n\n### a\n\nx\n`), undefined);
    assert.equal(
      parseTechnique(
        't',
        `${good}\n## Outputs\n\n### o\n\nx\n\n#### artifact\n\n\`no extension\`\n`,
      ),
      undefined,
    );
  });
  test('a section runs to the next heading as high, ignoring fenced headings', () => {
    const body =
      '# T\n\n## Rungs\n\nOne.\n\n```\n## not a heading\n```\n\n### Sub\n\nTwo.\n\n## Next\n\nThree.';
    assert.equal(
      extractSection(body, 'rungs'),
      '## Rungs\n\nOne.\n\n```\n## not a heading\n```\n\n### Sub\n\nTwo.',
    );
    assert.equal(extractSection(body, 'missing'), undefined);
  });
});

describe('loader on corpus variants', () => {
  const root = mkdtempSync(join(tmpdir(), 'mhl-sessions-loader-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  cpSync(CORPUS, root, { recursive: true });
  const edit = (rel: string, fn: (text: string) => string) =>
    writeFileSync(join(root, rel), fn(readFileSync(join(root, rel), 'utf8')));

  test('loads every corpus workflow with no activity load errors', () => {
    for (const id of ['meta', 'ponytail', 'prism-update', 'requirements-refinement']) {
      const wf = loadWorkflow(root, id);
      assert.deepEqual(wf.activityLoadErrors, [], id);
      assert.ok(wf.activities.length >= 4, id);
    }
    const rr = loadWorkflow(root, 'requirements-refinement');
    assert.deepEqual(
      rr.activities.map((a) => a.artifactPrefix),
      ['01', '03', '04', '05', '06'],
      'ordered by prefix, gaps allowed',
    );
  });

  test('splices checkpoint and rule fragment refs, from the workflow then meta', () => {
    edit('ponytail/workflow.yaml', (t) =>
      t.replace(
        /^rules:\n/m,
        'fragments:\n  rules:\n    be-brief: "Keep it short."\n  checkpoints:\n    go-no-go:\n      message: "Proceed?"\n      options:\n        - {id: go, label: Go}\n        - {id: stop, label: Stop, effect: {transitionTo: __terminal__}}\nrules:\n  activity:\n    - ref: be-brief\n',
      ),
    );
    edit('ponytail/activities/04-repo-audit.yaml', (t) =>
      `${t.trimEnd()}\n`.replace(
        /^steps:\n/m,
        'steps:\n  - kind: checkpoint\n    id: gate\n    ref: go-no-go\n',
      ),
    );
    const wf = loadWorkflow(root, 'ponytail');
    assert.deepEqual(wf.rules.activity, ['Keep it short.']);
    const gate = findActivity(wf, 'repo-audit')?.steps?.find((s) => s.id === 'gate');
    assert.equal(gate?.kind === 'checkpoint' ? gate.message : undefined, 'Proceed?');
    assert.equal(gate !== undefined && 'ref' in gate, false);
  });

  test('excludes an activity whose fragment does not resolve, and reports it', () => {
    edit('ponytail/activities/04-repo-audit.yaml', (t) =>
      t.replace('ref: go-no-go', 'ref: nowhere'),
    );
    const wf = loadWorkflow(root, 'ponytail');
    assert.equal(findActivity(wf, 'repo-audit'), undefined);
    assert.equal(wf.activityLoadErrors[0]?.activity_id, 'repo-audit');
    assert.match(
      wf.activityLoadErrors[0]?.file ?? '',
      /^ponytail\/activities\/04-repo-audit\.yaml$/,
    );
  });

  test('excludes an activity with an unknown key or a duplicate step id', () => {
    edit(
      'prism-update/activities/04-commit-and-submit.yaml',
      (t) => `${t.trimEnd()}\nvariables: []\n`,
    );
    const wf = loadWorkflow(root, 'prism-update');
    assert.equal(findActivity(wf, 'commit-and-submit'), undefined);
    assert.equal(wf.activityLoadErrors.length, 1);
  });

  test('a bad variable name or an unresolved rule ref fails the whole workflow', () => {
    edit('requirements-refinement/workflow.yaml', (t) =>
      t.replace(/- name: ([a-z_]+)/, '- name: Bad'),
    );
    assert.throws(() => loadWorkflow(root, 'requirements-refinement'), {
      code: 'WORKFLOW_INVALID',
    });
    assert.throws(() => loadWorkflow(root, 'nope'), { code: 'WORKFLOW_NOT_FOUND' });
    assert.throws(() => loadWorkflow(root, '../etc'), { code: 'WORKFLOW_NOT_FOUND' });
  });

  test('a borrowed activity keeps its source workflow; an unresolvable borrow fails the workflow', () => {
    edit(
      'prism-update/workflow.yaml',
      (t) =>
        `${t.trimEnd()}\nactivities:\n  - meta/activities/patterns/01-orchestrator-workers.yaml\n`,
    );
    const wf = loadWorkflow(root, 'prism-update');
    const borrowed = wf.activities.find((a) => a.sourceWorkflow === 'meta');
    assert.equal(borrowed?.artifactPrefix, '01');
    edit('prism-update/workflow.yaml', (t) =>
      t.replace('01-orchestrator-workers.yaml', '09-missing.yaml'),
    );
    assert.throws(() => loadWorkflow(root, 'prism-update'), { code: 'WORKFLOW_INVALID' });
  });

  test('a hot fix is seen on the next load (no stale cache)', () => {
    const before = loadWorkflow(root, 'meta').version;
    edit('meta/workflow.yaml', (t) => t.replace(/^version: .*$/m, 'version: 9.9.9'));
    assert.notEqual(before, '9.9.9');
    assert.equal(loadWorkflow(root, 'meta').version, '9.9.9');
  });
});

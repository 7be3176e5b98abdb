/**
 * Resource links and bundle rules of the sessions profile as tables: which link shapes read as
 * resource ids (and which are prose or paths), how a bare id from another workflow's technique
 * is qualified, and the rules list of a bundle on the fixture corpus (kept per technique file,
 * a `prefix` selection touching only its group).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { buildBundle } from '../../../../src/surfaces/sessions/delivery/bundle.js';
import {
  extractResourceIds,
  linkedIds,
  qualifyResourceId,
} from '../../../../src/surfaces/sessions/delivery/resource-links.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'sessions', 'corpus');

describe('resource ids in technique text', () => {
  const table: [string, string[]][] = [
    ['see [a](x#sec) and [b](wf/y)', ['x#sec', 'wf/y']],
    ['[a](x.md#sec)', ['x#sec']],
    ['[a](../../other/resources/z.md#h)', ['other/z#h']],
    ['[a](../resources/z.md)', ['z']],
    ['[a](/etc/resources/passwd)', ['etc/passwd']],
    ['[a](meta/resources/../../x)', ['meta/../../x']],
    ['[a](../x)', []],
    ['[a](/etc/passwd)', []],
    ['[a](a/b/c)', []],
    ['[a](https://example.com/x)', []],
    ['[a](#local)', []],
    ['[a](tech::op)', []],
    ['[a](…)', []],
    ['resources: [one, "two#s", ../bad]', ['one', 'two#s']],
    ['[a](x) [b](x)', ['x']],
  ];
  for (const [input, ids] of table)
    test(JSON.stringify(input), () => assert.deepEqual(extractResourceIds(input), ids));

  test('a bare id from another workflow is qualified with it; qualified ids pass through', () => {
    assert.equal(
      qualifyResourceId('writing-register', 'meta', 'ponytail'),
      'meta/writing-register',
    );
    assert.equal(qualifyResourceId('p#s', 'meta', 'ponytail'), 'meta/p#s');
    assert.equal(qualifyResourceId('p#s', 'ponytail', 'ponytail'), 'p#s');
    assert.equal(qualifyResourceId('wf/p', 'meta', 'ponytail'), 'wf/p');
  });

  test('ids are deduplicated after qualification, in step order', () => {
    const ids = linkedIds(
      [
        { text: '[a](p#s) [b](meta/q)', workflow: 'ponytail' },
        { text: '[a](p#s) [b](q)', workflow: 'meta' },
      ],
      'ponytail',
    );
    assert.deepEqual(ids, ['p#s', 'meta/q', 'meta/p#s']);
  });
});

describe('bundle rules', () => {
  test('two harness files with the same rule each keep it', () => {
    const b = buildBundle(CORPUS, 'ponytail', [
      'harness-compat::claude-code',
      'harness-compat::cursor',
    ]);
    assert.equal(b.rules.filter(([k]) => k === 'resume').length, 2);
    // The group index both sit in is listed once, after the first file that touched it.
    assert.equal(b.rules.filter(([k]) => k === 'harness-independence').length, 1);
    const names = b.rules.map(([k]) => k);
    assert.ok(names.indexOf('harness-independence') < names.lastIndexOf('spawn'));
  });

  test('a prefix selection takes its group only; a rule named outright brings its file', () => {
    const prefix = buildBundle(CORPUS, 'meta', ['agent-conduct::orchestrator']).rules.map(
      ([k]) => k,
    );
    assert.ok(prefix.length > 0 && prefix.every((k) => k.startsWith('orchestrator-')), `${prefix}`);
    const named = buildBundle(CORPUS, 'meta', ['agent-conduct::checkpoint-discipline']).rules;
    assert.equal(named[0]?.[0], 'checkpoint-discipline');
    assert.ok(named.some(([k]) => k === 'file-sensitivity'));
    assert.equal(named.filter(([k]) => k === 'checkpoint-discipline').length, 1);
  });
});

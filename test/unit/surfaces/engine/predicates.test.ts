/**
 * Branch predicates are three-valued (a field the state lacks is `missing`, answered with a
 * question) and semantic versions order as SemVer 2.0.0 says.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evaluate, type Predicate } from '../../../../src/surfaces/engine/predicates.js';
import { compareSemVer, compatibleVersion } from '../../../../src/surfaces/engine/semver.js';

describe('evaluate', () => {
  it('answers true, false or missing', () => {
    const table: [Predicate, Record<string, unknown>, boolean | 'missing'][] = [
      [{ field: 'r', equals: 'a' }, { r: 'a' }, true],
      [{ field: 'r', equals: 'a' }, { r: 'b' }, false],
      [{ field: 'r', equals: 'a' }, {}, 'missing'],
      [{ field: 'r', in: ['a', 'b'] }, { r: 'b' }, true],
      [{ field: 'r', exists: false }, {}, true],
      [
        {
          all: [
            { field: 'a', equals: 1 },
            { field: 'b', equals: 2 },
          ],
        },
        { a: 1 },
        'missing',
      ],
      [
        {
          all: [
            { field: 'a', equals: 1 },
            { field: 'b', equals: 2 },
          ],
        },
        { a: 0 },
        false,
      ],
      [
        {
          any: [
            { field: 'a', equals: 1 },
            { field: 'b', equals: 2 },
          ],
        },
        { a: 1 },
        true,
      ],
      [{ not: { field: 'a', equals: { x: [1] } } }, { a: { x: [1] } }, false],
    ];
    for (const [p, state, want] of table) assert.equal(evaluate(p, state), want, JSON.stringify(p));
  });
});

describe('semver', () => {
  it('orders releases, pre-releases and numeric identifiers', () => {
    const sorted = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0',
      '1.2.0',
      '1.10.0',
      '2.0.0',
    ];
    const shuffled = [...sorted].reverse();
    assert.deepEqual(shuffled.sort(compareSemVer), sorted);
  });

  it('accepts a host adapter of the same major and at least the released minor', () => {
    assert.equal(compatibleVersion('1.3.0', '1.2.5'), true);
    assert.equal(compatibleVersion('1.2.0', '1.2.5'), true);
    assert.equal(compatibleVersion('1.1.9', '1.2.0'), false);
    assert.equal(compatibleVersion('2.0.0', '1.2.0'), false);
    assert.equal(compatibleVersion('x', '1.2.0'), false);
  });
});

/**
 * Constructs `mhl lint` accepts that the runtime refuses (issue 17's closing table): each fails
 * the run at its own position rather than being skipped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure } from '../interpreter/harness.js';

describe('constructs the runtime refuses', () => {
  const cases: [string, string, string | undefined, string][] = [
    ['a lifecycle hook', 'step_start: (e) -> log(e)\n step S { }', undefined, '3:1'],
    ['an entry step', 'step A { }\n entry step B { }', undefined, '4:13'],
    ['vault()', 'step S {\n log(vault("db/password")) }', 'S', '4:6'],
    ['complete()', 'step S {\n complete() }', 'S', '4:2'],
  ];
  for (const [what, body, step, at] of cases) {
    it(`refuses ${what} at its position`, async () => {
      const f = await failure(body);
      assert.equal(f.kind, step ? 'step_failed' : 'other');
      assert.equal(f.step, step);
      assert.equal(f.at, at);
    });
  }

  it('refuses a typed signature at its parameter', async () => {
    const f = await failure('step S { log(x) }', { header: 'workflow P(x: string)' });
    assert.equal(f.kind, 'other');
    assert.equal(f.at, '2:12');
  });
});

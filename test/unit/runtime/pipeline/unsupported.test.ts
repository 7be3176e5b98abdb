/**
 * Constructs `mhl lint` accepts that the runtime refuses (docs/language.md's closing table):
 * each fails the run at its own position rather than being skipped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure } from '../interpreter/harness.js';

describe('constructs the runtime refuses', () => {
  it('refuses vault() at its position', async () => {
    const f = await failure('step S {\n log(vault("db/password")) }');
    assert.equal(f.kind, 'step_failed');
    assert.equal(f.step, 'S');
    assert.equal(f.at, '4:6');
  });
});

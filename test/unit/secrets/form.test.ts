/**
 * The setup form's strict parser: the two fields once each, valid escapes and UTF-8, nothing
 * else; and for any body at all, an answer rather than an exception.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isFormContentType, parseSetupForm } from '../../../src/secrets/form.js';

describe('setup form', () => {
  it('takes value and label, decoding + and escapes', () => {
    assert.deepEqual(parseSetupForm('value=a+b%2Bc%C3%A9&label=x'), {
      ok: true,
      fields: { value: 'a b+cé', label: 'x' },
    });
    assert.deepEqual(parseSetupForm('value=abcd'), { ok: true, fields: { value: 'abcd' } });
  });

  for (const [body, field] of [
    ['', 'value'],
    ['label=x', 'value'],
    ['value=', 'value'],
    ['value=a&value=b', 'value'],
    ['value=abcd&extra=1', '(form)'],
    ['value=abcd&__proto__=1', '(form)'],
    ['value=%zz', 'value'],
    ['value=%C3', 'value'],
    ['value=%FF%FE', 'value'],
    ['value=abcd&label=%', 'label'],
  ] as const) {
    it(`refuses ${JSON.stringify(body)} naming ${field}`, () => {
      const result = parseSetupForm(body);
      assert.equal(result.ok, false);
      assert.equal(result.ok ? '' : result.field, field);
    });
  }

  it('answers every body without throwing, and never quotes it in a refusal', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (body) => {
        const result = parseSetupForm(body);
        if (!result.ok && body.length > 8) assert.ok(!result.problem.includes(body));
      }),
      { numRuns: 500 },
    );
  });

  it('knows its content type', () => {
    assert.equal(isFormContentType('application/x-www-form-urlencoded; charset=utf-8'), true);
    assert.equal(isFormContentType('multipart/form-data'), false);
    assert.equal(isFormContentType(undefined), false);
  });
});

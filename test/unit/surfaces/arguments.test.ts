import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../../src/runs/argument-error.js';
import { type ControlSchema, checkControlArguments } from '../../../src/surfaces/arguments.js';

const SCHEMA: ControlSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 4, description: 'the id' },
    since: { type: 'integer', minimum: 0, maximum: 10 },
    pick: { type: 'string', enum: ['a', 'b'] },
    args: { type: 'object' },
  },
  required: ['id'],
  additionalProperties: false,
};

function field(args: Record<string, unknown>): string | undefined {
  try {
    checkControlArguments('t', SCHEMA, args);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ArgumentError, String(error));
    assert.ok(error.message.length < 200, error.message);
    return error.field;
  }
}

describe('checkControlArguments', () => {
  it('accepts what the schema accepts', () => {
    assert.equal(field({ id: 'x' }), undefined);
    assert.equal(field({ id: '😀😀😀😀', since: 10, pick: 'b', args: {} }), undefined);
  });

  it('names the field of each refusal', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'id'],
      [{ id: 'x', other: 1 }, 'other'],
      [{ id: 5 }, 'id'],
      [{ id: '' }, 'id'],
      [{ id: 'toolong' }, 'id'],
      [{ id: 'x'.repeat(100_000) }, 'id'],
      [{ id: 'x', since: 1.5 }, 'since'],
      [{ id: 'x', since: -1 }, 'since'],
      [{ id: 'x', since: 11 }, 'since'],
      [{ id: 'x', pick: 'c' }, 'pick'],
      [{ id: 'x', args: [] }, 'args'],
      [{ id: 'x', args: null }, 'args'],
      [{ id: 'x', ['k'.repeat(5000)]: 1 }, `${'k'.repeat(40)}…`],
    ];
    for (const [args, expected] of cases) {
      assert.equal(field(args), expected, JSON.stringify(args).slice(0, 60));
    }
  });
});

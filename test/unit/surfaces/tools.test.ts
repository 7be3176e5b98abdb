import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admission } from '../../../src/runs/admission.js';
import { ArgumentError } from '../../../src/runs/argument-error.js';
import { registerMethods } from '../../../src/surfaces/methods.js';
import { ToolTable, toolMethods } from '../../../src/surfaces/tools.js';
import { errorOf, modernMeta, request, resultOf, setup } from '../protocol/harness.js';

/** A table with one tool that refuses `{bad: true}` while preparing and `{late: true}` running. */
function table(): ToolTable {
  const tools = new ToolTable();
  tools.add({
    name: 'Echo',
    entry: { name: 'Echo', inputSchema: { type: 'object' } },
    execution: true,
    prepare: (args) => {
      if (args['bad'] === true) throw new ArgumentError('bad', 'bad must not be true');
      return {
        run: async () => {
          if (args['late'] === true)
            throw new ArgumentError('late', 'refused late', {
              missing: ['x'],
              undeclared: [],
              invalid: [],
            });
          return { content: [], structuredContent: args };
        },
      };
    },
  });
  return tools;
}

describe('tools/call', () => {
  it('answers refused arguments as an INVALID_ARGUMENT result and counts them invalid', async () => {
    const { dispatcher, conn } = setup();
    const outcomes: string[] = [];
    registerMethods(
      dispatcher,
      toolMethods(table(), {
        admission: new Admission(1),
        onCall: (outcome) => outcomes.push(outcome),
      }),
    );
    const call = async (args: unknown) =>
      dispatcher.handle(
        request(1, 'tools/call', { name: 'Echo', arguments: args, _meta: modernMeta() }),
        conn,
      );
    const early = resultOf(await call({ bad: true })) as Record<string, unknown>;
    assert.equal(early['isError'], true);
    assert.deepEqual((early['_meta'] as Record<string, unknown>)['mhl/diagnostic'], {
      code: 'INVALID_ARGUMENT',
      message: 'bad must not be true',
      retryable: false,
      field: 'bad',
    });
    const late = resultOf(await call({ late: true })) as Record<string, unknown>;
    const diagnostic = (late['_meta'] as Record<string, Record<string, unknown>>)['mhl/diagnostic'];
    assert.deepEqual([diagnostic?.['field'], diagnostic?.['missing']], ['late', ['x']]);
    assert.equal(resultOf(await call({}))['isError'], undefined);
    // A malformed request stays a protocol error: an unknown tool, arguments not an object.
    const unknown = await dispatcher.handle(
      request(2, 'tools/call', { name: 'x'.repeat(10_000), _meta: modernMeta() }),
      conn,
    );
    assert.equal(errorOf(unknown).error.code, -32602);
    assert.ok(errorOf(unknown).error.message.length < 100);
    assert.equal(errorOf(await call('words')).error.code, -32602);
    assert.deepEqual(outcomes, ['invalid', 'invalid', 'success', 'invalid', 'invalid']);
  });
});

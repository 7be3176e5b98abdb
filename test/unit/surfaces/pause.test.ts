import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadCatalog, type Workflow } from '../../../src/catalog/index.js';
import { RpcError } from '../../../src/protocol/index.js';
import {
  answerFor,
  backgroundContext,
  checkInputResponses,
  elicitationParams,
  inputKey,
  mergeAnswer,
  PAUSE_INPUT_KEY,
  pauseMode,
  readAnswer,
  requestedSchema,
} from '../../../src/surfaces/pause.js';
import { requestContext } from './request-context.js';

function workflow(): Workflow {
  const dir = mkdtempSync(join(tmpdir(), 'mhl-pause-unit-'));
  writeFileSync(
    join(dir, 'gate.mh'),
    `enum Level { Low, High }
pipeline Gate {
    input who: string
    input count: number = 2
    input sure: bool = false
    input level: Level = Level.Low
    input tags: string[] = []
    input levels: Level[] = [Level.High]
    input spec: { a: number } = { a: 1 }
    step S { pause("why") }
}
`,
  );
  const loaded = loadCatalog(dir);
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const found = loaded.catalog.workflows.get('Gate');
  assert.ok(found);
  return found;
}

const ctx = requestContext;

describe('the pause form', () => {
  it('asks for the primitive and enum inputs only, each with its current value as the default', () => {
    const schema = requestedSchema(workflow(), { who: 'ana', count: 3, sure: 'not a bool' });
    assert.deepEqual(schema, {
      type: 'object',
      properties: {
        who: { type: 'string', title: 'who', default: 'ana' },
        count: { type: 'number', title: 'count', default: 3 },
        // A current value of the wrong type is no default.
        sure: { type: 'boolean', title: 'sure' },
        level: { type: 'string', title: 'level', enum: ['Low', 'High'] },
        // An array of an enum is a 2025-11-25 multi-select; a plain string[] is not asked.
        levels: {
          type: 'array',
          title: 'levels',
          items: { type: 'string', enum: ['Low', 'High'] },
        },
      },
    });
    const chosen = requestedSchema(workflow(), { levels: ['Low', 'High'] })['properties'] as Record<
      string,
      Record<string, unknown>
    >;
    assert.deepEqual(chosen['levels']?.['default'], ['Low', 'High']);
    const stray = requestedSchema(workflow(), { levels: ['Mid'] })['properties'] as Record<
      string,
      Record<string, unknown>
    >;
    assert.equal('default' in (stray['levels'] ?? {}), false, 'no default outside the enum');
  });

  it('resolves local $defs references, so a named enum is asked like an inline one', () => {
    const level = { type: 'string', enum: ['Low', 'High'] };
    const gate = {
      ...workflow(),
      inputSchema: {
        type: 'object',
        $defs: { Level: level },
        properties: {
          level: { $ref: '#/$defs/Level', default: 'High' },
          levels: { type: 'array', items: { $ref: '#/$defs/Level' } },
          count: { type: 'integer' },
          lost: { $ref: '#/$defs/Missing' },
        },
      },
    } as Workflow;
    assert.deepEqual(requestedSchema(gate, { count: 2.5 }), {
      type: 'object',
      properties: {
        level: { type: 'string', title: 'level', enum: ['Low', 'High'], default: 'High' },
        levels: { type: 'array', title: 'levels', items: level },
        // 2.5 is no integer default.
        count: { type: 'integer', title: 'count' },
      },
    });
  });

  it('says form mode and asks multi-selects from 2025-11-25 on, not before', () => {
    const gate = workflow();
    assert.equal(elicitationParams(gate, {}, 'why', '2025-11-25')['mode'], 'form');
    assert.equal(elicitationParams(gate, {}, 'why', '2026-07-28')['mode'], 'form');
    const older = elicitationParams(gate, {}, 'why', '2025-06-18');
    assert.equal('mode' in older, false);
    const asked = (older['requestedSchema'] as { properties: Record<string, unknown> }).properties;
    assert.equal('levels' in asked, false, 'no multi-select before 2025-11-25');
    assert.equal('level' in asked, true);
  });

  it('merges an answer over the inputs and refuses undeclared or mistyped fields', () => {
    const gate = workflow();
    const ok = mergeAnswer(gate, { who: 'ana' }, { count: 5 });
    assert.ok(ok.ok);
    assert.equal(ok.inputs['count'], 5);
    assert.equal(ok.inputs['who'], 'ana');
    const bad = mergeAnswer(gate, { who: 'ana' }, { count: 'five', nope: 1 });
    assert.equal(bad.ok, false);
  });

  it('reads ElicitResults and nothing else', () => {
    assert.deepEqual(readAnswer({ action: 'accept', content: { a: 1 } }), {
      action: 'accept',
      content: { a: 1 },
    });
    assert.deepEqual(readAnswer({ action: 'accept' }), { action: 'accept', content: {} });
    assert.deepEqual(readAnswer({ action: 'decline', content: { a: 1 } }), { action: 'decline' });
    for (const junk of [
      null,
      'accept',
      [],
      { action: 'maybe' },
      { action: 'accept', content: 1 },
    ]) {
      assert.equal(readAnswer(junk), undefined, JSON.stringify(junk));
    }
  });
});

describe('pauseMode', () => {
  const ask = async () => ({});
  it('asks only clients that declared form elicitation, and never for a job', () => {
    const form = { elicitation: {} };
    assert.equal(pauseMode(ctx({ era: 'modern', clientCapabilities: form })), 'input_required');
    assert.equal(pauseMode(ctx({ clientCapabilities: form, request: ask })), 'elicit');
    assert.equal(
      pauseMode(ctx({ clientCapabilities: { elicitation: { form: {}, url: {} } }, request: ask })),
      'elicit',
    );
    assert.equal(pauseMode(ctx({ clientCapabilities: form })), 'report', 'no way to ask');
    assert.equal(
      pauseMode(ctx({ clientCapabilities: { elicitation: { url: {} } }, request: ask })),
      'report',
    );
    assert.equal(pauseMode(ctx({ era: 'modern' })), 'report');
    const job = backgroundContext(ctx({ era: 'modern', clientCapabilities: form }));
    assert.equal(pauseMode(job), 'report');
  });
});

/** The JSON-RPC code and `error.data.field` of what `run` throws. */
function refusal(run: () => unknown): [number, unknown] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof RpcError, String(error));
    return [error.code, (error.data as Record<string, unknown> | undefined)?.['field']];
  }
  assert.fail('expected a refusal');
}

describe('2026-07-28 retry material', () => {
  it('keys a pause by its step name, or by mhl_pause when there is none', () => {
    assert.equal(inputKey('user_name'), 'user_name');
    assert.equal(inputKey(undefined), PAUSE_INPUT_KEY);
    assert.equal(inputKey(''), PAUSE_INPUT_KEY);
  });

  it('refuses inputResponses entries that are not answers with -32602 naming the entry', () => {
    assert.deepEqual(checkInputResponses(undefined), {});
    const fine = { a: { action: 'accept' }, extra: { action: 'decline' } };
    assert.equal(checkInputResponses(fine), fine);
    // Every entry is checked up front, so nothing runs before a refusal.
    assert.deepEqual(
      refusal(() => checkInputResponses({ a: { action: 'accept' }, extra: { anything: 1 } })),
      [-32602, 'inputResponses.extra'],
    );
    assert.deepEqual(
      refusal(() => checkInputResponses({ user_name: 12345 })),
      [-32602, 'inputResponses.user_name'],
    );
    for (const junk of [null, 'x', [1]]) {
      assert.equal(refusal(() => checkInputResponses({ k: junk }))[0], -32602);
    }
    const long = 'k'.repeat(500);
    const [, field] = refusal(() => checkInputResponses({ [long]: 1 }));
    assert.ok(String(field).length < 100, 'a long client key is cut short');
  });

  it('reads the answer under the asked key, undefined when absent', () => {
    const responses = { user_name: { action: 'accept', content: { name: 'Ana' } } };
    assert.deepEqual(answerFor(responses, 'user_name'), {
      action: 'accept',
      content: { name: 'Ana' },
    });
    assert.equal(answerFor(responses, 'missing'), undefined);
    assert.equal(answerFor(responses, 'toString'), undefined, 'own keys only');
  });
});

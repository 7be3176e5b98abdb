/**
 * How extension results become MHL values: MCP tool results (`decodeToolResult`) and A2A tasks
 * and messages in their 1.0 ProtoJSON form (`normalizeResult`). Tables of input → value, and
 * failures matched by code.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { LangError } from '../../../../src/lang/index.js';
import { normalizeResult } from '../../../../src/runtime/extensions/a2a-result.js';
import { decodeToolResult } from '../../../../src/runtime/extensions/mcp-methods.js';
import { toPlain } from '../../../../src/runtime/interpreter/values.js';

const text = (t: string) => ({ type: 'text' as const, text: t });

describe('decodeToolResult', () => {
  const cases: [string, CallToolResult, unknown][] = [
    [
      'structuredContent wins',
      { content: [text('ignored')], structuredContent: { a: 1 } },
      { a: 1 },
    ],
    ['a JSON object in text is parsed', { content: [text('{"b": [1, 2]}')] }, { b: [1, 2] }],
    ['a JSON array in text is parsed', { content: [text(' [true]')] }, [true]],
    ['plain text stays text', { content: [text('hello')] }, 'hello'],
    ['numbers in text stay text', { content: [text('42')] }, '42'],
    ['text blocks are joined', { content: [text('a'), text('b')] }, 'a\nb'],
    ['text that only looks like JSON stays text', { content: [text('{nope')] }, '{nope'],
    ['no content is null', { content: [] }, null],
    [
      'other blocks come as they are',
      { content: [text('x'), { type: 'image', data: 'AA==', mimeType: 'image/png' }] },
      [
        { text: 'x', type: 'text' },
        { data: 'AA==', mimeType: 'image/png', type: 'image' },
      ],
    ],
  ];
  for (const [what, result, expected] of cases)
    it(what, () => assert.deepEqual(toPlain(decodeToolResult('op', result)), expected));

  it('raises EXTENSION with the tool text for isError', () => {
    assert.throws(
      () => decodeToolResult('op', { isError: true, content: [text('remote says no')] }),
      (e: unknown) =>
        e instanceof LangError && e.code === 'EXTENSION' && e.summary.includes('remote says no'),
    );
  });

  it("prefers an mhl server's diagnostic, with its code", () => {
    const result: CallToolResult = {
      isError: true,
      content: [text('{}')],
      _meta: { 'mhl/diagnostic': { code: 'WORKFLOW_FAILED', message: 'step failed' } },
    };
    assert.throws(
      () => decodeToolResult('op', result),
      (e: unknown) => e instanceof LangError && e.summary === 'op: WORKFLOW_FAILED: step failed',
    );
  });
});

describe('normalizeResult', () => {
  it('normalizes a completed task: state, artifact text and first data part', () => {
    const n = normalizeResult('task', {
      id: 't1',
      contextId: 'c1',
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [
        { artifactId: 'a', parts: [{ text: 'one' }, { data: { k: 1 } }, { text: 'two' }] },
      ],
    });
    assert.deepEqual([n.kind, n.id, n.state], ['task', 't1', 'completed']);
    const v = toPlain(n.value) as Record<string, unknown>;
    assert.deepEqual([v['text'], v['data'], v['context_id']], ['one\ntwo', { k: 1 }, 'c1']);
  });

  it('uses the status message when there are no artifacts, and names interrupted states', () => {
    const n = normalizeResult('task', {
      id: 't2',
      status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { parts: [{ text: 'which one?' }] } },
    });
    assert.deepEqual([n.state, n.statusText], ['input-required', 'which one?']);
    assert.equal((toPlain(n.value) as Record<string, unknown>)['text'], 'which one?');
  });

  it('normalizes a direct message reply', () => {
    const n = normalizeResult('message', { messageId: 'm', parts: [{ text: 'hi' }] });
    const v = toPlain(n.value) as Record<string, unknown>;
    assert.deepEqual(
      [v['kind'], v['id'], v['state'], v['text'], v['data']],
      ['message', 'm', null, 'hi', null],
    );
  });
});

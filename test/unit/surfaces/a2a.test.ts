import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunState, RunView } from '../../../src/runs/index.js';
import { codecFor } from '../../../src/surfaces/a2a/codec.js';
import { CODEC_V1 } from '../../../src/surfaces/a2a/codec-v1.js';
import { CODEC_V03 } from '../../../src/surfaces/a2a/codec-v03.js';
import { A2aError } from '../../../src/surfaces/a2a/errors.js';
import { readMessage } from '../../../src/surfaces/a2a/message.js';
import { taskOf } from '../../../src/surfaces/a2a/task.js';

const CODECS = { v1: CODEC_V1, v03: CODEC_V03 };

function view(state: RunState, extra: Partial<RunView> = {}): RunView {
  return {
    runId: 'a'.repeat(32),
    tool: 'Flow',
    state,
    startedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:01.000Z',
    ...extra,
  };
}

function codeOf(body: () => unknown): number | undefined {
  try {
    body();
  } catch (error) {
    if (error instanceof A2aError) return error.code;
    throw error;
  }
  return undefined;
}

describe('A2A version choice', () => {
  for (const [header, version] of [
    [undefined, '0.3'],
    ['', '0.3'],
    ['  ', '0.3'],
    ['0.3', '0.3'],
    ['0.2', '0.3'],
    ['0.3.0', '0.3'],
    ['1.0', '1.0'],
    ['1.0.2', '1.0'],
    [' 1.0 ', '1.0'],
  ] as const) {
    it(`reads ${JSON.stringify(header)} as ${version}`, () => {
      assert.equal(codecFor(header, CODECS).version, version);
    });
  }
  for (const header of ['2.0', '1.1', '0.1', 'v1', '1', '1.0, 0.3', '1.0.0.0', 'x'.repeat(100)]) {
    it(`refuses ${JSON.stringify(header.slice(0, 20))} with VersionNotSupported`, () => {
      assert.equal(
        codeOf(() => codecFor(header, CODECS)),
        -32009,
      );
    });
  }
});

describe('runs as tasks', () => {
  for (const [state, task] of [
    ['pending', 'submitted'],
    ['queued', 'submitted'],
    ['working', 'working'],
    ['completed', 'completed'],
    ['failed', 'failed'],
    ['canceled', 'canceled'],
    ['paused', 'input-required'],
  ] as const) {
    it(`maps a ${state} run to ${task}`, () => {
      assert.equal(taskOf(view(state)).state, task);
    });
  }

  it('carries a pause reason and an error as the status text, the vars only once completed', () => {
    assert.equal(taskOf(view('paused', { reason: 'sign here' })).text, 'sign here');
    assert.equal(taskOf(view('failed', { error: 'boom' })).text, 'boom');
    assert.deepEqual(taskOf(view('completed', { vars: { a: 1 } })).result, { a: 1 });
    assert.equal(taskOf(view('paused', { vars: { a: 1 } })).result, undefined);
  });

  it('spells a completed task per version: ProtoJSON in 1.0, kinds and lowercase in 0.3', () => {
    const task = taskOf(view('completed', { vars: { a: 1 } }));
    const v1 = CODEC_V1.sent(task) as { task: Record<string, unknown> };
    assert.equal((v1.task['status'] as Record<string, unknown>)['state'], 'TASK_STATE_COMPLETED');
    assert.deepEqual(
      ((v1.task['artifacts'] as Record<string, unknown>[])[0] as { parts: unknown[] }).parts,
      [
        { data: { a: 1 }, mediaType: 'application/json' },
        { text: '{\n  "a": 1\n}', mediaType: 'application/json' },
      ],
    );
    const v03 = CODEC_V03.sent(task);
    assert.equal(v03['kind'], 'task');
    assert.equal((v03['status'] as Record<string, unknown>)['state'], 'completed');
    assert.deepEqual(
      ((v03['artifacts'] as Record<string, unknown>[])[0] as { parts: unknown[] }).parts,
      [
        { kind: 'data', data: { a: 1 } },
        { kind: 'text', text: '{\n  "a": 1\n}' },
      ],
    );
  });

  it('waits by default in 1.0 and only when blocking in 0.3', () => {
    assert.equal(CODEC_V1.waits({}), true);
    assert.equal(CODEC_V1.waits({ configuration: { returnImmediately: true } }), false);
    assert.equal(CODEC_V03.waits({}), false);
    assert.equal(CODEC_V03.waits({ configuration: { blocking: true } }), true);
  });
});

describe('readMessage', () => {
  it('reads parts of both versions alike, and the metadata of message or params', () => {
    const read = readMessage({
      message: {
        parts: [{ text: 'a' }, { kind: 'text', text: 'b' }, { data: { x: 1 } }],
        metadata: { skill: 'Flow' },
        taskId: 'id',
      },
      metadata: { input: { y: 2 } },
    });
    assert.deepEqual(read, {
      taskId: 'id',
      skill: 'Flow',
      input: { y: 2 },
      parts: [
        { kind: 'text', text: 'a' },
        { kind: 'text', text: 'b' },
        { kind: 'data', data: { x: 1 } },
      ],
    });
  });

  for (const [what, params, code] of [
    ['no message', {}, -32602],
    ['a message that is a string', { message: 'hi' }, -32602],
    ['parts that are an object', { message: { parts: {} } }, -32602],
    ['a part that is a number', { message: { parts: [1] } }, -32602],
    ['a file part', { message: { parts: [{ kind: 'file', file: {} }] } }, -32005],
    ['a skill that is a number', { message: { metadata: { skill: 1 } } }, -32602],
    ['an input that is an array', { message: { metadata: { input: [] } } }, -32602],
    ['metadata that is a string', { message: { metadata: 'x' } }, -32602],
    ['a taskId that is an object', { message: { taskId: {} } }, -32602],
  ] as const) {
    it(`refuses ${what}`, () => {
      assert.equal(
        codeOf(() => readMessage(params as Record<string, unknown>)),
        code,
      );
    });
  }
});

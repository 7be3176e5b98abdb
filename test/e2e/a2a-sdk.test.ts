/**
 * A2A 1.0 end to end with the official A2A JS SDK client (`@a2a-js/sdk`) against the built
 * server: discovery through the Agent Card, a task for every example workflow (blocking, and
 * polled with GetTask), ListTasks pages, a long task cancelled, a stream, a paused workflow
 * that becomes input-required and completes after a follow-up message, and two principals
 * that cannot see each other's tasks while the card stays public.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import { a2aStarter, sdkClient } from '../helpers/a2a.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { send } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';

const EXAMPLES = resolve(REPO_ROOT, 'examples');
const RUNS = resolve(REPO_ROOT, 'test/fixtures/runs');
const start = a2aStarter();

/** What each example workflow is sent, and what its result must show. */
const EXAMPLE_INPUTS: Record<string, Record<string, unknown>> = {
  RepoReport: { repo: REPO_ROOT, commits: 2 },
  TodoScan: { folder: EXAMPLES, pattern: 'EXAMPLE-MARKER-[0-9]+' },
};

function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: '' };
}

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' };
}

function userMessage(parts: Part[], metadata?: Record<string, unknown>, taskId = ''): Message {
  return {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    contextId: '',
    taskId,
    role: Role.ROLE_USER,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendParams(message: Message, returnImmediately = false) {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately,
    },
    metadata: undefined,
  };
}

function asTask(result: Task | Message): Task {
  assert.ok('status' in result, `a task, not a message: ${JSON.stringify(result)}`);
  return result as Task;
}

/** The result artifact's data part. */
function resultData(task: Task): Record<string, unknown> {
  const part = task.artifacts[0]?.parts.find((p) => p.content?.$case === 'data');
  assert.ok(part?.content?.$case === 'data', `a data part in ${JSON.stringify(task.artifacts)}`);
  return part.content.value as Record<string, unknown>;
}

function codeOf(error: unknown): number | undefined {
  return (error as { envelopeCode?: number }).envelopeCode;
}

describe('A2A 1.0 through the official SDK client', () => {
  it('discovers the card, runs every example workflow blocking and polled, and lists the tasks', async () => {
    const server = start(EXAMPLES);
    const port = await server.ready;
    const client = await sdkClient(port);
    assert.equal(client.protocolVersion, '1.0');
    const card = await client.getAgentCard();
    assert.deepEqual(
      card.skills.map((s) => s.id),
      ['RepoReport', 'TodoScan'],
    );
    assert.equal(card.capabilities?.streaming, true);
    const versions = card.supportedInterfaces.map((i) => i.protocolVersion).sort();
    assert.deepEqual(versions, ['0.3', '1.0']);

    const ids: string[] = [];
    for (const [skill, input] of Object.entries(EXAMPLE_INPUTS)) {
      // Blocking: the answer is the finished task.
      const done = asTask(
        await client.sendMessage(sendParams(userMessage([dataPart(input)], { skill }))),
      );
      assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(done));
      ids.push(done.id);
      // Returned at once, then polled with GetTask to completion.
      const started = asTask(
        await client.sendMessage(
          sendParams(userMessage([textPart('ignored')], { skill, input }), true),
        ),
      );
      ids.push(started.id);
      const polled = await until(
        async () => {
          const task = await client.getTask({ tenant: '', id: started.id });
          return task.status?.state === TaskState.TASK_STATE_COMPLETED && task;
        },
        { what: `${skill} to complete`, timeoutMs: 20_000 },
      );
      assert.deepEqual(resultData(polled), resultData(done));
      const text = polled.artifacts[0]?.parts.find((p) => p.content?.$case === 'text');
      assert.ok(text?.content?.$case === 'text');
      assert.deepEqual(JSON.parse(text.content.value), resultData(done));
    }
    const todo = resultData(await client.getTask({ tenant: '', id: ids[2] as string }));
    assert.equal(todo['count'], 1);

    // Pages of one, in id order, until the token runs out.
    const seen: string[] = [];
    let pageToken = '';
    for (let page = 0; page < 10; page++) {
      const listed = await client.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 1,
        pageToken,
        statusTimestampAfter: undefined,
      });
      assert.equal(listed.totalSize, 4);
      seen.push(...listed.tasks.map((t) => t.id));
      pageToken = listed.nextPageToken;
      if (pageToken === '') break;
    }
    assert.deepEqual(seen, [...ids].sort());
  });

  it('cancels a long task, whose command dies, and refuses a second cancel with TaskNotCancelable', async () => {
    const server = start(RUNS);
    const port = await server.ready;
    const client = await sdkClient(port);
    const dir = tempDir('a2a-cancel-');
    // Blocker has one string input: a lone text part is its `dir`.
    const task = asTask(
      await client.sendMessage(
        sendParams(userMessage([textPart(dir)], { skill: 'Blocker' }), true),
      ),
    );
    const pid = await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step' });
    const working = await client.getTask({ tenant: '', id: task.id });
    assert.equal(working.status?.state, TaskState.TASK_STATE_WORKING);
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await until(() => !isAlive(pid), { what: 'the held command to die' });
    await assert.rejects(
      client.cancelTask({ tenant: '', id: task.id, metadata: undefined }),
      (error) => codeOf(error) === -32002,
    );
  });

  it('streams a task from submission to its result', async () => {
    const server = start(RUNS);
    const port = await server.ready;
    const client = await sdkClient(port);
    const cases: string[] = [];
    let last: number | undefined;
    let data: unknown;
    for await (const event of client.sendMessageStream(
      sendParams(userMessage([], { skill: 'Count', input: { label: 'streamed' } })),
    )) {
      const payload = event.payload;
      assert.ok(payload !== undefined);
      cases.push(payload.$case);
      if (payload.$case === 'task') {
        last = payload.value.status?.state;
        if (payload.value.artifacts.length > 0) data = resultData(payload.value);
      } else if (payload.$case === 'statusUpdate') {
        last = payload.value.status?.state;
      } else if (payload.$case === 'artifactUpdate') {
        const part = payload.value.artifact?.parts.find((p) => p.content?.$case === 'data');
        data = part?.content?.$case === 'data' ? part.content.value : undefined;
      }
    }
    assert.equal(cases[0], 'task');
    assert.equal(last, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(data, { label: 'streamed', total: 465 });
  });

  it('a pausing workflow is input-required, and a follow-up message on its task completes it', async () => {
    const server = start(RUNS);
    const port = await server.ready;
    const client = await sdkClient(port);
    const paused = asTask(
      await client.sendMessage(sendParams(userMessage([], { skill: 'Approval' }))),
    );
    assert.equal(paused.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const reason = paused.status?.message?.parts[0]?.content;
    assert.deepEqual(reason, { $case: 'text', value: 'waiting for approval' });
    const resumed = asTask(
      await client.sendMessage(
        sendParams(userMessage([dataPart({ approved: true, who: 'ann' })], undefined, paused.id)),
      ),
    );
    assert.equal(resumed.id, paused.id);
    assert.equal(resumed.status?.state, TaskState.TASK_STATE_COMPLETED, JSON.stringify(resumed));
    assert.deepEqual(resultData(resumed)['trail'], ['draft', 'approved by ann', 'shipped']);
    // Finished: a further message is refused (UnsupportedOperation), the task unchanged.
    await assert.rejects(
      client.sendMessage(sendParams(userMessage([], undefined, paused.id))),
      (error) => codeOf(error) === -32004,
    );
  });

  it('keeps each principal to its own tasks, while the card stays public', async () => {
    const token = 'a2a-test-token-0123456789';
    const server = start(RUNS, ['--token', token, '--principal-header', 'X-Principal']);
    const port = await server.ready;
    const card = await send(port, { method: 'GET', path: '/.well-known/agent-card.json' });
    assert.equal(card.status, 200);
    assert.ok(!card.text.includes(token));
    assert.ok(!card.text.includes(REPO_ROOT), 'no server path in the card');
    assert.ok('securitySchemes' in card.json());
    const legacy = await send(port, { method: 'GET', path: '/.well-known/agent.json' });
    assert.equal(legacy.text, card.text);
    const anonymous = await send(port, {
      path: '/a2a',
      body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
    });
    assert.equal(anonymous.status, 401);

    const bearer = { authorization: `Bearer ${token}` };
    const alice = await sdkClient(port, { ...bearer, 'x-principal': 'alice' });
    const bob = await sdkClient(port, { ...bearer, 'x-principal': 'bob' });
    const dir = tempDir('a2a-owner-');
    const task = asTask(
      await alice.sendMessage(sendParams(userMessage([textPart(dir)], { skill: 'Blocker' }), true)),
    );
    await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step' });
    const unknown = 'f'.repeat(32);
    const messages: string[] = [];
    for (const attempt of [
      () => bob.getTask({ tenant: '', id: task.id }),
      () => bob.getTask({ tenant: '', id: unknown }),
      () => bob.cancelTask({ tenant: '', id: task.id, metadata: undefined }),
      () => bob.sendMessage(sendParams(userMessage([], undefined, task.id))),
    ]) {
      await assert.rejects(attempt(), (error) => {
        messages.push((error as Error).message);
        return codeOf(error) === -32001;
      });
    }
    assert.equal(new Set(messages).size, 1, `one answer for all: ${messages}`);
    const bobs = await bob.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    assert.equal(bobs.tasks.length, 0);
    const still = await alice.getTask({ tenant: '', id: task.id });
    assert.equal(still.status?.state, TaskState.TASK_STATE_WORKING);
    writeFileSync(join(dir, 'go'), '');
    await until(
      async () =>
        (await alice.getTask({ tenant: '', id: task.id })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
      { what: 'alice’s task to complete' },
    );
  });
});

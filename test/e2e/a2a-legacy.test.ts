/**
 * A2A 0.3 (and 0.2) with a raw JSON-RPC client, as the Go mhl client and older agents speak it:
 * `message/send` (blocking and not), `tasks/get`, `tasks/list`, `tasks/cancel`, `message/stream`,
 * lowercase states and `kind` on every part. And tasks are runs: on `mhl serve mcp --http`, a
 * task started over A2A is the run `run/status` reports, and a run started with `run/start` is
 * the task `GetTask` reports, for the same (anonymous) owner.
 */
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { a2a, a2aStarter, messageV1, messageV03 } from '../helpers/a2a.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { call, exchange, resultOf, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { readPid } from '../helpers/processes.js';

const EXAMPLES = resolve(REPO_ROOT, 'examples');
const RUNS = resolve(REPO_ROOT, 'test/fixtures/runs');
const start = a2aStarter();
const startMcp = serverStarter(RUNS);

const INPUTS: Record<string, Record<string, unknown>> = {
  RepoReport: { repo: REPO_ROOT, commits: 2 },
  TodoScan: { folder: EXAMPLES, pattern: 'EXAMPLE-MARKER-[0-9]+' },
};

type Json = Record<string, unknown>;

function stateOf(task: Json): unknown {
  return (task['status'] as Json)['state'];
}

describe('A2A 0.3 with a raw JSON-RPC client', () => {
  it('sends to every example workflow, waits or polls tasks/get, lists and cancels', async () => {
    const server = start(EXAMPLES);
    const port = await server.ready;
    const ids: string[] = [];
    for (const [skill, input] of Object.entries(INPUTS)) {
      const reply = await a2a(port, 'message/send', {
        message: messageV03([{ kind: 'data', data: input }], { skill }),
        configuration: { blocking: true },
      });
      assert.equal(reply.headers['a2a-version'], '0.3');
      const task = resultOf(reply, 'message/send');
      assert.equal(task['kind'], 'task');
      assert.equal(stateOf(task), 'completed', reply.text);
      const parts = ((task['artifacts'] as Json[])[0] as Json)['parts'] as Json[];
      assert.deepEqual(
        parts.map((p) => p['kind']),
        ['data', 'text'],
      );
      assert.deepEqual(
        JSON.parse((parts[1] as Json)['text'] as string),
        (parts[0] as Json)['data'],
      );
      ids.push(task['id'] as string);
      // Without blocking the answer comes at once; tasks/get follows it (0.2 header too).
      const queued = resultOf(
        await a2a(
          port,
          'message/send',
          { message: messageV03([], { skill, input }) },
          { version: '0.2' },
        ),
        'message/send',
      );
      ids.push(queued['id'] as string);
      await until(
        async () =>
          stateOf(resultOf(await a2a(port, 'tasks/get', { id: queued['id'] }), 'tasks/get')) ===
          'completed',
        { what: `${skill} to complete`, timeoutMs: 20_000 },
      );
    }
    const listed = resultOf(await a2a(port, 'tasks/list', { status: 'completed' }), 'tasks/list');
    assert.deepEqual(
      (listed['tasks'] as Json[]).map((t) => t['id']),
      [...ids].sort(),
    );
    assert.equal(listed['totalSize'], 4);
    // Finished tasks cannot be canceled: -32002.
    const late = await a2a(port, 'tasks/cancel', { id: ids[0] });
    assert.equal((late.json()['error'] as Json)['code'], -32002);
  });

  it('cancels a long task and streams one with message/stream', async () => {
    const server = start(RUNS);
    const port = await server.ready;
    const dir = tempDir('a2a-legacy-');
    const task = resultOf(
      await a2a(port, 'message/send', {
        message: messageV03([{ kind: 'text', text: dir }], { skill: 'Blocker' }),
      }),
      'message/send',
    );
    await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step' });
    const canceled = resultOf(await a2a(port, 'tasks/cancel', { id: task['id'] }), 'tasks/cancel');
    assert.equal(stateOf(canceled), 'canceled');
    assert.equal(((canceled['status'] as Json)['message'] as Json)['role'], 'agent');

    const { head, reply } = exchange(port, {
      path: '/',
      headers: { accept: 'text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 'stream-1',
        method: 'message/stream',
        params: { message: messageV03([], { skill: 'Count' }) },
      },
    });
    assert.match(String((await head).headers['content-type']), /^text\/event-stream/);
    const events = (await reply).text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => JSON.parse(block.slice('data: '.length)) as Json);
    assert.ok(events.every((e) => e['id'] === 'stream-1'));
    const results = events.map((e) => e['result'] as Json);
    assert.equal(results[0]?.['kind'], 'task');
    const last = results.at(-1) as Json;
    const finalState = last['kind'] === 'task' ? stateOf(last) : (last['status'] as Json)['state'];
    assert.equal(finalState, 'completed');
    if (last['kind'] === 'status-update') assert.equal(last['final'], true);
  });

  it('a paused workflow is input-required and a follow-up message/send completes it', async () => {
    const server = start(RUNS);
    const port = await server.ready;
    const paused = resultOf(
      await a2a(port, 'message/send', {
        message: messageV03([], { skill: 'Approval' }),
        configuration: { blocking: true },
      }),
      'message/send',
    );
    assert.equal(stateOf(paused), 'input-required');
    const said = ((paused['status'] as Json)['message'] as Json)['parts'] as Json[];
    assert.deepEqual(said, [{ kind: 'text', text: 'waiting for approval' }]);
    const done = resultOf(
      await a2a(port, 'message/send', {
        message: messageV03([], { input: { approved: true } }, paused['id'] as string),
        configuration: { blocking: true },
      }),
      'message/send',
    );
    assert.equal(stateOf(done), 'completed', JSON.stringify(done));
  });

  it('answers a blocking send still working once the wait bound passed (MHL_SERVE_A2A_WAIT)', async () => {
    const server = start(RUNS, [], { MHL_SERVE_A2A_WAIT: '300ms' });
    const port = await server.ready;
    const dir = tempDir('a2a-wait-');
    const began = Date.now();
    const reply = await a2a(
      port,
      'SendMessage',
      { message: messageV1([{ text: dir }], { skill: 'Blocker' }) },
      { version: '1.0' },
    );
    const task = resultOf(reply, 'SendMessage')['task'] as Json;
    assert.equal(stateOf(task), 'TASK_STATE_WORKING');
    assert.ok(Date.now() - began >= 300, 'held for the bound');
    const legacy = resultOf(
      await a2a(port, 'message/send', {
        message: messageV03([{ kind: 'text', text: tempDir('a2a-wait-') }], { skill: 'Blocker' }),
        configuration: { blocking: true },
      }),
      'message/send',
    );
    assert.equal(stateOf(legacy), 'working');
    const canceled = resultOf(
      await a2a(port, 'CancelTask', { id: task['id'] }, { version: '1.0' }),
      'CancelTask',
    );
    assert.equal(stateOf(canceled), 'TASK_STATE_CANCELED');
  });

  it('on serve mcp --http, an A2A task is a run for run/status, and a run is a task for GetTask', async () => {
    const server = startMcp();
    const port = await server.ready;
    const card = await exchange(port, { method: 'GET', path: '/.well-known/agent-card.json' })
      .reply;
    const url = (card.json()['supportedInterfaces'] as Json[])[0]?.['url'];
    assert.equal(url, `http://127.0.0.1:${port}/a2a`);

    const task = resultOf(
      await a2a(
        port,
        'SendMessage',
        { message: messageV1([{ data: { label: 'via-a2a' } }], { skill: 'Count' }) },
        { version: '1.0' },
      ),
      'SendMessage',
    )['task'] as Json;
    assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
    const run = await call(port, 'run/status', { runId: task['id'] });
    assert.equal(run['state'], 'completed');
    assert.deepEqual(run['vars'], { label: 'via-a2a', total: 465 });

    const started = await call(port, 'run/start', {
      name: 'Count',
      arguments: { label: 'via-mcp', context: { cwd: REPO_ROOT } },
    });
    const seen = await until(
      async () => {
        const got = resultOf(
          await a2a(port, 'GetTask', { id: started['runId'] }, { version: '1.0' }),
          'GetTask',
        );
        return stateOf(got) === 'TASK_STATE_COMPLETED' && got;
      },
      { what: 'the MCP run as a completed task' },
    );
    const parts = ((seen['artifacts'] as Json[])[0] as Json)['parts'] as Json[];
    assert.deepEqual((parts[0] as Json)['data'], { label: 'via-mcp', total: 465 });
  });
});

/**
 * A2A tasks are runs of the one run registry: they take the same `--max-active` slots as
 * `run/start` (a task past them is submitted, i.e. queued, until a slot frees), a subscriber
 * follows a task to its end, and with `--state-dir` a principal's task outlives the process:
 * after a restart its owner (and only its owner) reads and resumes it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { a2a, a2aStarter, messageV1, sdkClient } from '../helpers/a2a.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { call, modern, resultOf, serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';
import { readPid } from '../helpers/processes.js';

const RUNS = resolve(REPO_ROOT, 'test/fixtures/runs');
const start = a2aStarter();
const startMcp = serverStarter(RUNS);
const V1 = { version: '1.0' };

type Json = Record<string, unknown>;

function taskOf(reply: Awaited<ReturnType<typeof a2a>>, what: string): Json {
  const result = resultOf(reply, what);
  return (result['task'] ?? result) as Json;
}

function stateOf(task: Json): unknown {
  return (task['status'] as Json)['state'];
}

describe('A2A tasks as runs', () => {
  it('shares --max-active with run/start, and a subscriber follows a task to its end', async () => {
    const server = startMcp(['--max-active', '1']);
    const port = await server.ready;
    const dir = tempDir('a2a-slots-');
    const held = taskOf(
      await a2a(
        port,
        'SendMessage',
        {
          message: messageV1([{ text: dir }], { skill: 'Blocker' }),
          configuration: { returnImmediately: true },
        },
        V1,
      ),
      'SendMessage',
    );
    await until(() => readPid(join(dir, 'hold.pid')), { what: 'the Hold step' });
    // The one slot is taken: a task and a run both wait for it.
    const waiting = taskOf(
      await a2a(
        port,
        'SendMessage',
        {
          message: messageV1([], { skill: 'Count' }),
          configuration: { returnImmediately: true },
        },
        V1,
      ),
      'SendMessage',
    );
    assert.equal(stateOf(waiting), 'TASK_STATE_SUBMITTED');
    const run = await call(port, 'run/start', {
      name: 'Count',
      arguments: { context: { cwd: REPO_ROOT } },
    });
    assert.equal(run['state'], 'queued');

    const states: number[] = [];
    const subscriber = (async () => {
      const sdk = await sdkClient(port);
      for await (const event of sdk.resubscribeTask({ tenant: '', id: held['id'] as string })) {
        const payload = event.payload;
        if (payload?.$case === 'task') states.push(payload.value.status?.state ?? -1);
        if (payload?.$case === 'statusUpdate') states.push(payload.value.status?.state ?? -1);
      }
    })();
    await until(() => states.length > 0, { what: 'the subscription’s first event' });
    writeFileSync(join(dir, 'go'), '');
    await subscriber;
    assert.equal(states[0], TaskState.TASK_STATE_WORKING);
    assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED);
    for (const id of [waiting['id'], run['runId']]) {
      await until(
        async () =>
          stateOf(taskOf(await a2a(port, 'GetTask', { id }, V1), 'GetTask')) ===
          'TASK_STATE_COMPLETED',
        { what: `${String(id)} to complete once the slot freed` },
      );
    }
  });

  it('shows a principal’s A2A task to the same principal’s run/status, and to nobody else', async () => {
    const token = 'mcp-a2a-token-0123456789';
    const server = startMcp(['--token', token, '--principal-header', 'X-Principal']);
    const port = await server.ready;
    const headers = (who: string) => ({ authorization: `Bearer ${token}`, 'x-principal': who });
    const task = taskOf(
      await a2a(
        port,
        'SendMessage',
        { message: messageV1([], { skill: 'Count' }) },
        { ...V1, headers: headers('ann') },
      ),
      'SendMessage',
    );
    assert.equal(stateOf(task), 'TASK_STATE_COMPLETED');
    const own = await call(port, 'run/status', { runId: task['id'] }, headers('ann'));
    assert.equal(own['state'], 'completed');
    const foreign = await modern(port, 'run/status', { runId: task['id'] }, headers('bob'));
    assert.equal((foreign.json()['error'] as Json)['code'], -32602);
  });

  it('keeps a principal’s paused task across a restart with --state-dir', async () => {
    const stateDir = tempDir('a2a-state-');
    const token = 'restart-token-0123456789';
    const args = ['--state-dir', stateDir, '--token', token, '--principal-header', 'X-Principal'];
    const as = (who: string) => ({
      ...V1,
      headers: { authorization: `Bearer ${token}`, 'x-principal': who },
    });
    const first = start(RUNS, args);
    let port = await first.ready;
    const paused = taskOf(
      await a2a(port, 'SendMessage', { message: messageV1([], { skill: 'Approval' }) }, as('ann')),
      'SendMessage',
    );
    assert.equal(stateOf(paused), 'TASK_STATE_INPUT_REQUIRED');
    assert.equal(await first.stop(), 0);

    const second = start(RUNS, args);
    port = await second.ready;
    const id = paused['id'];
    const foreign = await a2a(port, 'GetTask', { id }, as('bob'));
    assert.equal((foreign.json()['error'] as Json)['code'], -32001);
    const again = taskOf(await a2a(port, 'GetTask', { id }, as('ann')), 'GetTask');
    assert.equal(stateOf(again), 'TASK_STATE_INPUT_REQUIRED');
    const done = taskOf(
      await a2a(
        port,
        'SendMessage',
        { message: messageV1([{ data: { approved: true, who: 'ann' } }], undefined, id as string) },
        as('ann'),
      ),
      'SendMessage',
    );
    assert.equal(stateOf(done), 'TASK_STATE_COMPLETED', JSON.stringify(done));
  });
});

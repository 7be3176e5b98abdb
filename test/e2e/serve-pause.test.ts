/**
 * A workflow that pauses during a synchronous `tools/call` is never answered as a success:
 * 2026-07-28 gets `input_required` keyed by the pausing step (raw HTTP and the SDK v2 client
 * complete it by retrying; the refusals of bad retries are in serve-pause-retry.test.ts), a
 * legacy client that declared elicitation gets an `elicitation/create` request (SDK v1 over
 * stdio and Streamable HTTP), any other client and any job get `WORKFLOW_PAUSED`. The fixture's
 * first step appends to a marks file, so every completion also proves it was not run again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from '../helpers/cli.js';
import { MODERN_VERSION, rpc, send, serverStarter } from '../helpers/http-server.js';
import {
  accept,
  diagnostic,
  PAUSE_FOLDER as FOLDER,
  type Json,
  KEY,
  marks,
  modernCall,
  REASON,
  resultOf,
} from '../helpers/pause.js';
import { stdioStarter } from '../helpers/stdio-server.js';

const start = serverStarter(FOLDER);
const startStdio = stdioStarter();

describe('a pausing workflow over 2026-07-28 (HTTP)', () => {
  it('answers input_required with a form, and the retry resumes at the pausing step', async () => {
    const port = await start().ready;
    const m = marks();
    const first = resultOf(await modernCall(port, 'Approve', { marks: m.path }));
    assert.equal(first['resultType'], 'input_required');
    assert.equal(typeof first['requestState'], 'string');
    assert.equal('isError' in first, false);
    assert.deepEqual(Object.keys(first['inputRequests'] as Json), [KEY]);
    assert.deepEqual((first['inputRequests'] as Json)[KEY], {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: REASON,
        requestedSchema: {
          type: 'object',
          properties: {
            marks: { type: 'string', title: 'marks', default: m.path },
            approved: { type: 'string', title: 'approved', default: 'no' },
            note: { type: 'string', title: 'note', default: '' },
          },
        },
      },
    });
    assert.equal(m.count(), 1);
    const state = String(first['requestState']);
    const done = resultOf(
      await modernCall(
        port,
        'Approve',
        { marks: m.path },
        accept(state, { approved: 'yes', note: 'ok' }),
      ),
    );
    assert.equal(done['resultType'], 'complete');
    assert.deepEqual(done['structuredContent'], { trail: ['marked', 'approved'], note: 'ok' });
    assert.equal(m.count(), 1, 'the step before the pause did not run again');

    // An answer that does not satisfy the step pauses again: a new question, a new state.
    const again = resultOf(
      await modernCall(port, 'Approve', { marks: m.path }, accept(state, { approved: 'maybe' })),
    );
    assert.equal(again['resultType'], 'input_required');
    assert.notEqual(again['requestState'], state);
    assert.equal(m.count(), 1);
  });

  it('answers WORKFLOW_PAUSED to a client that declared no form elicitation', async () => {
    const port = await start().ready;
    const m = marks();
    for (const capabilities of [{}, { elicitation: { url: {} } }]) {
      const result = resultOf(
        await modernCall(port, 'Approve', { marks: m.path }, {}, capabilities),
      );
      assert.equal(result['resultType'], 'complete');
      const found = diagnostic(result);
      assert.deepEqual([found['code'], found['reason']], ['WORKFLOW_PAUSED', REASON]);
      assert.match(String(found['hint']), /mhl_run_start/);
    }
    // Declared as in 2025-06-18 (an empty object): form elicitation.
    const asked = resultOf(
      await modernCall(port, 'Approve', { marks: m.path }, {}, { elicitation: {} }),
    );
    assert.equal(asked['resultType'], 'input_required');
  });

  it('answers a decline or cancel with WORKFLOW_PAUSED and the reason', async () => {
    const port = await start().ready;
    const m = marks();
    const state = String(
      resultOf(await modernCall(port, 'Approve', { marks: m.path }))['requestState'],
    );
    for (const action of ['decline', 'cancel']) {
      const result = resultOf(
        await modernCall(
          port,
          'Approve',
          { marks: m.path },
          { inputResponses: { [KEY]: { action } }, requestState: state },
        ),
      );
      const found = diagnostic(result);
      assert.deepEqual(
        [found['code'], found['reason'], found['retryable']],
        ['WORKFLOW_PAUSED', REASON, false],
      );
    }
  });

  it('completes with the SDK v2 client pinned to 2026-07-28 and an elicitation handler', async () => {
    const port = await start().ready;
    const m = marks();
    const v2 = await import('@modelcontextprotocol/client');
    const client = new v2.Client(
      { name: 'e2e-v2', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN_VERSION } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { approved: 'yes', note: 'v2' } };
    });
    await client.connect(
      new v2.StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN_VERSION);
      const result = await client.callTool({ name: 'Approve', arguments: { marks: m.path } });
      assert.deepEqual(result.structuredContent, { trail: ['marked', 'approved'], note: 'v2' });
      assert.deepEqual(asked, [REASON]);
      assert.equal(m.count(), 1);
    } finally {
      await client.close();
    }
  });
});

describe('a pausing workflow over 2026-07-28 (stdio)', () => {
  it('completes with the SDK v2 client pinned to 2026-07-28 and an elicitation handler', async () => {
    const m = marks();
    const v2 = await import('@modelcontextprotocol/client');
    const { StdioClientTransport: V2Stdio } = await import('@modelcontextprotocol/client/stdio');
    const client = new v2.Client(
      { name: 'e2e-v2', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN_VERSION } },
        capabilities: { elicitation: { form: {} } },
      },
    );
    let asked = 0;
    client.setRequestHandler('elicitation/create', async () => {
      asked += 1;
      return { action: 'accept', content: { approved: 'yes' } };
    });
    await client.connect(
      new V2Stdio({
        command: process.execPath,
        args: [CLI, 'serve', 'mcp', FOLDER],
        stderr: 'ignore',
      }),
    );
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN_VERSION);
      const result = await client.callTool({ name: 'Approve', arguments: { marks: m.path } });
      assert.deepEqual(result.structuredContent, { trail: ['marked', 'approved'], note: '' });
      assert.equal(asked, 1);
      assert.equal(m.count(), 1);
    } finally {
      await client.close();
    }
  });
});

/** An SDK v1 client on 2025-11-25, over stdio or Streamable HTTP, with or without elicitation. */
async function legacyClient(
  over: 'stdio' | 'http',
  answer: ((message: string) => Json) | undefined,
): Promise<Client> {
  const client = new Client(
    { name: 'e2e-v1', version: '1.0.0' },
    answer === undefined ? {} : { capabilities: { elicitation: {} } },
  );
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as { message: string; requestedSchema?: unknown };
      assert.equal(
        (params.requestedSchema as { properties: Json }).properties['approved'] !== undefined,
        true,
      );
      return answer(params.message);
    });
  }
  let transport: Transport;
  if (over === 'stdio') {
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', FOLDER],
      stderr: 'ignore',
    });
  } else {
    const port = await start().ready;
    transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  }
  await client.connect(transport);
  assert.equal(client.getServerVersion()?.name, 'mhl');
  return client;
}

for (const over of ['stdio', 'http'] as const) {
  describe(`a pausing workflow on a 2025-11-25 session (${over})`, () => {
    it('asks an elicitation-capable client and resumes at the pausing step', async () => {
      const m = marks();
      const asked: string[] = [];
      const client = await legacyClient(over, (message) => {
        asked.push(message);
        return { action: 'accept', content: { approved: 'yes', note: over } };
      });
      try {
        const result = await client.callTool({ name: 'Approve', arguments: { marks: m.path } });
        assert.deepEqual(result.structuredContent, { trail: ['marked', 'approved'], note: over });
        assert.deepEqual(asked, [REASON]);
        assert.equal(m.count(), 1, 'the step before the pause did not run again');
      } finally {
        await client.close();
      }
    });

    it('answers a decline with WORKFLOW_PAUSED', async () => {
      const m = marks();
      const client = await legacyClient(over, () => ({ action: 'decline' }));
      try {
        const result = (await client.callTool({
          name: 'Approve',
          arguments: { marks: m.path },
        })) as Json;
        const found = diagnostic(result);
        assert.deepEqual([found['code'], found['reason']], ['WORKFLOW_PAUSED', REASON]);
      } finally {
        await client.close();
      }
    });

    it('answers a client without elicitation with WORKFLOW_PAUSED and the mhl_run_start hint', async () => {
      const m = marks();
      const client = await legacyClient(over, undefined);
      try {
        const result = (await client.callTool({
          name: 'Approve',
          arguments: { marks: m.path },
        })) as Json;
        const found = diagnostic(result);
        assert.deepEqual(
          [found['code'], found['reason'], found['retryable']],
          ['WORKFLOW_PAUSED', REASON, false],
        );
        assert.match(String(found['hint']), /mhl_run_start/);
        assert.equal('structuredContent' in result, false, 'no partial vars as a result');
        assert.equal(m.count(), 1);
      } finally {
        await client.close();
      }
    });
  });
}

describe('a pausing workflow started as a job', () => {
  it('ends the job failed with WORKFLOW_PAUSED, whatever the client could answer', async () => {
    const server = start();
    const port = await server.ready;
    const m = marks();
    // Retry material on the job.start call is not the job's: it must not reach the workflow.
    const retry = { requestState: 'mhl1.junk', inputResponses: { Review: { action: 'accept' } } };
    const started = resultOf(
      await modernCall(port, 'job.start', { tool: 'Approve', arguments: { marks: m.path } }, retry),
    );
    const id = String((started['structuredContent'] as Json)['job_id']);
    await server.logged(new RegExp(`"job_id":"${id}"[^\\n]*"msg":"job exited"`));
    const job = resultOf(await modernCall(port, 'job.result', { job_id: id }));
    const view = job['structuredContent'] as Json;
    assert.equal(view['status'], 'failed');
    const found = diagnostic(view['result'] as Json);
    assert.deepEqual([found['code'], found['reason']], ['WORKFLOW_PAUSED', REASON]);
    assert.equal(m.count(), 1);
  });
});

/**
 * A raw stdio client of the fixture's server, its legacy session initialized with form
 * elicitation declared: `write` a message, wait for the `next` line a predicate accepts.
 */
async function rawStdio() {
  const server = startStdio(FOLDER);
  server.send(
    JSON.stringify(
      rpc(1, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw', version: '1' },
      }),
    ),
  );
  await server.line((msg) => msg['id'] === 1);
  return {
    lines: server.lines,
    next: (match: (m: Json) => boolean) => server.line(match) as Promise<Json>,
    write: (message: Json) => server.send(JSON.stringify(message)),
    end: () => server.end(),
  };
}

describe('a pausing workflow and raw legacy clients', () => {
  it('withdraws its elicitation/create when the client cancels the call (stdio)', async () => {
    const raw = await rawStdio();
    const m = marks();
    raw.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    raw.write(rpc(2, 'tools/call', { name: 'Approve', arguments: { marks: m.path } }));
    const asked = await raw.next((msg) => msg['method'] === 'elicitation/create');
    assert.equal((asked['params'] as Json)['message'], REASON);
    raw.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    const withdrawn = await raw.next((msg) => msg['method'] === 'notifications/cancelled');
    assert.equal((withdrawn['params'] as Json)['requestId'], asked['id']);
    // The same workflow again, answered this time: the answer line reaches the waiting call.
    raw.write(rpc(3, 'tools/call', { name: 'Approve', arguments: { marks: m.path } }));
    const again = await raw.next(
      (msg) => msg['method'] === 'elicitation/create' && msg['id'] !== asked['id'],
    );
    raw.write({
      jsonrpc: '2.0',
      id: again['id'],
      result: { action: 'accept', content: { approved: 'yes' } },
    });
    const done = await raw.next((msg) => msg['id'] === 3);
    assert.deepEqual((done['result'] as Json)['structuredContent'], {
      trail: ['marked', 'approved'],
      note: '',
    });
    assert.equal(
      raw.lines.filter((msg) => msg['id'] === 2).length,
      0,
      'a cancelled call gets no answer',
    );
    assert.equal(await raw.end(), 0);
    assert.equal(m.count(), 2, 'one mark per call, none for the resume');
  });

  it('counts the wait for an answer against the call time limit (stdio)', async () => {
    const raw = await rawStdio();
    const m = marks();
    const args = { marks: m.path, context: { timeout_ms: 400 } };
    raw.write(rpc(2, 'tools/call', { name: 'Approve', arguments: args }));
    const asked = await raw.next((msg) => msg['method'] === 'elicitation/create');
    // Never answered: the call's own deadline ends it, and the question is withdrawn.
    const done = await raw.next((msg) => msg['id'] === 2);
    const found = diagnostic(resultOf(done));
    assert.deepEqual([found['code'], found['retryable']], ['TIMEOUT', true]);
    const withdrawn = await raw.next((msg) => msg['method'] === 'notifications/cancelled');
    assert.equal((withdrawn['params'] as Json)['requestId'], asked['id']);
    assert.equal(await raw.end(), 0);
  });

  it('reports WORKFLOW_PAUSED at once to an HTTP client that cannot take an event stream', async () => {
    const port = await start().ready;
    const m = marks();
    const json = { accept: 'application/json', 'mcp-protocol-version': '2025-11-25' };
    const init = await send(port, {
      headers: json,
      body: rpc(1, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw', version: '1' },
      }),
    });
    const session = String(init.headers['mcp-session-id']);
    const headers = { ...json, 'mcp-session-id': session };
    await send(port, { headers, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    const reply = await send(port, {
      headers,
      body: rpc(2, 'tools/call', { name: 'Approve', arguments: { marks: m.path } }),
    });
    assert.equal(String(reply.headers['content-type']).startsWith('application/json'), true);
    const found = diagnostic(resultOf(reply.json()));
    assert.deepEqual([found['code'], found['reason']], ['WORKFLOW_PAUSED', REASON]);
  });
});

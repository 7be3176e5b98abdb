/**
 * Durable async runs on stdio, end to end with the official SDK v1 client: the `mhl_run_*`
 * tools, the `run/*` methods and the owner-gated `mhl://run/*` resources, and a run that
 * survives the client restarting the server when `--state-dir` is set.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { until } from '../helpers/poll.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/runs');
const AnyResult = z.object({}).passthrough();

async function connect(args: readonly string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', 'mcp', FOLDER, ...args],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'runs-stdio', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The run view a run tool answered, failing the test on a tool error. */
async function runTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return result.structuredContent as Record<string, unknown>;
}

/** Polls `mhl_run_status` until the run leaves queued/working, for up to 30 s. */
function settle(client: Client, runId: string): Promise<Record<string, unknown>> {
  return until(
    async () => {
      const view = await runTool(client, 'mhl_run_status', { runId });
      return view['state'] !== 'working' && view['state'] !== 'queued' && view;
    },
    { what: `run ${runId} to settle`, timeoutMs: 30_000 },
  );
}

describe('async runs on stdio', () => {
  it('runs a workflow with mhl_run_start and serves its status, logs and result', async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const tool of ['mhl_run_start', 'mhl_run_status', 'mhl_run_logs', 'mhl_run_list']) {
        assert.ok(names.includes(tool), `${tool} is listed on stdio`);
      }
      const started = await runTool(client, 'mhl_run_start', {
        workflow: 'Count',
        arguments: { label: 'stdio' },
      });
      const runId = started['runId'] as string;
      const done = await settle(client, runId);
      assert.equal(done['state'], 'completed');
      assert.deepEqual(done['vars'], { label: 'stdio', total: 465 });
      const status = await client.request({ method: 'run/status', params: { runId } }, AnyResult);
      assert.equal(status['state'], 'completed');
      const result = await client.readResource({ uri: `mhl://run/${runId}/result` });
      const first = result.contents[0] as { text: string };
      assert.equal((JSON.parse(first.text) as { state: string }).state, 'completed');
      const logs = await client.readResource({ uri: `mhl://run/${runId}/logs` });
      assert.match((logs.contents[0] as { text: string }).text, /step 30 of 30/);
      const { templates } = { templates: (await client.listResourceTemplates()).resourceTemplates };
      assert.ok(templates.some((t) => t.uriTemplate.startsWith('mhl://run/')));
    } finally {
      await client.close();
    }
  });

  it('resumes a paused run after the client restarts the server with the same --state-dir', async () => {
    const stateDir = tempDir();
    const first = await connect(['--state-dir', stateDir]);
    let runId: string;
    try {
      const started = await runTool(first, 'mhl_run_start', {
        workflow: 'Approval',
        arguments: { who: 'ana' },
      });
      runId = started['runId'] as string;
      assert.equal((await settle(first, runId))['state'], 'paused');
    } finally {
      await first.close();
    }
    const second = await connect(['--state-dir', stateDir]);
    try {
      const resumed = await runTool(second, 'mhl_run_resume', {
        runId,
        arguments: { approved: true },
      });
      assert.notEqual(resumed['state'], 'paused');
      const done = await settle(second, runId);
      assert.equal(done['state'], 'completed');
      const trail = (done['vars'] as { trail: string[] }).trail;
      assert.deepEqual(trail, ['draft', 'approved by ana', 'shipped']);
    } finally {
      await second.close();
    }
  });
});

/**
 * A FIFO where a host attests an artifact: the read-back must refuse it without opening it for
 * a blocking read, so one hostile call cannot park the server's event loop. Two SDK clients on
 * one HTTP server: the first attests a FIFO, the second must still be answered.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  confirmed,
  LOOP_HOST as HOST,
  LOOP_RELEASE as LOOP,
  LOOP_POLICY as POLICY,
  project,
  type Structured,
  TEST_KEY,
  TOOLS,
} from '../helpers/engine.js';
import { serverStarter } from '../helpers/http-server.js';

const STATE = confirmed({ topic: 'caching' });
const MANIFEST = JSON.stringify({
  harness: 'claude-code',
  adapter: HOST.adapter,
  capabilities: ['file-write'],
  validator_capabilities: ['web'],
  assets: [],
});
// Bounds a call that a frozen server would never answer, so the test fails instead of hanging.
const BOUND = { timeout: 20_000 };
const startHttp = serverStarter(LOOP, 'SIGKILL');

async function client(port: number): Promise<Client> {
  const c = new Client({ name: 'engine-fifo', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return c;
}

describe('workflow-engine: a FIFO at a read-back path', () => {
  const root = project();
  const fifo = join(root, '.rimthan', 'workspace-manifest.json');
  after(() => {
    // Should a server still sit in open(2) on the FIFO, a writer lets it go before it is killed.
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody has it open for reading, which is the fixed behaviour.
    }
  });

  it('refuses it with output_attestation_required and keeps serving a second client', async () => {
    const port = await startHttp(['--profile', 'workflow-engine'], { MHL_ENGINE_KEY: TEST_KEY })
      .ready;
    const [first, second] = await Promise.all([client(port), client(port)]);
    const call = async (c: Client, name: string, args: Structured) =>
      ((await c.callTool({ name, arguments: args }, undefined, BOUND)) as Structured)
        .structuredContent;
    const started = await call(first, TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: HOST,
    });
    mkdirSync(join(root, '.rimthan'));
    execFileSync('mkfifo', [fifo]);
    const prepared = await call(first, TOOLS.prepare, {
      checkpoint: started.checkpoint,
      confirmed_state: STATE,
      artifacts: [
        {
          id: 'workspace-manifest',
          path: '.rimthan/workspace-manifest.json',
          media_type: 'application/json',
          content: MANIFEST,
          encoding: 'utf8',
        },
      ],
      attestation: { project_root: root, repository_policy: POLICY },
    });
    assert.equal(prepared.status, 'deterministic_validation_failed');
    assert.ok(
      prepared.failures.map((f: Structured) => f.code).includes('output_attestation_required'),
    );
    const other = await call(second, TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: HOST,
    });
    assert.equal(other.status, 'active');
    await Promise.all([first.close(), second.close()]);
  });
});

/**
 * The engine's argument bounds against the transports' caps: a prepare call at every schema
 * bound (eight artifacts of the longest content) still fits one HTTP body and is answered as a
 * tool result, and one artifact or one character past a bound is INVALID_ARGUMENT naming it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  confirmed,
  LOOP_HOST as HOST,
  LOOP_RELEASE as LOOP,
  type Structured,
  TEST_KEY,
  TOOLS,
} from '../helpers/engine.js';
import { serverStarter } from '../helpers/http-server.js';

const STATE = confirmed({ topic: 'caching' });
// The bounds docs/engine.md ("Limits") states.
const MAX_CONTENT_CHARS = 98_304;
const MAX_ARTIFACTS = 8;
const startHttp = serverStarter(LOOP);

const artifacts = (count: number, chars: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `a${i}`,
    path: `out/a${i}.md`,
    media_type: 'text/markdown',
    content: 'x'.repeat(chars),
    encoding: 'utf8',
  }));

describe('workflow-engine: argument bounds fit the transport', () => {
  it('answers a call at every bound over HTTP, and refuses one past a bound', async () => {
    const port = await startHttp(['--profile', 'workflow-engine'], { MHL_ENGINE_KEY: TEST_KEY })
      .ready;
    const client = new Client({ name: 'engine-limits', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    const call = async (name: string, args: Structured) =>
      (await client.callTool({ name, arguments: args })) as Structured;
    const started = await call(TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: HOST,
    });
    const prepare = (list: Structured[]) =>
      call(TOOLS.prepare, {
        checkpoint: started.structuredContent.checkpoint,
        confirmed_state: STATE,
        artifacts: list,
      });
    const atBound = await prepare(artifacts(MAX_ARTIFACTS, MAX_CONTENT_CHARS));
    // A tool result (the artifacts are not the step's), not a transport refusal of the body.
    assert.equal(atBound.structuredContent.status, 'deterministic_validation_failed');
    const tooMany = await prepare(artifacts(MAX_ARTIFACTS + 1, 1));
    assert.equal(tooMany._meta['mhl/diagnostic'].code, 'INVALID_ARGUMENT');
    assert.equal(tooMany._meta['mhl/diagnostic'].field, 'artifacts');
    const tooLong = await prepare(artifacts(1, MAX_CONTENT_CHARS + 1));
    assert.equal(tooLong._meta['mhl/diagnostic'].code, 'INVALID_ARGUMENT');
    assert.equal(tooLong._meta['mhl/diagnostic'].field, 'artifacts.0.content');
    await client.close();
  });
});

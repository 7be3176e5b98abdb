/**
 * `MHL_ENGINE_KEY` is taken out of the server's environment before anything runs, whatever the
 * profile: a child of a workflow served beside it does not get it, even with MHL_PASS_ENV naming
 * it (fixture test/fixtures/pack/probe.mh, as for the pack key).
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT } from '../helpers/cli.js';

const PROBE = resolve(REPO_ROOT, 'test/fixtures/pack');
const SECRET = 'engine-key-that-must-not-leak-0123456789';

describe('MHL_ENGINE_KEY', () => {
  it('is scrubbed from the environment children inherit', async () => {
    const client = new Client({ name: 'engine-key', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', 'mcp', PROBE],
        env: {
          ...(process.env as Record<string, string>),
          MHL_ENGINE_KEY: SECRET,
          MHL_PROBE_CANARY: 'visible',
          // Even asked to pass it on, the server no longer has it.
          MHL_PASS_ENV: 'MHL_ENGINE_KEY,MHL_PROBE_CANARY',
        },
        stderr: 'ignore',
      }),
    );
    try {
      const dump = (await client.callTool({ name: 'EnvDump', arguments: {} })) as {
        structuredContent?: { out?: string };
      };
      const out = dump.structuredContent?.out ?? '';
      assert.match(out, /MHL_PROBE_CANARY=visible/);
      assert.doesNotMatch(out, /MHL_ENGINE_KEY/);
      assert.ok(!out.includes(SECRET));
    } finally {
      await client.close();
    }
  });
});

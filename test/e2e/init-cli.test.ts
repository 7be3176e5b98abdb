/**
 * `mhl init` as a user runs it: the folder it writes passes `mhl lint` and `mhl test`, and
 * `mhl serve mcp` on it serves the workflow to a real MCP SDK client that lists and calls it.
 * It never overwrites: a clash names the file, writes nothing and exits 1.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, runCli, tempDir } from '../helpers/cli.js';

const WRITTEN = ['main.mh', 'prompts/greet.prompt.md', 'README.md'];

describe('mhl init', () => {
  it('writes a folder that mhl lint, mhl test and mhl serve mcp accept as is', async () => {
    const dir = join(tempDir('mhl-init-'), 'demo');
    const init = await runCli(['init', dir]);
    assert.equal(init.code, 0, init.stderr);
    for (const f of WRITTEN) assert.ok(existsSync(join(dir, f)), f);
    assert.match(readFileSync(join(dir, 'README.md'), 'utf8'), /mhl serve mcp \./);

    const lint = await runCli(['lint'], { cwd: dir });
    assert.deepEqual([lint.code, lint.stdout.trim()], [0, 'no problems in 1 file']);
    const test = await runCli(['test'], { cwd: dir });
    assert.equal(test.code, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /^2 passed, 0 failed, 0 pending$/m);

    const client = new Client({ name: 'mhl-init-e2e', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', 'mcp', '.'],
        cwd: dir,
        stderr: 'ignore',
      }),
    );
    try {
      const { tools } = await client.listTools();
      const greet = tools.find((t) => t.name === 'Greet');
      assert.ok(greet, tools.map((t) => t.name).join(', '));
      assert.deepEqual(greet.inputSchema.required, ['name']);
      const result = (await client.callTool({ name: 'Greet', arguments: { name: 'Ada' } })) as {
        isError?: boolean;
        structuredContent?: { greeting?: string };
      };
      assert.notEqual(result.isError, true);
      assert.match(result.structuredContent?.greeting ?? '', /warm greeting for Ada/);
    } finally {
      await client.close();
    }
  });

  it('scaffolds the current folder by default, beside files it does not write', async () => {
    const dir = tempDir('mhl-init-');
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const r = await runCli(['init'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    for (const f of WRITTEN) assert.ok(existsSync(join(dir, f)), f);
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine\n');
  });

  it('refuses to overwrite: names the existing file, writes nothing, exits 1', async () => {
    const dir = tempDir('mhl-init-');
    mkdirSync(join(dir, 'prompts'));
    writeFileSync(join(dir, 'prompts', 'greet.prompt.md'), 'hand-written\n');
    const r = await runCli(['init', dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /prompts\/greet\.prompt\.md already exists/);
    assert.equal(readFileSync(join(dir, 'prompts', 'greet.prompt.md'), 'utf8'), 'hand-written\n');
    assert.equal(existsSync(join(dir, 'main.mh')), false);
    assert.equal(existsSync(join(dir, 'README.md')), false);
  });

  it('refuses a path that is a file', async () => {
    const dir = tempDir('mhl-init-');
    writeFileSync(join(dir, 'taken'), '');
    const r = await runCli(['init', join(dir, 'taken')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exists and is not a folder/);
  });
});

/**
 * Lifecycle hooks and typed signatures end to end: `mhl run` on fixtures (the hooks' log lines,
 * a failing run and one that `stop_failure` recovers with complete(), signature parameters given
 * as `--input`), and `mhl serve mcp` advertising a signature's parameters in the tool's
 * inputSchema, driven by the official SDK client.
 */
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

const HOOKS = resolve(REPO_ROOT, 'test/fixtures/run/hooks.mh');
const SIGNED = resolve(REPO_ROOT, 'test/fixtures/serve-signature');

interface Json {
  ok: boolean;
  kind?: string;
  step?: string;
  broke?: boolean;
  vars?: Record<string, unknown>;
  log: string[];
}

async function runJson(args: string[]): Promise<{ code: number | null; out: Json }> {
  const r = await runCli(['run', '--format', 'json', ...args], { cwd: tempDir() });
  return { code: r.code, out: JSON.parse(r.stdout) as Json };
}

/** The log with the parallel group's lines (whose order between branches is free) sorted. */
function normalised(log: readonly string[]): string[] {
  const inGroup = (l: string) => / (Lint|Unit)( |$)/.test(l);
  const first = log.findIndex(inGroup);
  const group = log.filter(inGroup).sort();
  const rest = log.filter((l) => !inGroup(l));
  return [...rest.slice(0, first), ...group, ...rest.slice(first)];
}

const BEFORE_FLAKY = [
  'session_start Hooks',
  'step_start Prepare',
  'step_end Prepare completed',
  'step_end Lint completed',
  'step_end Unit completed',
  'step_start Lint in Checks',
  'step_start Unit in Checks',
  'step_start Flaky',
];

describe('mhl run with lifecycle hooks', () => {
  it('runs every hook around a successful run', async () => {
    const { code, out } = await runJson([HOOKS]);
    assert.equal(code, 0);
    assert.deepEqual(normalised(out.log), [
      ...BEFORE_FLAKY,
      'step_end Flaky completed',
      'session_end completed',
    ]);
  });

  it('runs stop_failure and session_end when a step fails, and exits 1', async () => {
    const { code, out } = await runJson([HOOKS, '--input', 'ok=false']);
    assert.equal(code, 1);
    assert.deepEqual([out.ok, out.kind, out.step], [false, 'step_failed', 'Flaky']);
    assert.deepEqual(normalised(out.log), [
      ...BEFORE_FLAKY,
      'step_end Flaky failed',
      'stop_failure step_failed Flaky',
      'session_end failed',
    ]);
  });

  it('ends normally when stop_failure calls complete()', async () => {
    const { code, out } = await runJson([HOOKS, '--input', 'ok=false', '--input', 'recover=true']);
    assert.equal(code, 0);
    assert.deepEqual([out.ok, out.broke], [true, true]);
    assert.equal(out.log.at(-1), 'session_end completed');
  });
});

describe('typed signatures', () => {
  it('take their parameters from --input, coerced by the declared type', async () => {
    const file = join(SIGNED, 'greet.mh');
    const { code, out } = await runJson([file, '--input', 'name=ana', '--input', 'times=2']);
    assert.equal(code, 0);
    assert.deepEqual(out.vars, { message: 'hello ana, hello ana' });
    const missing = await runJson([file]);
    assert.equal(missing.code, 2);
    assert.equal(missing.out.kind, 'invalid_inputs');
  });

  it('are advertised as the served tool inputSchema, and called with them', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'serve', 'mcp', SIGNED],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const greet = tools.find((t) => t.name === 'Greet');
      assert.ok(greet, 'Greet is served');
      assert.deepEqual(greet.inputSchema.required, ['name']);
      // The parameters, in order; the server adds its own reserved arguments after them.
      assert.deepEqual(Object.keys(greet.inputSchema.properties ?? {}).slice(0, 2), [
        'name',
        'times',
      ]);
      const props = greet.inputSchema.properties as Record<string, Record<string, unknown>>;
      assert.equal(props['name']?.['type'], 'string');
      assert.equal(props['times']?.['type'], 'number');
      assert.equal(props['times']?.['default'], 1);
      const ok = await client.callTool({ name: 'Greet', arguments: { name: 'bo', times: 2 } });
      assert.deepEqual(ok.structuredContent, { message: 'hello bo, hello bo' });
      const bad = await client.callTool({ name: 'Greet', arguments: { times: 'two' } });
      assert.equal(bad.isError, true);
    } finally {
      await client.close();
    }
  });
});

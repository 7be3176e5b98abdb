/**
 * Acceptance: the official MCP SDK clients use `mhl serve mcp examples` as any
 * user would. SDK v1 (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/client`, in
 * auto mode and pinned to 2026-07-28), each over stdio and Streamable HTTP: list the tools,
 * call every example workflow with only the inputs its schema declares required, start one
 * async run and poll it to completion, and list and get the example prompts. The
 * server is the built CLI started with `--cwd` at a throwaway git repository, so the calls
 * carry no `context` at all.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import * as v2 from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { serverStarter } from '../helpers/http-server.js';
import { until } from '../helpers/poll.js';

const EXAMPLES = resolve(REPO_ROOT, 'examples');
/** The workflows under examples/: every one is called, and the listing must hold exactly these. */
const EXAMPLE_WORKFLOWS = ['RepoReport', 'TodoScan'];
/**
 * The server's own tools, beside the workflows: jobs, (where served) async runs and the vault's
 * listing (docs/secrets.md).
 */
const CONTROL_TOOL = /^(job\.|mhl_run_|secrets\.)/;

/** A git repository with two commits and a TODO, the working directory of every server. */
function exampleRepo(): string {
  const dir = tempDir('mhl-clients-repo-');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '-q');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'app.js'), '// TODO: greet properly\nconsole.log("hi");\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  git('add', '.');
  git('commit', '-q', '-m', 'second');
  return dir;
}

const REPO = exampleRepo();
const SERVE_ARGS = ['--cwd', REPO];
const startHttp = serverStarter(EXAMPLES);

interface Tool {
  readonly name: string;
  readonly inputSchema: { properties?: Record<string, { type?: unknown }>; required?: string[] };
}
interface CallResult {
  readonly isError?: boolean;
  readonly structuredContent?: Record<string, unknown>;
  readonly content?: unknown[];
}

/** What the test needs from either SDK's client. */
interface AnyClient {
  listTools(): Promise<{ tools: Tool[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  getServerCapabilities(): Record<string, unknown> | undefined;
  listPrompts(): Promise<{
    prompts: { name: string; arguments?: { name: string; required?: boolean }[] }[];
  }>;
  getPrompt(params: {
    name: string;
    arguments: Record<string, string>;
  }): Promise<{ messages: unknown[] }>;
  close(): Promise<void>;
}

type Transport = 'stdio' | 'http';
type Sdk = 'v1' | 'v2 auto' | 'v2 pinned 2026-07-28';

/**
 * Connects `sdk` to a fresh server on `transport`. A stdio server ends with its client; the
 * HTTP ones are stopped when this file's tests end.
 */
async function connect(sdk: Sdk, transport: Transport): Promise<AnyClient> {
  const info = { name: `mhl-e2e-${sdk.replaceAll(' ', '-')}`, version: '1.0.0' };
  const stdio = {
    command: process.execPath,
    args: [CLI, 'serve', 'mcp', EXAMPLES, ...SERVE_ARGS],
    stderr: 'ignore' as const,
  };
  let url: URL | undefined;
  if (transport === 'http') {
    const port = await startHttp(SERVE_ARGS).ready;
    url = new URL(`http://127.0.0.1:${port}/mcp`);
  }
  if (sdk === 'v1') {
    const client = new V1Client(info);
    await client.connect(url ? new V1HttpTransport(url) : new V1StdioTransport(stdio));
    return client as unknown as AnyClient;
  }
  const mode = sdk === 'v2 auto' ? 'auto' : { pin: '2026-07-28' };
  const client = new v2.Client(info, { versionNegotiation: { mode } });
  await client.connect(
    url ? new v2.StreamableHTTPClientTransport(url) : new V2StdioTransport(stdio),
  );
  if (typeof mode === 'object') assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return client as unknown as AnyClient;
}

/** A sensible value for each input the schema requires, and nothing for the optional ones. */
function requiredArguments(tool: Tool): Record<string, unknown> {
  const props = tool.inputSchema.properties ?? {};
  const value = (type: unknown): unknown =>
    type === 'number' || type === 'integer'
      ? 1
      : type === 'boolean'
        ? true
        : type === 'array'
          ? []
          : type === 'object'
            ? {}
            : '.';
  return Object.fromEntries(
    (tool.inputSchema.required ?? []).map((name) => [name, value(props[name]?.type)]),
  );
}

function assertSuccess(name: string, raw: unknown): Record<string, unknown> {
  const result = raw as CallResult;
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result.content)}`);
  assert.ok(result.structuredContent, `${name} answered without structuredContent`);
  return result.structuredContent;
}

/** Polls mhl_run_status (one call at a time) until the run is completed or failed. */
function runToEnd(client: AnyClient, runId: string): Promise<Record<string, unknown>> {
  return until(
    async () => {
      const raw = await client.callTool({ name: 'mhl_run_status', arguments: { runId } });
      const view = assertSuccess('mhl_run_status', raw);
      return (view['state'] === 'completed' || view['state'] === 'failed') && view;
    },
    { what: `run ${runId} to end`, timeoutMs: 20_000 },
  );
}

const MATRIX: [Sdk, Transport][] = (['v1', 'v2 auto', 'v2 pinned 2026-07-28'] as const).flatMap(
  (sdk) => (['stdio', 'http'] as const).map((t): [Sdk, Transport] => [sdk, t]),
);

describe('official SDK clients against mhl serve mcp examples', () => {
  for (const [sdk, transport] of MATRIX) {
    describe(`SDK ${sdk} over ${transport}`, () => {
      it('lists the tools and calls every example with only its required inputs', async () => {
        const client = await connect(sdk, transport);
        try {
          const { tools } = await client.listTools();
          const workflows = tools.filter((t) => !CONTROL_TOOL.test(t.name));
          assert.deepEqual(workflows.map((t) => t.name).sort(), EXAMPLE_WORKFLOWS);
          for (const tool of workflows) {
            const name = tool.name;
            const raw = await client.callTool({ name, arguments: requiredArguments(tool) });
            const vars = assertSuccess(name, raw);
            if (name === 'RepoReport') {
              // Ran in the --cwd repository: its two commits, the TODO file among the largest.
              assert.equal((vars['recent'] as unknown[]).length, 2);
              assert.match(JSON.stringify(vars['largest']), /src\/app\.js/);
            }
            if (name === 'TodoScan') assert.equal(vars['count'], 1);
          }
        } finally {
          await client.close();
        }
      });

      it('starts an async run with mhl_run_start and polls mhl_run_status to completion', async () => {
        const client = await connect(sdk, transport);
        try {
          const { tools } = await client.listTools();
          assert.ok(
            tools.some((t) => t.name === 'mhl_run_start'),
            `mhl_run_start not listed over ${transport}`,
          );
          const started = assertSuccess(
            'mhl_run_start',
            await client.callTool({
              name: 'mhl_run_start',
              arguments: { workflow: 'TodoScan', arguments: {} },
            }),
          );
          const runId = started['runId'];
          assert.equal(typeof runId, 'string');
          const view = await runToEnd(client, runId as string);
          assert.equal(view['state'], 'completed', JSON.stringify(view));
          assert.equal((view['vars'] as Record<string, unknown>)['count'], 1);
        } finally {
          await client.close();
        }
      });

      it('reads the prompts the server offers', async () => {
        const client = await connect(sdk, transport);
        try {
          const capabilities = client.getServerCapabilities() ?? {};
          assert.ok(capabilities['prompts'], 'the prompts capability is declared');
          const { prompts } = await client.listPrompts();
          assert.deepEqual(
            prompts.map((p) => p.name),
            ['ReviewChange', 'TriageTodos'],
          );
          for (const prompt of prompts) {
            // Only the required arguments, as text, as a client that fills a slash command would.
            const required = (prompt.arguments ?? []).filter((a) => a.required === true);
            const args = Object.fromEntries(required.map((a) => [a.name, 'the cache is gone']));
            const got = await client.getPrompt({ name: prompt.name, arguments: args });
            const first = got.messages[0] as { role: string; content: { text: string } };
            assert.equal(first.role, 'user', prompt.name);
            assert.ok(first.content.text.length > 0, prompt.name);
          }
        } finally {
          await client.close();
        }
      });
    });
  }
});

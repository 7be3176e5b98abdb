/**
 * The official SDK clients take mhl's 2020-12 input schemas: `$schema`, declared types under
 * `$defs` and referred to with `$ref` (a recursive one included). SDK v1 and v2 (auto and
 * pinned to 2026-07-28), over stdio and Streamable HTTP, list the tools of
 * test/fixtures/schemas and call `Typed` with a value of every declared type, a nested
 * recursive one included; a value the schema refuses comes back as INVALID_ARGUMENT.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import * as v2 from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, REPO_ROOT } from '../helpers/cli.js';
import { serverStarter } from '../helpers/http-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/schemas');
const startHttp = serverStarter(FOLDER);

interface Client {
  listTools(): Promise<{ tools: { name: string; inputSchema: Record<string, unknown> }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

type Sdk = 'v1' | 'v2 auto' | 'v2 pinned 2026-07-28';
type Transport = 'stdio' | 'http';

async function connect(sdk: Sdk, transport: Transport): Promise<Client> {
  const info = { name: 'mhl-e2e-schemas', version: '1.0.0' };
  const stdio = {
    command: process.execPath,
    args: [CLI, 'serve', 'mcp', FOLDER],
    stderr: 'ignore' as const,
  };
  const url =
    transport === 'http' ? new URL(`http://127.0.0.1:${await startHttp().ready}/mcp`) : undefined;
  if (sdk === 'v1') {
    const client = new V1Client(info);
    await client.connect(url ? new V1HttpTransport(url) : new V1StdioTransport(stdio));
    return client as unknown as Client;
  }
  const mode = sdk === 'v2 auto' ? 'auto' : { pin: '2026-07-28' };
  const client = new v2.Client(info, { versionNegotiation: { mode } });
  await client.connect(
    url ? new v2.StreamableHTTPClientTransport(url) : new V2StdioTransport(stdio),
  );
  return client as unknown as Client;
}

/** One value of each of Typed's inputs; `tree` nests through both of its recursive fields. */
const TYPED_ARGS = {
  text: 'hi',
  count: 1.5,
  whole: 2,
  flag: true,
  anything: null,
  list: [],
  record: {},
  names: ['a'],
  point: { x: 1, y: 2 },
  item: { id: 1, tags: ['t'] },
  color: 'Green',
  tree: { name: 'root', kids: [{ name: 'kid', next: { name: 'next' } }] },
  shade: 'Blue',
};

const MATRIX = (['v1', 'v2 auto', 'v2 pinned 2026-07-28'] as const).flatMap((sdk) =>
  (['stdio', 'http'] as const).map((t): [Sdk, Transport] => [sdk, t]),
);

describe('official SDK clients take schemas with $defs and $ref', { timeout: 60_000 }, () => {
  for (const [sdk, transport] of MATRIX) {
    it(`${sdk} over ${transport}`, async () => {
      const client = await connect(sdk, transport);
      try {
        const { tools } = await client.listTools();
        const typed = tools.find((t) => t.name === 'Typed');
        assert.ok(typed, 'Typed is listed');
        assert.equal(typed.inputSchema['$schema'], 'https://json-schema.org/draft/2020-12/schema');
        const defs = typed.inputSchema['$defs'] as Record<string, unknown>;
        assert.ok(defs['Tree'], 'Tree is under $defs');
        const ok = (await client.callTool({ name: 'Typed', arguments: TYPED_ARGS })) as {
          isError?: boolean;
          content?: unknown;
        };
        assert.notEqual(ok.isError, true, JSON.stringify(ok.content));
        const deepBad = { ...TYPED_ARGS, tree: { name: 'r', kids: [{ name: 'k', next: {} }] } };
        const refused = (await client.callTool({ name: 'Typed', arguments: deepBad })) as {
          isError?: boolean;
          _meta?: Record<string, Record<string, unknown>>;
        };
        assert.equal(refused.isError, true);
        assert.equal(refused._meta?.['mhl/diagnostic']?.['code'], 'INVALID_ARGUMENT');
        assert.equal(refused._meta?.['mhl/diagnostic']?.['field'], 'tree.kids[0].next.name');
        const half = (await client.callTool({
          name: 'Typed',
          arguments: { ...TYPED_ARGS, whole: 1.5 },
        })) as { _meta?: Record<string, Record<string, unknown>> };
        assert.equal(half._meta?.['mhl/diagnostic']?.['field'], 'whole');
      } finally {
        await client.close();
      }
    });
  }
});

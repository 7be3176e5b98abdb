/**
 * Acceptance: the workflow-engine surface as each official SDK client sees it, on stdio and
 * Streamable HTTP, in the 2025 handshake era and pinned to 2026-07-28: exactly the four tools
 * with the seed's annotations and closed schemas, their contracts and the release's files as
 * resources, a start and a continue that validate against the declared output schemas, any
 * other tool name `-32601`, and a private, uncached `tools/list` on 2026-07-28.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as v2 from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI } from '../helpers/cli.js';
import {
  claudeHost,
  confirmed,
  ENGINE_RELEASE,
  ENGINE_TARGET,
  type Structured,
  TEST_KEY,
  TOOLS,
} from '../helpers/engine.js';
import { call, serverStarter } from '../helpers/http-server.js';

const ARGS = ['--profile', 'workflow-engine', '--migration-target', ENGINE_TARGET];
const ENV = { MHL_ENGINE_KEY: TEST_KEY };
const startHttp = serverStarter(ENGINE_RELEASE);
const NAMES = Object.values(TOOLS);

type Sdk = 'v1' | 'v2 pinned 2026-07-28';

async function connect(sdk: Sdk, transport: 'stdio' | 'http'): Promise<Structured> {
  const stdio = {
    command: process.execPath,
    args: [CLI, 'serve', 'mcp', ENGINE_RELEASE, ...ARGS],
    env: { ...(process.env as Record<string, string>), ...ENV },
    stderr: 'ignore' as const,
  };
  const url =
    transport === 'http'
      ? new URL(`http://127.0.0.1:${await startHttp(ARGS, ENV).ready}/mcp`)
      : undefined;
  const info = { name: 'engine-surface', version: '1.0.0' };
  if (sdk === 'v1') {
    const client = new V1Client(info);
    await client.connect(url ? new V1HttpTransport(url) : new V1StdioTransport(stdio));
    return client;
  }
  const client = new v2.Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(
    url ? new v2.StreamableHTTPClientTransport(url) : new V2StdioTransport(stdio),
  );
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  return client;
}

/**
 * Every object schema under `schema` that is not closed: one that lists properties, or says
 * `type: "object"` (a map), without `additionalProperties: false`.
 */
function openObjects(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => openObjects(s, `${path}/${i}`));
  if (schema === null || typeof schema !== 'object') return [];
  const record = schema as Record<string, unknown>;
  // A `oneOf` root (the results: each branch closed) is checked through its branches.
  const objectish = 'properties' in record || (record['type'] === 'object' && !('oneOf' in record));
  const here = objectish && record['additionalProperties'] !== false ? [path] : [];
  return [
    ...here,
    ...Object.entries(record).flatMap(([k, v]) =>
      k === 'properties'
        ? Object.entries(v as object).flatMap(([p, s]) => openObjects(s, `${path}/properties/${p}`))
        : openObjects(v, `${path}/${k}`),
    ),
  ];
}

/** `value` with every object's keys sorted: the canonical text, for these string-only results. */
function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedDeep((value as Record<string, unknown>)[k])]),
  );
}

/** Every non-hidden file under `dir`, release-relative. */
function releaseFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .flatMap((e) => {
      const rel = prefix === '' ? e.name : `${prefix}/${e.name}`;
      return e.isDirectory() ? releaseFiles(dir, rel) : [rel];
    });
}

/** The exact resource list (docs/engine.md, "Resources"): contracts, status, both releases. */
function expectedResources(active: string, target: string): string[] {
  const shared = [
    'confirmed-state-projection',
    'host',
    'artifact',
    'attestation',
    'validator-report',
    'validation-bundle',
    'step-payload',
  ];
  return [
    ...[...NAMES, ...shared].map((n) => `mhl://engine/contracts/${n}.json`),
    'mhl://engine/status',
    ...releaseFiles(ENGINE_RELEASE).map((p) => `mhl://engine/release/${active}/${p}`),
    ...releaseFiles(ENGINE_TARGET).map((p) => `mhl://engine/release/${target}/${p}`),
  ].sort();
}

const MATRIX: [Sdk, 'stdio' | 'http'][] = [
  ['v1', 'stdio'],
  ['v1', 'http'],
  ['v2 pinned 2026-07-28', 'stdio'],
  ['v2 pinned 2026-07-28', 'http'],
];

describe('workflow-engine: the four-tool surface', () => {
  for (const [sdk, transport] of MATRIX) {
    it(`serves exactly four tools and their resources to ${sdk} over ${transport}`, async () => {
      const client = await connect(sdk, transport);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((t: Structured) => t.name),
          NAMES,
        );
        const byName = new Map<string, Structured>(tools.map((t: Structured) => [t.name, t]));
        assert.deepEqual(byName.get(TOOLS.start).annotations, {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        });
        for (const name of NAMES.slice(1)) {
          assert.equal(byName.get(name).annotations.readOnlyHint, true);
          assert.equal(byName.get(name).annotations.destructiveHint, false);
        }
        for (const t of tools) {
          // The two documented open maps (docs/engine.md, "Confirmed state and host"), in each
          // confirmed-state argument, and nothing else.
          const states = ['prior_confirmed_state', 'confirmed_state'].filter(
            (p) => p in t.inputSchema.properties,
          );
          assert.deepEqual(
            openObjects(t.inputSchema).sort(),
            states
              .flatMap((p) =>
                ['state', 'confirmations'].map((m) => `#/properties/${p}/properties/${m}`),
              )
              .sort(),
            `${t.name} input`,
          );
          assert.deepEqual(openObjects(t.outputSchema), [], `${t.name} output`);
        }
        const { resources } = await client.listResources();
        const status = JSON.parse(
          (await client.readResource({ uri: 'mhl://engine/status' })).contents[0].text,
        );
        assert.deepEqual(
          resources.map((r: Structured) => r.uri).sort(),
          expectedResources(status.active_release.digest, status.migration_target.digest),
        );
        for (const name of NAMES) {
          const read = await client.readResource({ uri: `mhl://engine/contracts/${name}.json` });
          // The v2 client drops `execution` from what it returns; the wire carries it on both
          // eras, and the v1 client shows it, so there this is the exact tools/list entry.
          const listed = { execution: { taskSupport: 'forbidden' }, ...byName.get(name) };
          assert.deepEqual(JSON.parse(read.contents[0].text), listed, name);
        }
        const releaseFiles = resources.filter((r: Structured) =>
          r.uri.startsWith('mhl://engine/release/'),
        );
        const yamlFile = releaseFiles.find((r: Structured) =>
          r.uri.endsWith('/workflows/research-decision/1.2.0.yaml'),
        );
        assert.ok(yamlFile);
        const text = (await client.readResource({ uri: yamlFile.uri })).contents[0].text;
        assert.match(text, /^id: research-decision$/m);
        // A start and a continue: the client checks both against the declared output schemas.
        const state = confirmed({ objective: 'x', audience: 'y' });
        const started = await client.callTool({
          name: TOOLS.start,
          arguments: { workflow: 'research-decision', confirmed_state: state, host: claudeHost() },
        });
        assert.equal(started.structuredContent.status, 'active');
        assert.equal(
          started.content[0].text,
          JSON.stringify(sortedDeep(started.structuredContent)),
        );
        for (const uri of started.structuredContent.step.resources) {
          assert.ok((await client.readResource({ uri })).contents[0].text.length > 0, uri);
        }
        const again = await client.callTool({
          name: TOOLS.continue,
          arguments: {
            checkpoint: started.structuredContent.checkpoint,
            prior_confirmed_state: state,
            confirmed_state: state,
          },
        });
        assert.equal(again.structuredContent.status, 'active');
        assert.equal(again.structuredContent.step.id, 'setup-workspace');
        await assert.rejects(
          client.callTool({ name: 'rimthan.run_anything', arguments: {} }),
          // The v2 HTTP client wraps a JSON-RPC error answered with an HTTP error status; the code is on the wire.
          (e: Structured) => e.code === -32601 || /"code":-32601/.test(String(e.message)),
        );
      } finally {
        await client.close();
      }
    });
  }

  it('lists tools with a private, uncached scope on 2026-07-28', async () => {
    const port = await startHttp(ARGS, ENV).ready;
    const listed = await call(port, 'tools/list');
    assert.equal(listed['cacheScope'], 'private');
    assert.equal(listed['ttlMs'], 0);
  });
});

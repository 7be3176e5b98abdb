/**
 * The sessions profile's call contracts through the built CLI: the tool set, the active-
 * checkpoint gate, checkpoint answers (exactly one mode, invalid options, replay, the minimum
 * response time), unknown activities, a hot fix landing mid-session as a version-drift warning,
 * signed trace tokens, and the same tools over Streamable HTTP in both protocol eras.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';
import { call, HttpServer } from '../helpers/http-server.js';
import { SESSIONS_CORPUS as CORPUS, SESSIONS_TOOLS as TOOLS } from '../helpers/sessions.js';

const code = (r: ToolCallResult) =>
  (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code;
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const json = (r: ToolCallResult) => JSON.parse(text(r));

describe('sessions profile contracts', () => {
  let dir: string;
  let root: string;
  let server: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-protocol-'));
    root = join(dir, 'root');
    cpSync(CORPUS, root, { recursive: true });
    server = await startMhl(CLI, root, dir);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('publishes exactly the 18 tools, each with an input schema', async () => {
    const { tools } = await server.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
    for (const t of tools) assert.equal(t.inputSchema.type, 'object', t.name);
  });

  test('gates navigation and reads while a checkpoint is active; answers need exactly one mode', async () => {
    const s = json(await server.call('start_session', { workflow_id: 'ponytail' })).session_index;
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const y = json(
      await server.call('yield_checkpoint', {
        session_index: s,
        checkpoint_id: 'intensity-and-scope-confirmed',
      }),
    );
    assert.equal(y.status, 'yielded');
    for (const [tool, args] of [
      ['next_activity', { activity_id: 'apply-ladder' }],
      ['get_activity', { context_tokens: 1000 }],
      ['get_workflow', {}],
      ['get_technique', {}],
      ['get_resource', { resource_id: 'the-ladder' }],
      ['get_trace', {}],
      [
        'yield_checkpoint',
        {
          checkpoint_id: 'x',
          message: 'm',
          options: [
            { id: 'a', label: 'A' },
            { id: 'b', label: 'B' },
          ],
        },
      ],
      ['resume_checkpoint', {}],
    ] as const) {
      const r = await server.call(tool, { session_index: s, ...args });
      assert.equal(code(r), 'CHECKPOINT_ACTIVE', tool);
    }
    assert.equal(
      json(await server.call('get_workflow_status', { session_index: s })).status,
      'blocked',
    );
    const both = await server.call('respond_checkpoint', {
      session_index: s,
      option_id: 'x',
      auto_advance: true,
    });
    assert.equal(code(both), 'CHECKPOINT_INVALID');
    assert.match(text(both), /Exactly one/);
    const wrong = await server.call('respond_checkpoint', {
      session_index: s,
      option_id: 'no-such',
    });
    assert.match(text(wrong), /Invalid option/);
    const presented = text(await server.call('present_checkpoint', { session_index: s }));
    const option = /- id: ([\w-]+)/.exec(presented)?.[1] as string;
    const r = json(
      await server.call('respond_checkpoint', { session_index: s, option_id: option }),
    );
    assert.equal(r.resolved, true);
    assert.equal(
      json(await server.call('resume_checkpoint', { session_index: s })).status,
      'resumed',
    );
    const again = json(
      await server.call('yield_checkpoint', {
        session_index: s,
        checkpoint_id: 'intensity-and-scope-confirmed',
      }),
    );
    assert.equal(again.status, 'replayed');
    assert.equal(again.resolved_option, option);
    const none = await server.call('present_checkpoint', { session_index: s });
    assert.equal(code(none), 'NO_ACTIVE_CHECKPOINT');
  });

  test('an unknown activity blocks; an undeclared move only warns', async () => {
    const s = json(
      await server.call('start_session', { workflow_id: 'prism-update' }),
    ).session_index;
    const unknown = await server.call('next_activity', {
      session_index: s,
      activity_id: 'nowhere',
    });
    assert.equal(code(unknown), 'ACTIVITY_NOT_FOUND');
    const off = await server.call('next_activity', { session_index: s, activity_id: 'verify' });
    assert.equal(off.isError, undefined);
    assert.equal((off._meta?.['validation'] as { status?: string } | undefined)?.status, 'warning');
    const noCurrent = await server.call('get_activity', { session_index: s, context_tokens: 0 });
    assert.equal(code(noCurrent), 'INVALID_ARGUMENT', 'context_tokens must be positive');
  });

  test('a hot fix mid-session is served at once, with a version-drift warning', async () => {
    const s = json(
      await server.call('start_session', { workflow_id: 'requirements-refinement' }),
    ).session_index;
    const file = join(root, 'requirements-refinement', 'workflow.yaml');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original.replace(/^version: .*$/m, 'version: 7.7.7'));
    try {
      const r = await server.call('next_activity', {
        session_index: s,
        activity_id: 'intake-and-analyze',
      });
      const v = r._meta?.['validation'] as { status: string; warnings: string[] };
      assert.equal(v.status, 'warning');
      assert.ok(v.warnings.some((w) => w.startsWith('Workflow version drift')));
    } finally {
      writeFileSync(file, original);
    }
  });

  test('next_activity signs a trace token that get_trace verifies; a forged one is refused', async () => {
    const s = json(await server.call('start_session', { workflow_id: 'ponytail' })).session_index;
    await server.call('get_workflow', { session_index: s });
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const second = await server.call('next_activity', {
      session_index: s,
      activity_id: 'apply-ladder',
    });
    const token = second._meta?.['trace_token'] as string;
    assert.match(token, /^[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
    const forged = `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    const t = json(
      await server.call('get_trace', { session_index: s, trace_tokens: [token, forged] }),
    );
    assert.equal(t.source, 'tokens');
    assert.ok(t.event_count >= 1);
    assert.equal(t.token_errors.length, 1);
  });
});

describe('sessions profile over HTTP', () => {
  let dir: string;
  let server: HttpServer;
  let port: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-http-'));
    server = new HttpServer(CORPUS, ['--profile', 'sessions', '--cwd', dir], {
      WORKFLOW_SERVER_KEY_DIR: join(dir, 'key'),
      MHL_LOG_LEVEL: 'info',
    });
    port = await server.ready;
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('serves the 2025 handshake through the SDK client and stateless 2026-07-28 calls', async () => {
    const client = new Client({ name: 'sessions-http', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    try {
      const started = (await client.callTool({
        name: 'start_session',
        arguments: { workflow_id: 'ponytail' },
      })) as ToolCallResult;
      const index = json(started).session_index as string;
      const modern = (await call(port, 'tools/call', {
        name: 'next_activity',
        arguments: { session_index: index, activity_id: 'intake-and-scope' },
      })) as ToolCallResult;
      assert.equal(json(modern).activity_id, 'intake-and-scope');
      const status = (await client.callTool({
        name: 'get_workflow_status',
        arguments: { session_index: index },
      })) as ToolCallResult;
      assert.equal(json(status).current_activity, 'intake-and-scope');
    } finally {
      await client.close();
    }
  });
});

/**
 * Child sessions and deliveries through the built CLI: `dispatch_child` embeds a child in its
 * parent's file, the child's own index drives it, and its completion reaches the parent;
 * a transient `meta` session is promoted to a durable folder; `get_activity` bundles step
 * techniques only within its `context_tokens` budget and, in reference mode, answers what the
 * scope already holds with `unchanged` markers; the key file is created once, 0600.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import { SEPARATOR, type ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const json = (r: ToolCallResult) => JSON.parse(text(r));

describe('sessions children and deliveries', () => {
  let dir: string;
  let server: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-delivery-'));
    server = await startMhl(CLI, CORPUS, dir);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the key file is created once, 32 bytes, 0600 in a 0700 folder', () => {
    const key = join(dir, 'mhl', 'key', 'secret');
    assert.equal(readFileSync(key).length, 32);
    assert.equal(statSync(key).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'mhl', 'key')).mode & 0o777, 0o700);
  });

  test('a key of the wrong length or readable by others stops start-up with exit 1', () => {
    for (const [bytes, mode] of [
      [31, 0o600],
      [32, 0o644],
    ] as const) {
      const keyDir = mkdtempSync(join(dir, 'badkey-'));
      writeFileSync(join(keyDir, 'secret'), Buffer.alloc(bytes, 1), { mode });
      chmodSync(join(keyDir, 'secret'), mode);
      const run = spawnSync(
        process.execPath,
        [CLI, 'serve', 'mcp', '--profile', 'sessions', CORPUS],
        {
          env: { PATH: process.env['PATH'] ?? '', WORKFLOW_SERVER_KEY_DIR: keyDir },
          input: '',
          encoding: 'utf8',
        },
      );
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, /KEY_INVALID/);
      assert.ok(!run.stderr.includes(keyDir), 'the key path is not printed');
    }
  });

  test('a child lives in its parent file, runs on its own index and reports completion', async () => {
    const parent = json(await server.call('start_session', { workflow_id: 'ponytail' }));
    const child = json(
      await server.call('dispatch_child', {
        session_index: parent.session_index,
        workflow_id: 'prism-update',
      }),
    );
    assert.notEqual(child.session_index, parent.session_index);
    assert.equal(child.workflow.id, 'prism-update');
    await server.call('next_activity', {
      session_index: child.session_index,
      activity_id: 'discover-changes',
    });
    const done = await server.call('next_activity', {
      session_index: child.session_index,
      activity_id: '__terminal__',
    });
    assert.equal(json(done).name, 'Workflow Complete');
    const file = JSON.parse(
      readFileSync(join(parent.planning_folder_path, 'session.json'), 'utf8'),
    );
    assert.equal(file.triggeredWorkflows[0].state.status, 'completed');
    assert.equal(file.triggeredWorkflows[0].status, 'completed');
    assert.ok(file.history.some((e: { type: string }) => e.type === 'workflow_returned'));
    const children = json(
      await server.call('inspect_session', {
        session_index: parent.session_index,
        view: 'children',
      }),
    );
    assert.equal(children[0].status, 'completed');
  });

  test('a transient meta session is promoted to a durable folder by its first child', async () => {
    const meta = json(await server.call('start_session', {}));
    assert.equal(meta.repo_unbound, true);
    assert.equal(meta.planning_folder_path, undefined);
    const child = json(
      await server.call('dispatch_child', {
        session_index: meta.session_index,
        workflow_id: 'ponytail',
        planning_slug: 'promoted',
      }),
    );
    assert.equal(child.planning_slug, 'promoted');
    assert.equal(
      child.planning_folder_path,
      join(dir, 'mhl', 'ws', '.engineering', 'artifacts', 'planning', 'promoted'),
    );
    const status = json(
      await server.call('get_workflow_status', { session_index: meta.session_index }),
    );
    assert.equal(status.workflow.id, 'meta');
  });

  test('eager bundling keeps to the context_tokens budget; reference mode answers with markers', async () => {
    const s = json(
      await server.call('start_session', { workflow_id: 'ponytail', agent_id: 'orch' }),
    ).session_index;
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const small = await server.call('get_activity', {
      session_index: s,
      context_tokens: 10,
      agent_id: 'w1',
    });
    assert.equal(small._meta?.['bundled_steps'], undefined, 'nothing fits 10 tokens');
    const big = await server.call('get_activity', {
      session_index: s,
      context_tokens: 200000,
      agent_id: 'w2',
      bundle: 'reference',
    });
    assert.ok(((big._meta?.['bundled_steps'] as string[] | undefined) ?? []).length > 0);
    const again = await server.call('get_activity', {
      session_index: s,
      context_tokens: 200000,
      agent_id: 'w2',
      bundle: 'reference',
    });
    assert.equal(again._meta?.['dispatch'], 'resume');
    const head = parse(text(again).slice(0, text(again).indexOf(SEPARATOR)));
    const entries = Object.values(head.techniques) as { delivery?: string }[];
    assert.ok(entries.every((e) => e.delivery === 'unchanged'));
    assert.ok(text(again).length < text(big).length, 'a resume is shorter than the first delivery');
    const trace = json(await server.call('inspect_session', { session_index: s, view: 'history' }));
    assert.ok(trace.byType.technique_bundled > 0);
    assert.ok(
      trace.byType.activity_redelivered >= 1,
      'a second scope receiving the activity is recorded',
    );
  });
});

/**
 * The read-back and repeat-delivery paths matched to the public workflow-server through the
 * built CLI: unchanged get_resource/get_technique stubs, the dispatch a new agent's first fetch
 * records, every inspect_session projection (usage totals, progress marks, milestones, children
 * and their cost, a bare variable), get_workflow_status's trace fallbacks, trace-token refusals,
 * checkpoint wording and replay, and what transient and child session files leave unrecorded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';
import { SESSIONS_CORPUS as CORPUS } from '../helpers/sessions.js';

const code = (r: ToolCallResult) =>
  (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code;
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const json = (r: ToolCallResult) => JSON.parse(text(r));

describe('sessions read-back as the public server answers it', () => {
  let dir: string;
  let server: Connected;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-readback-'));
    server = await startMhl(CLI, CORPUS, dir);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const started = async (workflow: string) => {
    const s = json(await server.call('start_session', { workflow_id: workflow })).session_index;
    await server.call('get_workflow', { session_index: s });
    return s as string;
  };
  const inspect = async (s: string, args: Record<string, unknown>) =>
    server.call('inspect_session', { session_index: s, ...args });

  test('a repeat under reference delivery is a session_index header and a YAML stub with a note', async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    for (const [tool, args, idKey] of [
      ['get_resource', { resource_id: 'the-ladder#rungs' }, 'resource_id'],
      ['get_technique', { step_id: 'capture-and-trace' }, 'id'],
    ] as const) {
      const first = await server.call(tool, { session_index: s, ...args });
      assert.notEqual(first._meta?.['delivery'], 'unchanged', tool);
      const again = await server.call(tool, { session_index: s, ...args, bundle: 'reference' });
      assert.equal(again._meta?.['delivery'], 'unchanged', tool);
      const [head, body] = text(again).split('\n\n');
      assert.equal(head, `session_index: ${s}`, tool);
      const stub = parse(body as string);
      assert.deepEqual(Object.keys(stub), [idKey, 'delivery', 'content_hash', 'note'], tool);
      assert.equal(stub[idKey], 'resource_id' in args ? args.resource_id : 'scope-intake');
      assert.match(stub.content_hash, /^[0-9a-f]{16}$/);
      const full = await server.call(tool, { session_index: s, ...args, full: true });
      assert.equal(full._meta?.['delivery'], undefined, tool);
    }
  });

  test('under reference delivery a second technique collapses the shared blocks it repeats', async () => {
    const s = json(
      await server.call('start_session', { workflow_id: 'ponytail', context_mode: 'persistent' }),
    ).session_index;
    await server.call('get_workflow', { session_index: s });
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const first = parse(
      text(await server.call('get_technique', { session_index: s, step_id: 'capture-and-trace' }))
        .split('\n\n')
        .slice(1)
        .join('\n\n'),
    );
    assert.equal(typeof first.provenance_note, 'string');
    await server.call('next_activity', { session_index: s, activity_id: 'apply-ladder' });
    const second = parse(
      text(await server.call('get_technique', { session_index: s, step_id: 'climb-ladder' }))
        .split('\n\n')
        .slice(1)
        .join('\n\n'),
    );
    assert.equal(second.id, 'apply-ladder');
    assert.equal(second.provenance_note.delivery, 'unchanged');
    // bundle: full sends every block whole again.
    const full = parse(
      text(
        await server.call('get_technique', {
          session_index: s,
          step_id: 'climb-ladder',
          bundle: 'full',
        }),
      )
        .split('\n\n')
        .slice(1)
        .join('\n\n'),
    );
    assert.equal(typeof full.provenance_note, 'string');
  });

  test('respond_checkpoint checks the gate before its arguments', async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const none = await server.call('respond_checkpoint', { session_index: s });
    assert.equal(code(none), 'NO_ACTIVE_CHECKPOINT');
    await server.call('yield_checkpoint', {
      session_index: s,
      checkpoint_id: 'intensity-and-scope-confirmed',
    });
    const modes = await server.call('respond_checkpoint', { session_index: s });
    assert.equal(code(modes), 'CHECKPOINT_INVALID');
  });

  test("a new agent's first fetch records its dispatch once; history and usage filter by agent", async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    await server.call('get_activity', { session_index: s, context_tokens: 200000 });
    const dispatched = async (agent?: string) =>
      json(await inspect(s, { view: 'history', ...(agent ? { agent_id: agent } : {}) })).byType
        .activity_dispatched ?? 0;
    assert.equal(await dispatched(), 1);
    for (let i = 0; i < 2; i++)
      await server.call('get_resource', {
        session_index: s,
        resource_id: 'the-ladder',
        agent_id: 'worker-b',
      });
    assert.equal(await dispatched(), 2);
    assert.equal(await dispatched('worker-b'), 1);
    await server.call('record_usage', {
      session_index: s,
      activity: 'intake-and-scope',
      usage: { input_tokens: 10, output_tokens: 5 },
      basis: 'delta',
    });
    const r = json(
      await server.call('record_usage', {
        session_index: s,
        activity: 'intake-and-scope',
        usage: { total_tokens: 99 },
        basis: 'cumulative',
        agent_id: 'worker-b',
      }),
    );
    assert.equal(r.usage_events, 2);
    const usage = json(await inspect(s, { view: 'usage' }));
    assert.deepEqual(usage.totals, { input_tokens: 10, output_tokens: 5 });
    assert.deepEqual(usage.cumulative_latest_by_agent, { 'worker-b': { total_tokens: 99 } });
    assert.equal(usage.unstated_basis, 0);
    assert.equal(usage.wall_clock_ms_not_additive, true);
    assert.deepEqual(
      usage.rows.map((x: { basis: string }) => x.basis),
      ['delta', 'cumulative'],
    );
    const mine = json(await inspect(s, { view: 'usage', agent_id: 'worker-b' }));
    assert.equal(mine.rows.length, 1);
    assert.deepEqual(mine.totals, {});
  });

  test('inspect views: bare variable, progress marks, milestones without timestamps, children with cost', async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    assert.equal(
      json(await inspect(s, { view: 'variables', variable: 'artifact_dir' })),
      '.ponytail',
    );
    // An unset variable is JSON null (the public server returns no text at all).
    assert.equal(json(await inspect(s, { view: 'variables', variable: 'no_such' })), null);
    const acts = json(await inspect(s, { view: 'activities' }));
    assert.deepEqual(acts.progress_mark_unreported, ['intake-and-scope']);
    assert.deepEqual(acts.progress_mark_unpublished, []);
    const none = await inspect(s, { view: 'summary', child_index: 0 });
    assert.equal(none.isError, true);
    assert.equal(code(none), 'CHILD_NOT_FOUND');
    const child = json(
      await server.call('dispatch_child', {
        session_index: s,
        workflow_id: 'requirements-refinement',
        repo: 'example/repo',
      }),
    );
    const history = json(await inspect(s, { view: 'history' }));
    assert.deepEqual(history.milestones.at(-1), {
      type: 'workflow_triggered',
      activity: 'intake-and-scope',
    });
    const [c] = json(await inspect(s, { view: 'children' }));
    assert.equal(c.sessionIndex, child.session_index);
    assert.equal(c.cost_known, false);
    assert.equal(c.rows, 0);
    const identity = json(await inspect(s, { view: 'identity', child_index: 0 }));
    assert.equal(identity.planningFolderPath, undefined);
    const status = json(
      await server.call('get_workflow_status', { session_index: child.session_index }),
    );
    assert.equal(status.parent, undefined);
    const wf = text(await server.call('get_workflow', { session_index: child.session_index }));
    assert.match(wf, /planning_folder_path: \//);
  });

  test('status falls back to the traced entries and the traced last answer', async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    const before = json(await server.call('get_workflow_status', { session_index: s }));
    assert.deepEqual(before.completed_activities, ['intake-and-scope']);
    assert.equal(before.last_checkpoint, undefined);
    await server.call('yield_checkpoint', {
      session_index: s,
      checkpoint_id: 'intensity-and-scope-confirmed',
    });
    await server.call('respond_checkpoint', { session_index: s, option_id: 'lite-change' });
    const after = json(await server.call('get_workflow_status', { session_index: s }));
    assert.equal(after.last_checkpoint.activity_id, 'intake-and-scope');
    assert.equal(typeof after.last_checkpoint.timestamp, 'number');
    const replay = json(
      await server.call('yield_checkpoint', {
        session_index: s,
        checkpoint_id: 'intensity-and-scope-confirmed',
      }),
    );
    assert.equal(replay.status, 'replayed');
    assert.match(replay.message, /already has a recorded response \(option 'lite-change'\)/);
    const undeclared = await server.call('yield_checkpoint', {
      session_index: s,
      checkpoint_id: 'no-such-checkpoint',
      message: 'only a message',
    });
    assert.equal(code(undeclared), 'CHECKPOINT_INVALID');
  });

  test('trace-token refusals are strings; an empty list reads the memory trace', async () => {
    const s = await started('ponytail');
    const t = json(
      await server.call('get_trace', { session_index: s, trace_tokens: ['no-dot', 'a.b'] }),
    );
    assert.equal(t.source, 'tokens');
    assert.equal(t.token_errors.length, 2);
    for (const e of t.token_errors) assert.equal(typeof e, 'string');
    const m = json(await server.call('get_trace', { session_index: s, trace_tokens: [] }));
    assert.equal(m.source, 'memory');
  });

  test('a transient meta session records no planning folder, get_workflow still reports it', async () => {
    const s = json(await server.call('start_session', {})).session_index;
    const wf = text(await server.call('get_workflow', { session_index: s }));
    assert.match(wf, /planning_folder_path: \//);
    const identity = json(await inspect(s, { view: 'identity' }));
    assert.equal(identity.workflowId, 'meta');
    assert.equal(identity.planningFolderPath, undefined);
  });

  test('a finished run records workflow_completed with no activity', async () => {
    const s = await started('ponytail');
    await server.call('next_activity', { session_index: s, activity_id: 'intake-and-scope' });
    await server.call('next_activity', { session_index: s, activity_id: '__terminal__' });
    const history = json(await inspect(s, { view: 'history' }));
    assert.deepEqual(history.milestones.at(-1), { type: 'workflow_completed' });
  });
});

/**
 * Hostile identifiers and paths against the sessions profile, through the built CLI and the SDK
 * client: reserved object keys as agent ids, variable names and usage keys are refused with
 * INVALID_ARGUMENT and never reach Object.prototype (the server keeps answering every session),
 * and planning slugs cannot leave the planning root.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Connected, startMhl } from '../../bench/lib/session-servers.mjs';
import type { ToolCallResult } from '../../bench/lib/session-walker.mjs';
import { CLI } from '../helpers/cli.js';

const CORPUS = join(import.meta.dirname, '..', 'fixtures', 'sessions', 'corpus');

const code = (r: ToolCallResult) =>
  (r._meta?.['mhl/diagnostic'] as { code?: string } | undefined)?.code;
const text = (r: ToolCallResult) => r.content?.[0]?.text ?? '';
const json = (r: ToolCallResult) => JSON.parse(text(r));

describe('sessions hostile input', () => {
  let dir: string;
  let server: Connected;
  let index: string;
  let other: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mhl-sessions-hostile-'));
    server = await startMhl(CLI, CORPUS, dir);
    index = json(await server.call('start_session', { workflow_id: 'ponytail' })).session_index;
    other = json(await server.call('start_session', { workflow_id: 'ponytail' })).session_index;
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // After each hostile call the whole process must still work: health_check answers, and another
  // session's strict-schema calls succeed (a polluted prototype made every one of them fail).
  async function assertHealthy(what: string) {
    const h = await server.call('health_check', {});
    assert.equal(h.isError, undefined, `${what}: health_check`);
    const n = await server.call('next_activity', {
      session_index: other,
      activity_id: 'intake-and-scope',
    });
    assert.equal(n.isError, undefined, `${what}: ${text(n)}`);
    const s = await server.call('inspect_session', { session_index: other, view: 'identity' });
    assert.equal(s.isError, undefined, `${what}: inspect_session`);
  }

  for (const key of ['__proto__', 'constructor', 'prototype']) {
    test(`agent_id ${key} is INVALID_ARGUMENT and pollutes nothing`, async () => {
      const calls: [string, Record<string, unknown>][] = [
        ['next_activity', { session_index: index, activity_id: 'intake-and-scope', agent_id: key }],
        ['get_activity', { session_index: index, activity_id: 'intake-and-scope', agent_id: key }],
        ['get_technique', { session_index: index, agent_id: key }],
        ['start_session', { workflow_id: 'ponytail', agent_id: key }],
        ['dispatch_child', { session_index: index, workflow_id: 'ponytail', agent_id: key }],
      ];
      for (const [name, args] of calls) {
        const r = await server.call(name, args);
        assert.equal(r.isError, true, `${name} ${key}`);
        assert.equal(code(r), 'INVALID_ARGUMENT', `${name} ${key}: ${text(r)}`);
      }
      await assertHealthy(`agent_id ${key}`);
    });

    test(`variables_changed and usage keyed ${key} are INVALID_ARGUMENT`, async () => {
      const bag = JSON.parse(`{"${key}": {"polluted": 1}, "ok": 1}`);
      const n = await server.call('next_activity', {
        session_index: index,
        activity_id: 'intake-and-scope',
        variables_changed: bag,
      });
      const u = await server.call('record_usage', {
        session_index: index,
        activity: 'intake-and-scope',
        usage: bag,
        basis: 'delta',
      });
      if (key === '__proto__') {
        // The SDK's own request parsing copies arguments into fresh objects, so a JSON
        // "__proto__" member arrives as that copy's prototype, not as a key: nothing to refuse,
        // and nothing may be stored from it.
        assert.equal(n.isError, undefined, text(n));
        assert.equal(u.isError, undefined, text(u));
        const vars = json(
          await server.call('inspect_session', { session_index: index, view: 'variables' }),
        );
        assert.equal(JSON.stringify(vars).includes('polluted'), false, JSON.stringify(vars));
      } else {
        assert.equal(code(n), 'INVALID_ARGUMENT', text(n));
        assert.equal(code(u), 'INVALID_ARGUMENT', text(u));
      }
      const v = await server.call('inspect_session', {
        session_index: index,
        view: 'variables',
        variable: key,
      });
      assert.equal(code(v), 'INVALID_ARGUMENT', text(v));
      await assertHealthy(`bag ${key}`);
    });
  }

  test('a key a strict schema does not declare is INVALID_ARGUMENT naming that key', async () => {
    const r = await server.call('start_session', { workflow_id: 'ponytail', nonsense: 1 });
    assert.equal(code(r), 'INVALID_ARGUMENT', text(r));
    const diagnostic = r._meta?.['mhl/diagnostic'] as { field?: string } | undefined;
    assert.equal(diagnostic?.field, 'nonsense');
  });

  test('dispatch_child planning_slug cannot leave the planning root', async () => {
    const planning = join(dir, 'mhl', 'ws', '.engineering', 'artifacts', 'planning');
    const listed = await server.client.listTools();
    const dispatch = listed.tools.find((t) => t.name === 'dispatch_child');
    assert.ok(dispatch, 'dispatch_child listed');
    const props = dispatch.inputSchema.properties as Record<string, { pattern?: string }>;
    const pattern = props['planning_slug']?.pattern;
    assert.ok(pattern, 'planning_slug advertises its pattern');
    for (const slug of ['..', '.', '.x', '../x', 'a/b', '', 'x'.repeat(300)]) {
      const meta = json(await server.call('start_session', {})).session_index;
      const r = await server.call('dispatch_child', {
        session_index: meta,
        workflow_id: 'ponytail',
        planning_slug: slug,
      });
      assert.equal(code(r), 'INVALID_ARGUMENT', `${JSON.stringify(slug)}: ${text(r)}`);
      assert.equal(new RegExp(pattern).test(slug), false, `advertised pattern takes ${slug}`);
    }
    assert.equal(existsSync(join(planning, 'session.json')), false, 'planning root');
    assert.equal(existsSync(join(planning, '..', 'session.json')), false, 'artifacts');
    const meta = json(await server.call('start_session', {})).session_index;
    const ok = await server.call('dispatch_child', {
      session_index: meta,
      workflow_id: 'ponytail',
      planning_slug: 'plain-slug.v2',
    });
    assert.equal(ok.isError, undefined, text(ok));
    assert.equal(json(ok).planning_folder_path, join(planning, 'plain-slug.v2'));
  });

  test('a session.json that is a folder is SEAL_MISMATCH, not an internal error', async () => {
    const started = json(
      await server.call('start_session', {
        workflow_id: 'ponytail',
        planning_folder: '/x/dir-json',
      }),
    );
    const file = join(started.planning_folder_path, 'session.json');
    rmSync(file);
    mkdirSync(file);
    const r = await server.call('inspect_session', {
      session_index: started.session_index,
      view: 'identity',
    });
    assert.equal(code(r), 'SEAL_MISMATCH', text(r));
  });

  test('concurrent start_session on one planning folder: one session, the others resume it', async () => {
    const workflows = ['ponytail', 'requirements-refinement', 'prism-update'];
    const results = await Promise.all(
      workflows.map((workflow_id, i) =>
        server.call('start_session', {
          workflow_id,
          planning_folder: '/x/raced',
          agent_id: `agent-${i}`,
        }),
      ),
    );
    for (const r of results) assert.equal(r.isError, undefined, text(r));
    const started = results.map(json);
    const indexes = new Set(started.map((s) => s.session_index));
    assert.equal(indexes.size, 1, 'one session index');
    // workflow_id is ignored on resume: every caller must be told about the one session
    // that won, and the file must hold that workflow.
    const ids = new Set(started.map((s) => s.workflow.id));
    assert.equal(ids.size, 1, `one workflow, got ${[...ids].join(', ')}`);
    const status = json(
      await server.call('get_workflow_status', { session_index: started[0].session_index }),
    );
    assert.equal(status.workflow.id, [...ids][0]);
  });

  test('step_started is written at most once per (activity, step, agent)', async () => {
    const started = json(
      await server.call('start_session', { workflow_id: 'ponytail', planning_folder: '/x/steps' }),
    );
    const session_index = started.session_index;
    const calls: [string, Record<string, unknown>][] = [
      ['next_activity', { session_index, activity_id: 'intake-and-scope' }],
      ['get_activity', { session_index, context_tokens: 200000 }],
      ['get_activity', { session_index, context_tokens: 200000 }],
    ];
    for (const [name, args] of calls) {
      const r = await server.call(name, args);
      assert.equal(r.isError, undefined, `${name}: ${text(r)}`);
    }
    for (const agent_id of ['w1', 'w1', 'w2', 'w2']) {
      const r = await server.call('get_technique', {
        session_index,
        step_id: 'capture-and-trace',
        agent_id,
      });
      assert.equal(r.isError, undefined, text(r));
    }
    const file = JSON.parse(
      readFileSync(join(started.planning_folder_path, 'session.json'), 'utf8'),
    );
    const seen = new Map<string, number>();
    for (const e of file.history as {
      type: string;
      activity?: string;
      data?: Record<string, unknown>;
    }[]) {
      if (e.type !== 'step_started') continue;
      const k = `${e.activity}|${e.data?.['stepId']}|${e.data?.['agentId']}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    assert.ok(seen.size >= 2, `step_started recorded: ${[...seen.keys()].join(', ')}`);
    for (const [k, n] of seen) assert.equal(n, 1, `${k} started ${n} times`);
  });

  test('calls on made-up indexes record no trace, so they cannot evict a real one', async () => {
    const before = json(await server.call('get_trace', { session_index: other }));
    assert.ok(before.event_count > 0, 'the real session has a trace');
    const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    const calls = [];
    for (let i = 0; i < 1001; i++) {
      let fake = '';
      for (let d = 0, n = i; d < 6; d++, n = Math.floor(n / 32)) fake += B32[n % 32];
      calls.push(server.call('next_activity', { session_index: fake, activity_id: 'x' }));
    }
    const results = await Promise.all(calls);
    assert.ok(results.every((r) => code(r) === 'NOT_FOUND'));
    const after = json(await server.call('get_trace', { session_index: other }));
    assert.ok(after.event_count >= before.event_count, `trace kept: ${after.event_count}`);
  });

  test('arguments larger than the HTTP body limit are INVALID_ARGUMENT over stdio too', async () => {
    const r = await server.call('record_usage', {
      session_index: other,
      activity: 'intake-and-scope',
      usage: { blob: 'x'.repeat(1024 * 1024 + 1) },
      basis: 'delta',
    });
    assert.equal(code(r), 'INVALID_ARGUMENT', text(r).slice(0, 200));
    const v = await server.call('next_activity', {
      session_index: other,
      activity_id: 'intake-and-scope',
      variables_changed: { big: 'y'.repeat(1024 * 1024 + 1) },
    });
    assert.equal(code(v), 'INVALID_ARGUMENT', text(v).slice(0, 200));
  });

  test('next_activity warns on artifacts outside the folder and files no artifact covers', async () => {
    const started = json(
      await server.call('start_session', { workflow_id: 'ponytail', planning_folder: '/x/arts' }),
    );
    const folder = started.planning_folder_path;
    writeFileSync(join(folder, 'design-doc.md'), 'covered by id');
    writeFileSync(join(folder, 'stray-notes.md'), 'not covered');
    writeFileSync(join(folder, '.hidden'), 'dotfiles are excluded');
    const r = await server.call('next_activity', {
      session_index: started.session_index,
      activity_id: 'intake-and-scope',
      artifacts_produced: [
        { id: 'design-doc', name: 'Design' },
        { id: 'escape', name: 'Escape', path: '../../outside.md' },
        { id: 'plan', name: 'Plan', path: 'plan.md' },
      ],
    });
    assert.equal(r.isError, undefined, text(r));
    const warnings = JSON.stringify(r._meta?.['validation'] ?? {});
    assert.match(warnings, /'escape' path '\.\.\/\.\.\/outside\.md' lies outside/);
    assert.match(warnings, /'stray-notes\.md' in the planning folder is not covered/);
    for (const quiet of ['design-doc.md', 'session.json', '.session-token', '.hidden', "'plan'"])
      assert.equal(warnings.includes(quiet), false, `${quiet} reported: ${warnings}`);
    assert.equal(warnings.includes(dir), false, 'no absolute server path');
  });

  test('tools/list: only start_session and dispatch_child are strict; every parameter is described', async () => {
    const { tools } = await server.client.listTools();
    assert.equal(tools.length, 18);
    for (const t of tools) {
      const strict = t.name === 'start_session' || t.name === 'dispatch_child';
      const schema = t.inputSchema as { additionalProperties?: unknown; properties?: object };
      assert.equal(schema.additionalProperties === false, strict, `${t.name} strictness`);
      const props = (schema.properties ?? {}) as Record<string, { description?: string }>;
      for (const [name, p] of Object.entries(props))
        assert.ok((p.description ?? '').length > 0, `${t.name}.${name} has a description`);
    }
    // A non-strict tool drops an unknown key, as the public server does; a strict one refuses it.
    const n = await server.call('inspect_session', { session_index: other, extra_key: 1 });
    assert.equal(n.isError, undefined, text(n));
    const s = await server.call('start_session', { workflow_id: 'ponytail', extra_key: 1 });
    assert.equal(code(s), 'INVALID_ARGUMENT', text(s));
  });
});

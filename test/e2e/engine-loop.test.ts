/**
 * Acceptance: the complete stateless validation loop on a step with two validators (fixture
 * `test/fixtures/engine/loop-release`): version selection, a failed validator keeping the step
 * while the other's pass is kept, the retry asking only for the failed one (reuse for identical
 * inputs only), a repaired artifact asking for both again, completion; and a walk one server
 * process starts and a second one (same state dir, so the same key file) continues: nothing
 * lives in memory between calls.
 */
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../helpers/cli.js';
import {
  artifact,
  LOOP_BY as BY,
  confirmed,
  type EngineSession,
  engineSession,
  LOOP_HOST as HOST,
  LOOP_RELEASE as LOOP,
  project,
  put,
  reports,
  type Structured,
  TOOLS,
} from '../helpers/engine.js';

const STATE = confirmed({ topic: 'caching' });

function manifest(root: string, host: Structured = HOST): Structured {
  const doc = {
    harness: 'claude-code',
    adapter: HOST.adapter,
    capabilities: ['file-write'],
    validator_capabilities: host.validator_capabilities,
    assets: [],
  };
  return artifact(
    root,
    'workspace-manifest',
    '.rimthan/workspace-manifest.json',
    JSON.stringify(doc),
  );
}

/** Starts review-loop and passes setup-workspace; the checkpoint at `draft`. */
async function toDraft(
  s: EngineSession,
  root: string,
  version?: string,
  host: Structured = HOST,
): Promise<string> {
  const started = await s.call(TOOLS.start, {
    workflow: 'loop',
    ...(version ? { workflow_version: version } : {}),
    confirmed_state: STATE,
    host,
  });
  assert.equal(started.structured.status, 'active', JSON.stringify(started.structured));
  const checkpoint = started.structured.checkpoint;
  const p = await s.call(TOOLS.prepare, {
    checkpoint,
    confirmed_state: STATE,
    artifacts: [manifest(root, host)],
    attestation: { project_root: root, repository_policy: HOST.repository_policy },
  });
  assert.equal(p.structured.status, 'ready_for_semantic_validation', JSON.stringify(p.structured));
  const sub = await s.call(TOOLS.submit, {
    checkpoint,
    confirmed_state: STATE,
    validation_bundle: p.structured.validation_bundle,
    reports: [],
  });
  assert.equal(sub.structured.status, 'advanced');
  return sub.structured.checkpoint;
}

const prepareDraft = (s: EngineSession, root: string, checkpoint: string, text: string) =>
  s.call(TOOLS.prepare, {
    checkpoint,
    confirmed_state: STATE,
    artifacts: [artifact(root, 'draft', 'out/draft.json', text)],
    attestation: { project_root: root, repository_policy: HOST.repository_policy },
  });

const ids = (r: Structured) => r.structured.validators.map((v: Structured) => v.id);

describe('workflow-engine: the stateless validation loop', () => {
  let s: EngineSession;
  before(async () => {
    s = await engineSession([LOOP]);
  });
  after(() => s.close());

  it('selects the newest version of an alias unless one is named', async () => {
    const newest = await s.call(TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: HOST,
    });
    const payload = JSON.parse(
      Buffer.from(newest.structured.checkpoint.split('.')[0], 'base64url').toString(),
    );
    assert.equal(payload.workflow.version, '1.1.0');
    const named = await s.call(TOOLS.start, {
      workflow: 'review-loop',
      workflow_version: '1.0.0',
      confirmed_state: STATE,
      host: HOST,
    });
    assert.equal(named.structured.status, 'active');
    const missing = await s.call(TOOLS.start, {
      workflow: 'loop',
      workflow_version: '9.9.9',
      confirmed_state: STATE,
      host: HOST,
    });
    assert.equal(missing.structured.code, 'workflow_version_not_found');
  });

  it('keeps passes across a failure and asks only for the failed validator again', async () => {
    const root = project();
    let checkpoint = await toDraft(s, root);
    const draft = JSON.stringify({ title: 'Caching plan' });
    const p1 = await prepareDraft(s, root, checkpoint, draft);
    assert.deepEqual(ids(p1), ['style', 'facts']);
    const mixed = reports(p1.structured, 'pass', BY).map((r: Structured) =>
      r.validator_id === 'facts'
        ? { ...r, outcome: 'fail', findings: [{ message: 'unsourced claim' }] }
        : r,
    );
    const failed = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: p1.structured.validation_bundle,
      reports: mixed,
    });
    assert.equal(failed.structured.status, 'validation_failed');
    assert.deepEqual(
      failed.structured.findings.map((f: Structured) => f.validator_id),
      ['facts'],
    );
    checkpoint = failed.structured.checkpoint;
    // The same step again, on continue too.
    const c = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(c.structured.status, 'active');
    assert.equal(c.structured.step.id, 'draft');
    const p2 = await prepareDraft(s, root, checkpoint, draft);
    assert.deepEqual(ids(p2), ['facts']);
    assert.deepEqual(
      p2.structured.validation_bundle.validators.map((v: Structured) => [v.id, v.reused]),
      [
        ['style', true],
        ['facts', false],
      ],
    );
    const withReused = [...reports(p2.structured, 'pass', BY), { ...mixed[0], outcome: 'pass' }];
    const extra = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: p2.structured.validation_bundle,
      reports: withReused,
    });
    assert.equal(extra.structured.code, 'validator_report_extra');
    // A repaired artifact is new input: both validators run again.
    const p3 = await prepareDraft(
      s,
      root,
      checkpoint,
      JSON.stringify({ title: 'Caching plan, sourced' }),
    );
    assert.deepEqual(ids(p3), ['style', 'facts']);
    // Back to the bytes the pass was for: only the failed validator.
    const p4 = await prepareDraft(s, root, checkpoint, draft);
    assert.deepEqual(ids(p4), ['facts']);
    const done = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: p4.structured.validation_bundle,
      reports: reports(p4.structured, 'pass', BY),
    });
    assert.equal(done.structured.status, 'completed');
  });

  it('binds a step’s inputs to the bytes their receipts name', async () => {
    const root = project();
    const checkpoint = await toDraft(s, root, '1.0.0');
    const p = await prepareDraft(s, root, checkpoint, JSON.stringify({ title: 'Inputs' }));
    const sub = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: p.structured.validation_bundle,
      reports: reports(p.structured, 'pass', BY),
    });
    // Proven, but its branch needs a field: asked, then taken on continue.
    assert.equal(sub.structured.status, 'input_required');
    assert.equal(sub.structured.question.field, 'channel');
    const routed = confirmed({ topic: 'caching', channel: 'blog' });
    const c = await s.call(TOOLS.continue, {
      checkpoint: sub.structured.checkpoint,
      prior_confirmed_state: STATE,
      confirmed_state: routed,
    });
    assert.equal(c.structured.status, 'active', JSON.stringify(c.structured));
    assert.equal(c.structured.step.id, 'publish');
    const publish = c.structured.checkpoint;
    const note = () => artifact(root, 'note', 'out/note.md', 'Published.\n');
    const att = { project_root: root, repository_policy: HOST.repository_policy };
    put(root, 'out/draft.json', JSON.stringify({ title: 'Edited after its validation' }));
    const changed = await s.call(TOOLS.prepare, {
      checkpoint: publish,
      confirmed_state: routed,
      artifacts: [note()],
      attestation: att,
    });
    assert.equal(changed.structured.status, 'deterministic_validation_failed');
    assert.deepEqual(
      changed.structured.failures.map((f: Structured) => f.code),
      ['input_digest_mismatch'],
    );
    put(root, 'out/draft.json', JSON.stringify({ title: 'Inputs' }));
    const ok = await s.call(TOOLS.prepare, {
      checkpoint: publish,
      confirmed_state: routed,
      artifacts: [note()],
      attestation: att,
    });
    assert.equal(
      ok.structured.status,
      'ready_for_semantic_validation',
      JSON.stringify(ok.structured),
    );
  });

  it('refuses validators the bound host cannot run, and other validator capabilities', async () => {
    const root = project();
    const noWeb = { ...HOST, validator_capabilities: [] };
    const checkpoint = await toDraft(s, root, undefined, noWeb);
    const p = await prepareDraft(s, root, checkpoint, JSON.stringify({ title: 't' }));
    assert.deepEqual(
      p.structured.failures.map((f: Structured) => f.code),
      ['validator_capability_missing'],
    );
    const other = await toDraft(s, project());
    const mismatch = await s.call(TOOLS.prepare, {
      checkpoint: other,
      confirmed_state: STATE,
      artifacts: [],
      attestation: {
        project_root: root,
        repository_policy: HOST.repository_policy,
        validator_capabilities: ['web', 'shell'],
      },
    });
    assert.ok(
      mismatch.structured.failures
        .map((f: Structured) => f.code)
        .includes('host_capability_mismatch'),
    );
  });

  it('returns a gated step again on continue, reissued when the state changed', async () => {
    const checkpoint = await toDraft(s, project());
    const same = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(same.structured.checkpoint, checkpoint);
    const next = confirmed({ topic: 'sharding' });
    const changed = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: STATE,
      confirmed_state: next,
    });
    assert.equal(changed.structured.status, 'active');
    assert.equal(changed.structured.step.id, 'draft');
    assert.notEqual(changed.structured.checkpoint, checkpoint);
    const payload = (t: string) =>
      JSON.parse(Buffer.from(t.split('.')[0] as string, 'base64url').toString());
    assert.equal(payload(changed.structured.checkpoint).step, 'draft');
    assert.notEqual(
      payload(changed.structured.checkpoint).confirmed_state_digest,
      payload(checkpoint).confirmed_state_digest,
    );
    const wrongPrior = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: next,
      confirmed_state: next,
    });
    assert.deepEqual(
      wrongPrior.structured.failures.map((f: Structured) => f.code),
      ['state_digest_mismatch'],
    );
  });

  it('refuses a bundle prepared for another checkpoint', async () => {
    const root = project();
    const checkpoint = await toDraft(s, root);
    const p = await prepareDraft(s, root, checkpoint, JSON.stringify({ title: 't' }));
    const other = await toDraft(s, project());
    const r = await s.call(TOOLS.submit, {
      checkpoint: other,
      confirmed_state: STATE,
      validation_bundle: p.structured.validation_bundle,
      reports: reports(p.structured, 'pass', BY),
    });
    assert.equal(r.structured.code, 'invalid_validation_bundle');
    const edited = { ...p.structured.validation_bundle, step: 'setup-workspace' };
    const r2 = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: STATE,
      validation_bundle: edited,
      reports: [],
    });
    assert.equal(r2.structured.code, 'invalid_validation_bundle');
  });
});

describe('workflow-engine: a second process continues the walk', () => {
  it('continues with the key file of the shared state dir, and refuses it under another key', async () => {
    const stateDir = tempDir('mhl-engine-state-');
    const root = project();
    const first = await engineSession([LOOP, '--state-dir', stateDir], { MHL_ENGINE_KEY: '' });
    let checkpoint: string;
    try {
      checkpoint = await toDraft(first, root);
    } finally {
      await first.close();
    }
    assert.equal(statSync(join(stateDir, 'engine.key')).mode & 0o777, 0o600);
    const second = await engineSession([LOOP, '--state-dir', stateDir], { MHL_ENGINE_KEY: '' });
    try {
      const draft = JSON.stringify({ title: 'From the second process' });
      const p = await prepareDraft(second, root, checkpoint, draft);
      assert.equal(
        p.structured.status,
        'ready_for_semantic_validation',
        JSON.stringify(p.structured),
      );
      const done = await second.call(TOOLS.submit, {
        checkpoint,
        confirmed_state: STATE,
        validation_bundle: p.structured.validation_bundle,
        reports: reports(p.structured, 'pass', BY),
      });
      assert.equal(done.structured.status, 'completed');
    } finally {
      await second.close();
    }
    const stranger = await engineSession([LOOP], {
      MHL_ENGINE_KEY: 'another-key-of-at-least-thirty-two-bytes',
    });
    try {
      const r = await stranger.call(TOOLS.continue, {
        checkpoint,
        prior_confirmed_state: STATE,
        confirmed_state: STATE,
      });
      assert.equal(r.isError, true);
      assert.equal(r.structured.code, 'invalid_checkpoint');
    } finally {
      await stranger.close();
    }
  });

  it('takes the same hex text as the same key in MHL_ENGINE_KEY and in engine.key', async () => {
    const hex = `${'c0ffee'.repeat(10)}0123`;
    const byEnv = await engineSession([LOOP], { MHL_ENGINE_KEY: hex });
    let checkpoint: string;
    try {
      const started = await byEnv.call(TOOLS.start, {
        workflow: 'loop',
        confirmed_state: STATE,
        host: HOST,
      });
      checkpoint = started.structured.checkpoint;
    } finally {
      await byEnv.close();
    }
    const stateDir = tempDir('mhl-engine-state-');
    writeFileSync(join(stateDir, 'engine.key'), `${hex}\n`, { mode: 0o600 });
    const byFile = await engineSession([LOOP, '--state-dir', stateDir], { MHL_ENGINE_KEY: '' });
    try {
      const r = await byFile.call(TOOLS.continue, {
        checkpoint,
        prior_confirmed_state: STATE,
        confirmed_state: STATE,
      });
      assert.equal(r.isError, false, JSON.stringify(r.structured));
    } finally {
      await byFile.close();
    }
  });
});

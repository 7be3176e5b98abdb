/**
 * Acceptance: the packaged `research-decision@1.2.0` walked through every gate by a host on
 * the official SDK client, against the built CLI: confirmation and host checks at start, the
 * setup-workspace attestation, the ungated interview and contract steps, the route question
 * until `research_route` is confirmed, a deterministic failure before any semantic validation,
 * report-set and wrong-host rejections, a failed validator keeping the step, the retry, the
 * memo and completion; then a migration preview and a confirmed restart on 1.3.0.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  artifact,
  attestation,
  claudeHost,
  confirmed,
  type EngineSession,
  engineSession,
  installSetup,
  LITERATURE,
  project,
  reports,
  type Structured,
  sha256,
  TOOLS,
} from '../helpers/engine.js';

const OBJECTIVE = 'Decide whether the platform adopts the new cache layer';
const failureCodes = (r: Structured) => (r.failures ?? []).map((f: Structured) => f.code);
const tokenPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString('utf8'));

describe('workflow-engine: research-decision@1.2.0 end to end', () => {
  let s: EngineSession;
  const host = claudeHost();
  const root = project();
  let state = confirmed({ objective: OBJECTIVE, audience: 'platform team' });
  let checkpoint = '';

  before(async () => {
    s = await engineSession();
  });
  after(() => s.close());

  it('blocks a start with an unconfirmed field or an incompatible host', async () => {
    const unconfirmedState = { state: { objective: OBJECTIVE }, confirmations: {} };
    const r1 = await s.call(TOOLS.start, {
      workflow: 'research',
      confirmed_state: unconfirmedState,
      host,
    });
    assert.equal(r1.structured.status, 'blocked');
    assert.deepEqual(failureCodes(r1.structured), ['confirmation_required']);
    const ahead = await s.call(TOOLS.start, {
      workflow: 'research',
      confirmed_state: confirmed({ objective: OBJECTIVE }, new Date(Date.now() + 3_600_000)),
      host,
    });
    assert.deepEqual(failureCodes(ahead.structured), ['confirmation_required']);
    const other = claudeHost({ harness: 'cursor', adapter: { id: 'cursor', version: '1.0.0' } });
    const r2 = await s.call(TOOLS.start, {
      workflow: 'research',
      confirmed_state: state,
      host: other,
    });
    assert.equal(r2.structured.status, 'blocked');
    assert.ok(failureCodes(r2.structured).includes('host_incompatible'));
    const old = claudeHost({ adapter: { id: 'claude-code', version: '2.0.0' } });
    const r3 = await s.call(TOOLS.start, {
      workflow: 'research',
      confirmed_state: state,
      host: old,
    });
    assert.ok(failureCodes(r3.structured).includes('host_incompatible'));
    const r4 = await s.call(TOOLS.start, { workflow: 'nope', confirmed_state: state, host });
    assert.equal(r4.isError, true);
    assert.equal(r4.structured.code, 'workflow_not_found');
  });

  it('starts at setup-workspace with every host asset and a token without the objective', async () => {
    const r = await s.call(TOOLS.start, { workflow: 'research', confirmed_state: state, host });
    assert.equal(r.isError, false);
    assert.equal(r.structured.status, 'active');
    assert.equal(r.text, JSON.stringify(JSON.parse(r.text))); // canonical: no whitespace
    const step = r.structured.step;
    assert.equal(step.id, 'setup-workspace');
    assert.deepEqual(
      ['prompts', 'skills', 'subagents'].map((k) =>
        step.host_assets[k].map((a: Structured) => a.name),
      ),
      [['research-brief'], ['source-triage'], ['decision-validator']],
    );
    assert.equal(step.host_assets.skills[0].install_path, '.claude/skills/source-triage/SKILL.md');
    assert.equal(step.host_adapter.id, 'claude-code');
    checkpoint = r.structured.checkpoint;
    const payload = tokenPayload(checkpoint);
    assert.equal(payload.sequence, 1);
    assert.equal(payload.parent, null);
    assert.deepEqual(payload.artifacts, {});
    assert.deepEqual(payload.validators, {});
    assert.deepEqual(payload.host, {
      harness: 'claude-code',
      adapter_version: '1.0.3',
      capabilities: ['file-write', 'subagents'],
      validator_capabilities: ['subagent'],
    });
    assert.ok(
      !Buffer.from(checkpoint.split('.')[0] as string, 'base64url')
        .toString()
        .includes('cache layer'),
    );
    assert.ok(!checkpoint.includes(Buffer.from(OBJECTIVE).toString('base64url').slice(0, 12)));
  });

  it('refuses setup without attestation, then with an asset not installed as released', async () => {
    const r0 = await s.call(TOOLS.start, { workflow: 'research', confirmed_state: state, host });
    const manifest = installSetup(root, r0.structured.step, host);
    const bare = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [manifest],
    });
    assert.equal(bare.structured.status, 'deterministic_validation_failed');
    assert.equal(bare.structured.validation_bundle, null);
    assert.deepEqual(bare.structured.validators, []);
    assert.ok(failureCodes(bare.structured).includes('output_attestation_required'));
    const { put } = await import('../helpers/engine.js');
    put(root, '.claude/commands/research-brief.md', 'edited by hand\n');
    const bad = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [manifest],
      attestation: attestation(root),
    });
    assert.equal(bad.structured.status, 'deterministic_validation_failed');
    assert.ok(failureCodes(bad.structured).includes('workspace_manifest_contract_mismatch'));
    installSetup(root, r0.structured.step, host);
  });

  it('passes setup-workspace and advances to the ungated interview', async () => {
    const r0 = await s.call(TOOLS.start, { workflow: 'research', confirmed_state: state, host });
    const manifest = installSetup(root, r0.structured.step, host);
    const p = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [manifest],
      attestation: attestation(root, { validator_capabilities: ['subagent'] }),
    });
    assert.equal(
      p.structured.status,
      'ready_for_semantic_validation',
      JSON.stringify(p.structured.failures),
    );
    assert.equal(p.structured.validation_token, p.structured.validation_bundle.validation_token);
    assert.equal(p.structured.validation_bundle.checkpoint_digest, sha256(checkpoint));
    const sub = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: state,
      validation_bundle: p.structured.validation_bundle,
      reports: [],
    });
    assert.equal(sub.structured.status, 'advanced');
    assert.equal(sub.structured.step.id, 'interview');
    assert.equal(tokenPayload(sub.structured.checkpoint).parent, sha256(checkpoint));
    checkpoint = sub.structured.checkpoint;
  });

  it('completes interview, refuses an unconfirmed change, then reaches select-route', async () => {
    const r1 = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: state,
    });
    assert.equal(r1.structured.status, 'active');
    assert.equal(r1.structured.step.id, 'confirm-contract');
    checkpoint = r1.structured.checkpoint;
    const stale = confirmed(
      { ...state.state, contract_confirmed: true },
      new Date(Date.now() - 3_600_000),
    );
    const r2 = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: stale,
    });
    assert.equal(r2.structured.status, 'blocked');
    assert.deepEqual(failureCodes(r2.structured), ['confirmation_required']);
    assert.equal(r2.structured.checkpoint, checkpoint);
    // Dated a day ahead: past the 5-minute skew allowance, so it confirms nothing.
    const future = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: confirmed(
        { ...state.state, contract_confirmed: true },
        new Date(Date.now() + 86_400_000),
      ),
    });
    assert.equal(future.structured.status, 'blocked');
    assert.deepEqual(failureCodes(future.structured), ['confirmation_required']);
    const next = {
      state: stale.state,
      confirmations: {
        ...stale.confirmations,
        contract_confirmed: confirmed({ x: 1 }).confirmations.x,
      },
    };
    const r3 = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: next,
    });
    assert.equal(r3.structured.status, 'active');
    assert.equal(r3.structured.step.id, 'select-route');
    state = next;
    checkpoint = r3.structured.checkpoint;
  });

  it('asks research_route until it is confirmed, then takes the literature branch', async () => {
    const r1 = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: state,
    });
    assert.equal(r1.structured.status, 'input_required');
    assert.equal(r1.structured.question.field, 'research_route');
    assert.deepEqual(r1.structured.question.options, ['literature', 'experiment']);
    assert.equal(r1.structured.checkpoint, checkpoint);
    const routed = confirmed({ ...state.state, research_route: 'literature' });
    const r2 = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: routed,
    });
    assert.equal(r2.structured.status, 'active');
    assert.equal(r2.structured.step.id, 'literature-review');
    state = routed;
    checkpoint = r2.structured.checkpoint;
  });

  it('fails deterministically before any semantic validation, and never advances on continue', async () => {
    const thin = JSON.stringify({
      question: 'q',
      sources: [{ title: 't', url: 'https://x', claim: 'c' }],
    });
    const a = artifact(root, 'literature-review', 'research/literature-review.json', thin);
    const p = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [a],
      attestation: attestation(root),
    });
    assert.equal(p.structured.status, 'deterministic_validation_failed');
    assert.equal(p.structured.validation_bundle, null);
    assert.deepEqual(p.structured.validators, []);
    assert.ok(failureCodes(p.structured).includes('json_schema_failed'));
    const c = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: state,
    });
    assert.equal(c.structured.status, 'active');
    assert.equal(c.structured.step.id, 'literature-review');
    assert.equal(c.structured.checkpoint, checkpoint);
  });

  it('rejects report sets that are missing, extra, duplicated, stale or from another host', async () => {
    const a = artifact(root, 'literature-review', 'research/literature-review.json', LITERATURE);
    const p = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [a],
      attestation: attestation(root),
    });
    assert.equal(
      p.structured.status,
      'ready_for_semantic_validation',
      JSON.stringify(p.structured.failures),
    );
    assert.deepEqual(
      p.structured.validators.map((v: Structured) => v.id),
      ['evidence-check'],
    );
    const bundle = p.structured.validation_bundle;
    const good = reports(p.structured);
    const submit = (rs: Structured[]) =>
      s.call(TOOLS.submit, {
        checkpoint,
        confirmed_state: state,
        validation_bundle: bundle,
        reports: rs,
      });
    const cases: [Structured[], string][] = [
      [[], 'validator_report_missing'],
      [[...good, { ...good[0], validator_id: 'other' }], 'validator_report_extra'],
      [[...good, ...good], 'validator_report_duplicate'],
      [[{ ...good[0], input_digest: '0'.repeat(64) }], 'validator_report_stale'],
      [
        reports(p.structured, 'pass', { harness: 'codex', adapter_version: '1.0.0' }),
        'validator_report_host_mismatch',
      ],
    ];
    for (const [rs, code] of cases) {
      const r = await submit(rs);
      assert.equal(r.isError, true, code);
      assert.equal(r.structured.code, code);
    }
  });

  it('keeps the step on a failed validator, then advances on the retry', async () => {
    const a = artifact(root, 'literature-review', 'research/literature-review.json', LITERATURE);
    const prep = () =>
      s.call(TOOLS.prepare, {
        checkpoint,
        confirmed_state: state,
        artifacts: [a],
        attestation: attestation(root),
      });
    const p1 = await prep();
    const f = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: state,
      validation_bundle: p1.structured.validation_bundle,
      reports: reports(p1.structured, 'fail'),
    });
    assert.equal(f.structured.status, 'validation_failed');
    assert.equal(f.structured.findings[0].validator_id, 'evidence-check');
    assert.equal(f.structured.step.id, 'literature-review');
    assert.equal(tokenPayload(f.structured.checkpoint).step, 'literature-review');
    checkpoint = f.structured.checkpoint;
    const p2 = await prep();
    assert.deepEqual(
      p2.structured.validators.map((v: Structured) => v.id),
      ['evidence-check'],
    );
    const ok = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: state,
      validation_bundle: p2.structured.validation_bundle,
      reports: reports(p2.structured),
    });
    assert.equal(ok.structured.status, 'advanced');
    assert.equal(ok.structured.step.id, 'decision-memo');
    checkpoint = ok.structured.checkpoint;
    assert.equal(
      tokenPayload(checkpoint).artifacts['literature-review'].sha256,
      sha256(LITERATURE),
    );
  });

  it('completes on the validated decision memo', async () => {
    const memo = artifact(
      root,
      'decision-memo',
      'research/decision-memo.md',
      '# Decision\n\nAdopt it.\n',
    );
    const p = await s.call(TOOLS.prepare, {
      checkpoint,
      confirmed_state: state,
      artifacts: [memo],
      attestation: attestation(root),
    });
    assert.equal(
      p.structured.status,
      'ready_for_semantic_validation',
      JSON.stringify(p.structured.failures),
    );
    const done = await s.call(TOOLS.submit, {
      checkpoint,
      confirmed_state: state,
      validation_bundle: p.structured.validation_bundle,
      reports: reports(p.structured),
    });
    assert.equal(done.structured.status, 'completed');
    const c = await s.call(TOOLS.continue, {
      checkpoint: done.structured.checkpoint,
      prior_confirmed_state: state,
      confirmed_state: state,
    });
    assert.equal(c.structured.status, 'completed');
  });

  it('previews a migration to 1.3.0, then restarts at setup-workspace once confirmed', async () => {
    const stale = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: state,
      migration: { target_release: 'research-kit@1.3.0', confirm: true },
    });
    assert.equal(stale.structured.status, 'blocked');
    assert.deepEqual(failureCodes(stale.structured), ['confirmation_required']);
    assert.equal(stale.structured.migration_preview.compatible, false);
    const ahead = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: confirmed(state.state, new Date(Date.now() + 86_400_000)),
      migration: { target_release: 'research-kit@1.3.0', confirm: true },
    });
    assert.deepEqual(failureCodes(ahead.structured), ['confirmation_required']);
    const again = confirmed(state.state);
    const m = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: again,
      migration: { target_release: 'research-kit@1.3.0', confirm: false },
    });
    assert.equal(m.structured.status, 'blocked');
    assert.deepEqual(failureCodes(m.structured), ['migration_confirmation_required']);
    const preview = m.structured.migration_preview;
    assert.deepEqual(preview.invalidated_artifacts, ['literature-review', 'workspace-manifest']);
    assert.deepEqual(preview.invalidated_validators, ['evidence-check@1.0.0']);
    assert.equal(preview.target.workflow.version, '1.3.0');
    assert.equal(preview.restart_step, 'setup-workspace');
    assert.equal(preview.compatible, true);
    assert.equal(m.structured.checkpoint, checkpoint);
    const go = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: again,
      migration: { target_release: 'research-kit@1.3.0', confirm: true },
    });
    assert.equal(go.structured.status, 'active');
    assert.equal(go.structured.step.id, 'setup-workspace');
    const payload = tokenPayload(go.structured.checkpoint);
    assert.equal(payload.parent, sha256(checkpoint));
    assert.equal(payload.release.version, '1.3.0');
    assert.equal(payload.workflow.version, '1.3.0');
    assert.deepEqual(payload.artifacts, {});
    const wrong = await s.call(TOOLS.continue, {
      checkpoint,
      prior_confirmed_state: state,
      confirmed_state: again,
      migration: { target_release: 'research-kit@9.9.9', confirm: true },
    });
    assert.equal(wrong.structured.code, 'migration_target_mismatch');
  });
});

/**
 * Hostile input to the workflow-engine tools, through the SDK client against the built CLI:
 * every byte of a checkpoint and of a validation-bundle token flipped, a token of the wrong
 * type, an unknown key id, a forged signature, a replayed older checkpoint after advancement,
 * arguments outside the contract, oversized, undeclared, duplicated and mistyped artifacts,
 * symlinks and `..` paths. Each is refused with its documented code, and the server keeps
 * serving a valid walk afterwards.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  LOOP_POLICY as POLICY,
  project,
  put,
  reports,
  type Structured,
  TEST_KEY,
  TOOLS,
} from '../helpers/engine.js';

const STATE = confirmed({ topic: 'caching' });
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every single-character change of `token`: each position replaced by another character. */
function flips(token: string): string[] {
  return [...token].map((c, i) => {
    const other = c === '.' ? 'A' : B64URL[(B64URL.indexOf(c) + 1) % 64];
    return token.slice(0, i) + other + token.slice(i + 1);
  });
}

const payloadOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString());

/** A token over `payload` signed with `key` (what a forger with some key could make). */
function forge(payload: Structured, key: string): string {
  const bytes = Buffer.from(JSON.stringify(payload));
  return `${bytes.toString('base64url')}.${createHmac('sha256', key).update(bytes).digest('base64url')}`;
}

describe('workflow-engine: tampered tokens and hostile artifacts', () => {
  let s: EngineSession;
  const root = project();
  let setup = '';
  let draft = '';
  let prepared: Structured;
  const att = (extra: Structured = {}) => ({
    project_root: root,
    repository_policy: POLICY,
    ...extra,
  });
  const prepare = (artifacts: Structured[], attestation: Structured = att()) =>
    s.call(TOOLS.prepare, { checkpoint: draft, confirmed_state: STATE, artifacts, attestation });

  before(async () => {
    s = await engineSession([LOOP]);
    const started = await s.call(TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: HOST,
    });
    setup = started.structured.checkpoint;
    const doc = {
      harness: 'claude-code',
      adapter: HOST.adapter,
      capabilities: ['file-write'],
      validator_capabilities: ['web'],
      assets: [],
    };
    const m = artifact(
      root,
      'workspace-manifest',
      '.rimthan/workspace-manifest.json',
      JSON.stringify(doc),
    );
    const p = await s.call(TOOLS.prepare, {
      checkpoint: setup,
      confirmed_state: STATE,
      artifacts: [m],
      attestation: att(),
    });
    const sub = await s.call(TOOLS.submit, {
      checkpoint: setup,
      confirmed_state: STATE,
      validation_bundle: p.structured.validation_bundle,
      reports: [],
    });
    draft = sub.structured.checkpoint;
    prepared = await prepare([artifact(root, 'draft', 'out/draft.json', '{"title":"t"}')]);
    assert.equal(prepared.structured.status, 'ready_for_semantic_validation');
  });
  after(() => s.close());

  it('refuses every byte of a checkpoint flipped, payload and signature alike', async () => {
    const variants = flips(draft);
    for (const [i, token] of variants.entries()) {
      const r = await s.call(TOOLS.continue, {
        checkpoint: token,
        prior_confirmed_state: STATE,
        confirmed_state: STATE,
      });
      assert.equal(r.isError, true, `position ${i}`);
      assert.equal(r.structured.code, 'invalid_checkpoint', `position ${i}`);
    }
  });

  it('refuses every byte of a validation token flipped', async () => {
    const bundle = prepared.structured.validation_bundle;
    for (const [i, token] of flips(bundle.validation_token).entries()) {
      const r = await s.call(TOOLS.submit, {
        checkpoint: draft,
        confirmed_state: STATE,
        validation_bundle: { ...bundle, validation_token: token },
        reports: reports(prepared.structured, 'pass', BY),
      });
      assert.equal(r.structured.code, 'invalid_validation_bundle', `position ${i}`);
    }
  });

  it('refuses a token of the wrong type, an unknown key id and a forged signature', async () => {
    const bundle = prepared.structured.validation_bundle;
    const asCheckpoint = await s.call(TOOLS.continue, {
      checkpoint: bundle.validation_token,
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(asCheckpoint.structured.code, 'invalid_checkpoint');
    const asBundle = await s.call(TOOLS.submit, {
      checkpoint: draft,
      confirmed_state: STATE,
      validation_bundle: { ...bundle, validation_token: draft },
      reports: [],
    });
    assert.equal(asBundle.structured.code, 'invalid_validation_bundle');
    const payload = payloadOf(draft);
    const unknownKid = await s.call(TOOLS.continue, {
      checkpoint: forge({ ...payload, kid: 'k0000000000000000' }, TEST_KEY),
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(unknownKid.structured.code, 'invalid_checkpoint');
    const forged = await s.call(TOOLS.continue, {
      checkpoint: forge(
        { ...payload, step: 'draft', sequence: 99 },
        'a-guessed-key-of-enough-length-0000000',
      ),
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(forged.structured.code, 'invalid_checkpoint');
    for (const junk of ['', 'x', 'a.b.c', '..', `${'A'.repeat(100)}.`]) {
      const r = await s.call(TOOLS.continue, {
        checkpoint: junk,
        prior_confirmed_state: STATE,
        confirmed_state: STATE,
      });
      assert.equal(r.isError, true);
      assert.ok(
        ['invalid_checkpoint', 'INVALID_ARGUMENT'].includes(
          r.structured.code ?? r.diagnostic?.code,
        ),
        junk,
      );
    }
  });

  it('answers a replayed older checkpoint with its own step, never a later one', async () => {
    const r = await s.call(TOOLS.continue, {
      checkpoint: setup,
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(r.structured.status, 'active');
    assert.equal(r.structured.step.id, 'setup-workspace');
    // A bundle of the later checkpoint does not apply to the replayed one.
    const cross = await s.call(TOOLS.submit, {
      checkpoint: setup,
      confirmed_state: STATE,
      validation_bundle: prepared.structured.validation_bundle,
      reports: [],
    });
    assert.equal(cross.structured.code, 'invalid_validation_bundle');
  });

  it('refuses arguments outside the contract as INVALID_ARGUMENT naming the field', async () => {
    const extra = await s.call(TOOLS.continue, {
      checkpoint: draft,
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
      sneaky: 1,
    });
    assert.equal(extra.isError, true);
    assert.equal(extra.diagnostic.code, 'INVALID_ARGUMENT');
    assert.equal(extra.diagnostic.field, 'sneaky');
    const huge = await s.call(TOOLS.continue, {
      checkpoint: 'A'.repeat(70_000),
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    // Empty or over-long tokens are malformed tokens (spec §4), not argument errors.
    assert.equal(huge.isError, true);
    assert.equal(huge.structured.code, 'invalid_checkpoint');
    const empty = await s.call(TOOLS.continue, {
      checkpoint: '',
      prior_confirmed_state: STATE,
      confirmed_state: STATE,
    });
    assert.equal(empty.structured.code, 'invalid_checkpoint');
    const bundle = prepared.structured.validation_bundle;
    for (const validation_token of ['', 'A'.repeat(70_000)]) {
      const r = await s.call(TOOLS.submit, {
        checkpoint: draft,
        confirmed_state: STATE,
        validation_bundle: { ...bundle, validation_token },
        reports: [],
      });
      assert.equal(r.structured.code, 'invalid_validation_bundle');
    }
    const nested = await s.call(TOOLS.start, {
      workflow: 'loop',
      confirmed_state: STATE,
      host: { ...HOST, adapter: { ...HOST.adapter, extra: true } },
    });
    assert.equal(nested.diagnostic.field, 'host.adapter.extra');
  });

  it('refuses oversized, undeclared, duplicated, missing and mistyped artifacts, all at once', async () => {
    const codes = async (artifacts: Structured[], attestation?: Structured) =>
      ((await prepare(artifacts, attestation)).structured.failures ?? []).map(
        (f: Structured) => f.code,
      );
    const big = JSON.stringify({ title: 'x'.repeat(600) });
    assert.ok(
      (await codes([artifact(root, 'draft', 'out/draft.json', big)])).includes(
        'artifact_too_large',
      ),
    );
    const good = artifact(root, 'draft', 'out/draft.json', '{"title":"t"}');
    const undeclared = { ...good, id: 'secret' };
    const many = await codes([good, undeclared, good]);
    for (const code of ['too_many_artifacts', 'undeclared_artifact', 'duplicate_artifact'])
      assert.ok(many.includes(code), code);
    assert.ok((await codes([])).includes('missing_artifact'));
    assert.ok(
      (await codes([{ ...good, media_type: 'text/markdown' }])).includes('media_type_mismatch'),
    );
    assert.ok((await codes([{ ...good, content: '{"title":' }])).includes('json_schema_failed'));
    assert.ok(
      (await codes([{ ...good, content: '***', encoding: 'base64' }])).includes(
        'json_schema_failed',
      ),
    );
    // Leaving the project is path_outside_project (spec §5), not just another path.
    for (const path of ['out/../out/draft.json', '../draft.json', '/tmp/draft.json', 'C:/d.json']) {
      const got = await codes([{ ...good, path }]);
      assert.ok(got.includes('path_outside_project'), path);
      assert.ok(!got.includes('output_path_mismatch'), path);
    }
    assert.ok(
      (await codes([{ ...good, path: 'out/other.json' }])).includes('output_path_mismatch'),
    );
    const r = await prepare([{ ...good, content: 'not json' }]);
    assert.equal(r.structured.validation_bundle, null);
  });

  it('refuses symlinks, .. and paths the repository policy forbids', async () => {
    // The draft as submitted, never written by the test: each case puts other bytes (or none,
    // or a symlink) at its path first.
    const submitted = {
      id: 'draft',
      path: 'out/draft.json',
      media_type: 'application/json',
      content: '{"title":"t"}',
      encoding: 'utf8',
    };
    const attestedCodes = async (attestation: Structured) =>
      (await prepare([submitted], attestation)).structured.failures.map((f: Structured) => f.code);
    const codes = async (attestation: Structured) =>
      (
        (await prepare([artifact(root, 'draft', 'out/draft.json', '{"title":"t"}')], attestation))
          .structured.failures ?? []
      ).map((f: Structured) => f.code);
    assert.deepEqual(await codes(att({ project_root: 'relative/root' })), ['path_outside_project']);
    assert.ok(
      (
        await codes(att({ repository_policy: { ...POLICY, writable_paths: ['../elsewhere'] } }))
      ).includes('path_outside_project'),
    );
    assert.ok(
      (await codes(att({ repository_policy: { ...POLICY, forbidden_paths: ['out'] } }))).includes(
        'repository_policy_conflict',
      ),
    );
    // The artifact file itself a symlink to a file outside the project.
    const outside = join(tempDir('mhl-engine-outside-'), 'draft.json');
    writeFileSync(outside, '{"title":"t"}');
    const linked = project();
    mkdirSync(join(linked, 'out'));
    symlinkSync(outside, join(linked, 'out', 'draft.json'));
    assert.ok((await attestedCodes(att({ project_root: linked }))).includes('symlink_not_allowed'));
    // A folder on the way a symlink.
    const dirLinked = project();
    const realDir = tempDir('mhl-engine-realdir-');
    put(realDir, 'draft.json', '{"title":"t"}');
    symlinkSync(realDir, join(dirLinked, 'out'));
    assert.ok(
      (await attestedCodes(att({ project_root: dirLinked }))).includes('symlink_not_allowed'),
    );
    // Not on disk at all, or other bytes on disk than submitted.
    rmSync(join(root, 'out', 'draft.json'));
    assert.ok((await attestedCodes(att())).includes('output_attestation_required'));
    put(root, 'out/draft.json', '{"title":"other"}');
    assert.ok((await attestedCodes(att())).includes('output_attestation_required'));
  });

  it('keeps serving a valid walk after all of that', async () => {
    const p = await prepare([artifact(root, 'draft', 'out/draft.json', '{"title":"t"}')]);
    const done = await s.call(TOOLS.submit, {
      checkpoint: draft,
      confirmed_state: STATE,
      validation_bundle: p.structured.validation_bundle,
      reports: reports(p.structured, 'pass', BY),
    });
    assert.equal(done.structured.status, 'completed');
  });
});

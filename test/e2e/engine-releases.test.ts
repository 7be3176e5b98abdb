/**
 * Releases over time, against the built CLI: a checkpoint is served by the release it pinned
 * after the active release changed, also by the next process (the pinned-release store under
 * the state dir), and is `release_unavailable` once that release is gone, never re-pinned; a
 * corrupt refresh keeps serving the last good release and says so in the log; authoring and
 * key problems stop start-up with exit 1 and a line naming the file.
 */
import assert from 'node:assert/strict';
import { chmodSync, cpSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli, tempDir } from '../helpers/cli.js';
import {
  claudeHost,
  confirmed,
  ENGINE_RELEASE,
  ENGINE_TARGET,
  engineSession,
  type Structured,
  TOOLS,
} from '../helpers/engine.js';

const STATE = confirmed({ objective: 'Pick a cache', audience: 'platform' });
const payloadOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString());

function releaseCopy(): string {
  const dir = tempDir('mhl-engine-release-');
  cpSync(ENGINE_RELEASE, dir, { recursive: true });
  return dir;
}

function edit(dir: string, rel: string, change: (text: string) => string): void {
  const path = join(dir, rel);
  writeFileSync(path, change(readFileSync(path, 'utf8')));
}

/** The text of `mhl://engine/status`. */
async function readStatus(s: Structured): Promise<string> {
  const read = await s.client.readResource({ uri: 'mhl://engine/status' });
  return read.contents[0].text;
}

const start = (s: Structured) =>
  s.call(TOOLS.start, {
    workflow: 'research-decision',
    confirmed_state: STATE,
    host: claudeHost(),
  });
const resume = (s: Structured, checkpoint: string) =>
  s.call(TOOLS.continue, { checkpoint, prior_confirmed_state: STATE, confirmed_state: STATE });

describe('workflow-engine: pinned releases and refreshes', () => {
  it('serves a checkpoint by its pinned release after the active one changed, across processes', async () => {
    const dir = releaseCopy();
    const stateDir = tempDir('mhl-engine-state-');
    const args = [dir, '--state-dir', stateDir];
    const first = await engineSession(args);
    let old: string;
    try {
      old = (await start(first)).structured.checkpoint;
      edit(dir, 'release.yaml', (t) => t.replace('version: 1.2.0', 'version: 1.2.1'));
      edit(dir, 'assets/instructions/setup-workspace.md', (t) => `${t}\nA line added in 1.2.1.\n`);
      const fresh = await start(first);
      assert.notEqual(
        payloadOf(fresh.structured.checkpoint).release.digest,
        payloadOf(old).release.digest,
      );
      assert.equal(payloadOf(fresh.structured.checkpoint).release.version, '1.2.1');
      await first.logged('ENGINE_RELEASE_REFRESHED');
      const pinned = await resume(first, old);
      assert.equal(pinned.structured.status, 'active');
      assert.doesNotMatch(pinned.structured.step.instruction.text, /1\.2\.1/);
    } finally {
      await first.close();
    }
    const second = await engineSession(args);
    try {
      const pinned = await resume(second, old);
      assert.equal(pinned.structured.status, 'active', JSON.stringify(pinned.structured));
      assert.doesNotMatch(pinned.structured.step.instruction.text, /1\.2\.1/);
    } finally {
      await second.close();
    }
    rmSync(join(stateDir, 'releases', payloadOf(old).release.digest), { recursive: true });
    const third = await engineSession(args);
    try {
      const gone = await resume(third, old);
      assert.equal(gone.isError, true);
      assert.equal(gone.structured.code, 'release_unavailable');
      assert.equal((await start(third)).structured.status, 'active');
    } finally {
      await third.close();
    }
  });

  it('keeps serving the last good release when a refresh does not load', async () => {
    const dir = releaseCopy();
    const s = await engineSession([dir]);
    try {
      const before = payloadOf((await start(s)).structured.checkpoint).release.digest;
      edit(dir, 'workflows/research-decision/1.2.0.yaml', (t) =>
        t.replace('id: setup-workspace', 'id: setup'),
      );
      const after = await start(s);
      assert.equal(after.structured.status, 'active');
      assert.equal(payloadOf(after.structured.checkpoint).release.digest, before);
      await s.logged('ENGINE_RELEASE_REFRESH_FAILED');
      const status = JSON.parse(await readStatus(s));
      assert.equal(status.active_release.digest, before);
      assert.match(status.refresh_failure.problems[0], /1\.2\.0\.yaml:\d+:\d+: steps\[0\]\.id/);
      // Repaired, the next start serves the repaired release and the failure is gone.
      edit(dir, 'workflows/research-decision/1.2.0.yaml', (t) =>
        t.replace('id: setup\n', 'id: setup-workspace\n'),
      );
      await start(s);
      const healed = JSON.parse(await readStatus(s));
      assert.equal(healed.refresh_failure, null);
      assert.match(s.stderr, /workflows\/research-decision\/1\.2\.0\.yaml/);
      assert.doesNotMatch(s.stderr, new RegExp(dir.replaceAll('/', '\\/').concat('\\/workflows')));
    } finally {
      await s.close();
    }
  });
});

describe('workflow-engine: migration refusals', () => {
  const migrate = async (args: string[], target: string) => {
    const s = await engineSession(args);
    try {
      const checkpoint = (await start(s)).structured.checkpoint;
      const fresh = confirmed(STATE.state);
      return (
        await s.call(TOOLS.continue, {
          checkpoint,
          prior_confirmed_state: STATE,
          confirmed_state: fresh,
          migration: { target_release: target, confirm: true },
        })
      ).structured;
    } finally {
      await s.close();
    }
  };

  it('refuses without a target, to the same release, and to an older version', async () => {
    assert.equal(
      (await migrate([ENGINE_RELEASE], 'research-kit@1.3.0')).code,
      'migration_unavailable',
    );
    const same = await migrate(
      [ENGINE_RELEASE, '--migration-target', ENGINE_RELEASE],
      'research-kit@1.2.0',
    );
    assert.equal(same.code, 'migration_same_release');
    const older = await migrate(
      [ENGINE_TARGET, '--migration-target', ENGINE_RELEASE],
      'research-kit@1.2.0',
    );
    assert.equal(older.code, 'migration_not_newer');
  });
});

describe('workflow-engine: start-up refusals', () => {
  const serve = (args: string[], env: Record<string, string> = {}) =>
    runCli(['serve', 'mcp', '--profile', 'workflow-engine', ...args], {
      env: { MHL_ENGINE_KEY: 'k'.repeat(40), ...env },
    });
  const cases: [string, string, (text: string) => string, RegExp][] = [
    [
      'an alias naming two workflows',
      'release.yaml',
      (t) => t.replace('workflows:\n', 'workflows:\n  - workflows/other/1.0.0.yaml\n'),
      /already selects workflow/,
    ],
    [
      'a first step other than setup-workspace',
      'workflows/research-decision/1.2.0.yaml',
      (t) => t.replace('id: setup-workspace', 'id: setup'),
      /first step must be setup-workspace/,
    ],
    [
      'a missing asset',
      'workflows/research-decision/1.2.0.yaml',
      (t) => t.replace('assets/instructions/interview.md', 'assets/instructions/nope.md'),
      /nope\.md is not in the release/,
    ],
    [
      'overlapping branches',
      'workflows/research-decision/1.2.0.yaml',
      (t) => t.replace('equals: experiment', 'in: [experiment, literature]'),
      /both match a value of research_route/,
    ],
    [
      'an output path with ..',
      'workflows/research-decision/1.2.0.yaml',
      (t) => t.replace('path: research/decision-memo.md', 'path: ../decision-memo.md'),
      /project-relative/,
    ],
    [
      'an invalid JSON Schema',
      'assets/schemas/experiment-plan.schema.json',
      (t) => t.replace('"type": "object"', '"type": "objet"'),
      /not a valid JSON Schema 2020-12/,
    ],
    [
      'an unknown key',
      'workflows/research-decision/1.2.0.yaml',
      (t) => t.replace('title:', 'titel: x\ntitle:'),
      /1\.2\.0\.yaml:\d+:\d+: .*titel/,
    ],
  ];
  for (const [what, file, change, message] of cases) {
    it(`refuses a release with ${what}`, async () => {
      const dir = releaseCopy();
      if (what.startsWith('an alias')) {
        cpSync(join(dir, 'workflows/research-decision'), join(dir, 'workflows/other'), {
          recursive: true,
        });
        rmSync(join(dir, 'workflows/other/1.2.0.yaml'));
        writeFileSync(
          join(dir, 'workflows/other/1.0.0.yaml'),
          readFileSync(join(dir, 'workflows/research-decision/1.2.0.yaml'), 'utf8')
            .replace('id: research-decision', 'id: other')
            .replace('version: 1.2.0', 'version: 1.0.0'),
        );
      }
      edit(dir, file, change);
      const r = await serve([dir]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /at .*\.js:\d+/); // no stack trace
    });
  }

  it('refuses a symlink or bytes that are not UTF-8 in a release', async () => {
    const linked = releaseCopy();
    symlinkSync('/etc/hostname', join(linked, 'assets', 'link.md'));
    const r1 = await serve([linked]);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /assets\/link\.md: symlinks are not allowed/);
    const binary = releaseCopy();
    writeFileSync(join(binary, 'assets', 'blob.md'), Buffer.from([0xff, 0xfe, 0x00]));
    const r2 = await serve([binary]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /assets\/blob\.md: not UTF-8 text/);
  });

  it('refuses a key file others can read, and a short MHL_ENGINE_KEY', async () => {
    const stateDir = tempDir('mhl-engine-state-');
    writeFileSync(join(stateDir, 'engine.key'), `${'ab'.repeat(32)}\n`);
    chmodSync(join(stateDir, 'engine.key'), 0o644);
    const loose = await serve([ENGINE_RELEASE, '--state-dir', stateDir], { MHL_ENGINE_KEY: '' });
    assert.equal(loose.code, 1);
    assert.match(loose.stderr, /engine\.key.*0600/);
    // A key file that is a symlink, even to a 0600 file of good hex, is refused.
    const linked = tempDir('mhl-engine-state-');
    const real = join(tempDir('mhl-engine-keysrc-'), 'key');
    writeFileSync(real, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    symlinkSync(real, join(linked, 'engine.key'));
    const viaLink = await serve([ENGINE_RELEASE, '--state-dir', linked], { MHL_ENGINE_KEY: '' });
    assert.equal(viaLink.code, 1);
    assert.match(viaLink.stderr, /engine\.key.*symlink/);
    const short = await serve([ENGINE_RELEASE], { MHL_ENGINE_KEY: 'short' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /MHL_ENGINE_KEY/);
    assert.doesNotMatch(short.stderr, /short/);
  });

  it('refuses a --migration-target that does not load', async () => {
    const r = await serve([ENGINE_RELEASE, '--migration-target', tempDir('mhl-engine-empty-')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--migration-target release does not load/);
  });

  it('refuses --migration-target outside the workflow-engine profile', async () => {
    const r = await runCli(['serve', 'mcp', ENGINE_RELEASE, '--migration-target', ENGINE_RELEASE]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--migration-target is only valid with --profile workflow-engine/);
  });
});

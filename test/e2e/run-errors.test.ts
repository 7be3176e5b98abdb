/**
 * Every way a run fails reports a stable code, the file, line and col of the construct that
 * failed, and a hint: `mhl run --format json` as fields, the text format as
 * `file:line:col: error: …` with a hint line. Runs the built CLI on test/fixtures/run/errors,
 * copied to a temporary folder so the file names it reports are the ones typed there. Agents are
 * the fake agent script; nothing is stubbed. Matches codes and positions, never message text.
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

const FIXTURE = resolve(REPO_ROOT, 'test/fixtures/run/errors');
const ENV = { FAKE_AGENT: resolve(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs') };

interface Failure {
  ok: boolean;
  error: string;
  code: string;
  file: string;
  line: number;
  col: number;
  hint: string;
  kind: string;
  step: string | null;
}

/** The fixture folder copied under a fresh temporary folder, as `<tmp>/flows`. */
function copyFixture(): string {
  const base = tempDir('mhl-errors-');
  cpSync(FIXTURE, join(base, 'flows'), { recursive: true });
  return base;
}

/** 1-based line and col of the first occurrence of `needle` in fixture file `name`. */
function positionOf(name: string, needle: string): { line: number; col: number } {
  const text = readFileSync(join(FIXTURE, name), 'utf8');
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `${needle} is not in ${name}`);
  const before = text.slice(0, at).split('\n');
  return { line: before.length, col: (before.at(-1) as string).length + 1 };
}

async function runJson(cwd: string, file: string, pipeline: string, extra: string[] = []) {
  const args = ['run', '--format', 'json', file, '--pipeline', pipeline, ...extra];
  const r = await runCli(args, { cwd, env: ENV });
  return { code: r.code, out: JSON.parse(r.stdout) as Failure, stderr: r.stderr };
}

/** Pipeline, the code it fails with, the file and the text at the failing position, its kind. */
const CASES: readonly (readonly [string, string, string, string, string])[] = [
  ['Fails', 'FAIL', 'errors.mh', 'fail("refusing")', 'step_failed'],
  ['NativeFails', 'NATIVE', 'errors.mh', 'fs.read("no-such-file.txt")', 'step_failed'],
  ['TypeFails', 'TYPE', 'errors.mh', '1 + words', 'step_failed'],
  ['NeedsInput', 'INVALID_INPUTS', 'errors.mh', 'input count', 'invalid_inputs'],
  ['CmdFails', 'NATIVE', 'errors.mh', 'cmd.exec(["/no/such/binary"])', 'step_failed'],
  ['Slow', 'STEP_TIMEOUT', 'errors.mh', 'Wait timeout', 'step_timeout'],
  ['AgentFails', 'AGENT', 'errors.mh', 'Broken.run(', 'step_failed'],
  ['AgentEmpty', 'AGENT', 'errors.mh', 'Silent.run(', 'step_failed'],
  ['ImportedFails', 'INDEX', 'helpers.mh', '0].to_upper', 'step_failed'],
  ['NullField', 'NULL', 'errors.mh', 'missing.name', 'step_failed'],
  ['Caught', 'TYPE', 'errors.mh', 'r + 1', 'step_failed'],
];

describe('mhl run: runtime errors', { timeout: 120_000 }, () => {
  it('report code, file, line, col and a hint in --format json', async () => {
    const cwd = join(copyFixture(), 'flows');
    const hints = new Map<string, string>();
    for (const [pipeline, code, file, needle, kind] of CASES) {
      const { code: exit, out } = await runJson(cwd, 'errors.mh', pipeline);
      const at = positionOf(file, needle);
      assert.equal(exit, kind === 'invalid_inputs' ? 2 : 1, pipeline);
      assert.deepEqual(
        [out.ok, out.code, out.kind, out.file, out.line, out.col],
        [false, code, kind, file, at.line, at.col],
        `${pipeline}: ${JSON.stringify(out)}`,
      );
      assert.ok(out.hint.length > 0, `${pipeline} has no hint`);
      // The position is in the fields; the message does not repeat it.
      assert.doesNotMatch(out.error, /\.mh:\d+:\d+/, pipeline);
      hints.set(pipeline, out.hint);
    }
    // An agent's own failure picks the hint: a non-zero exit and an empty answer differ.
    assert.notEqual(hints.get('AgentFails'), hints.get('AgentEmpty'));
    // So does a native's namespace: a command is not a file.
    assert.notEqual(hints.get('CmdFails'), hints.get('NativeFails'));
  });

  it('shows files relative to the working directory, or absolute when typed so', async () => {
    const base = copyFixture();
    const nested = await runJson(base, join('flows', 'errors.mh'), 'ImportedFails');
    assert.equal(nested.out.file, join('flows', 'helpers.mh'));
    const absolute = resolve(base, 'flows', 'errors.mh');
    const typed = await runJson(tempDir(), absolute, 'ImportedFails');
    assert.equal(typed.out.file, resolve(base, 'flows', 'helpers.mh'));
    const relativeOut = await runJson(join(base, 'flows'), 'errors.mh', 'Fails');
    assert.equal(relativeOut.out.file, 'errors.mh');
  });

  it('prints file:line:col: error: …, the source line and a hint line in text', async () => {
    const cwd = join(copyFixture(), 'flows');
    const r = await runCli(['run', 'errors.mh', '--pipeline', 'NullField'], { cwd, env: ENV });
    assert.equal(r.code, 1);
    const at = positionOf('errors.mh', 'missing.name');
    const lines = r.stderr.trimEnd().split('\n');
    const first = lines.findIndex((l) => l.startsWith(`errors.mh:${at.line}:${at.col}: error: `));
    assert.ok(first >= 0, r.stderr);
    assert.match(lines[first + 1] as string, /r = missing\.name/);
    assert.match(lines[first + 2] as string, /^\s+\^/);
    assert.match(lines[first + 3] as string, /^ {2}hint: .+ \[NULL\]$/);
  });

  it('reports a program that does not check as invalid_program with every diagnostic', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.mh'), 'pipeline P {\n  step S { log(nope) }\n}\n');
    const r = await runCli(['run', '--format', 'json', 'bad.mh'], { cwd });
    assert.equal(r.code, 2);
    const out = JSON.parse(r.stdout) as Failure & { diagnostics: Failure[] };
    assert.deepEqual(
      [out.ok, out.kind, out.code, out.file, out.line, out.col],
      [false, 'invalid_program', 'UNKNOWN_NAME', 'bad.mh', 2, 16],
    );
    assert.ok(out.hint.length > 0);
    assert.deepEqual(
      out.diagnostics.map((d) => [d.code, d.file, d.line, d.col]),
      [['UNKNOWN_NAME', 'bad.mh', 2, 16]],
    );
  });

  it('adds how to resume to the hint when a checkpoint holds the progress', async () => {
    const cwd = tempDir();
    const fixture = resolve(REPO_ROOT, 'test/fixtures/run/resume-hint.mh');
    const args = ['--input', 'who=bo'];
    const { out } = await runJson(cwd, fixture, 'FailsSecond', args);
    assert.equal(out.code, 'FAIL');
    assert.equal(out.file, fixture);
    assert.match(out.hint, /--resume --session [0-9a-f]+$/);
  });
});

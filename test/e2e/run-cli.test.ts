import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { CLI, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { until } from '../helpers/poll.js';
import { isAlive, readPid } from '../helpers/processes.js';

const FIXTURES = resolve(REPO_ROOT, 'test/fixtures/run');
const fixture = (name: string) => join(FIXTURES, name);

interface JsonOutcome {
  ok: boolean;
  session: string;
  executed: string[];
  skipped: string[];
  resumed: boolean;
  paused: boolean;
  broke: boolean;
  vars: Record<string, unknown>;
  log: string[];
  error?: string;
  kind?: string;
  step?: string | null;
  missing?: string[];
  unknown?: string[];
}

async function runJson(
  args: string[],
  cwd: string,
  env?: Record<string, string>,
): Promise<{ code: number | null; out: JsonOutcome; stderr: string }> {
  const r = await runCli(['run', '--format', 'json', ...args], { cwd, ...(env ? { env } : {}) });
  return { code: r.code, out: JSON.parse(r.stdout) as JsonOutcome, stderr: r.stderr };
}

/** Every file under `dir`, recursively, with its text. */
function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const p = join(d, entry);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(p, readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

describe('mhl run', () => {
  it('runs three spawned shell agents in one step and publishes under a step timeout', async () => {
    const dir = tempDir();
    const r = await runCli(['run', fixture('build-report.mh'), '--input', 'project=acme'], {
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0] as string, /^session: [0-9a-f]{32}$/);
    assert.deepEqual(lines.slice(1), [
      'step: Prepare',
      'preparing acme',
      'step: Checks',
      'step: Publish',
      'published: report for acme: lint-ok, types-ok, tests-ok',
      'result: {"report":".mhl/report-acme.txt","summary":"report for acme: lint-ok, types-ok, tests-ok"}',
    ]);
    assert.equal(
      readFileSync(join(dir, '.mhl/report-acme.txt'), 'utf8'),
      'report for acme: lint-ok, types-ok, tests-ok',
    );
  });

  it('evaluates the language end to end (tools, prompts, match, slices, try, goto, break)', async () => {
    const { code, out } = await runJson([fixture('language.mh')], tempDir());
    assert.equal(code, 0);
    assert.deepEqual(out.executed, ['Compute', 'Errors', 'Loop', 'Loop', 'Loop', 'Done']);
    assert.equal(out.broke, true);
    assert.deepEqual(out.vars, {
      caught: 'boom 42',
      greeting: 'Hello, MHL!',
      level: 'high',
      limit: 4,
      n: 3,
      shape: { big: true, n: 23 },
      sliced: [2, 3, 4],
      squares: [1, 4, 9, 9],
      total: 23,
      visits: 4,
      words: 'A-B-C',
    });
  });

  it('pauses, then resumes the paused step with new inputs over the restored variables', async () => {
    const dir = tempDir();
    const first = await runJson([fixture('pause-resume.mh')], dir);
    assert.deepEqual([first.code, first.out.paused, first.out.executed], [0, true, ['Draft']]);
    const second = await runJson(
      [fixture('pause-resume.mh'), '--resume', '--input', 'approved=true', '--input', 'who=ana'],
      dir,
    );
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(
      [second.out.session, second.out.resumed, second.out.skipped, second.out.executed],
      [first.out.session, true, ['Draft'], ['Review', 'Ship']],
    );
    assert.deepEqual(second.out.vars['trail'], ['draft', 'approved by ana', 'shipped']);
    assert.deepEqual(second.out.log, ['draft -> approved by ana -> shipped']);
  });

  it('refuses to resume a changed pipeline unless --force', async () => {
    const dir = tempDir();
    const file = join(dir, 'flow.mh');
    writeFileSync(file, readFileSync(fixture('pause-resume.mh'), 'utf8'));
    const first = await runJson([file], dir);
    assert.equal(first.out.paused, true);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"shipped"', '"delivered"'));
    const refused = await runJson([file, '--resume', '--input', 'approved=true'], dir);
    assert.deepEqual(
      [refused.code, refused.out.ok, refused.out.kind],
      [1, false, 'definition_mismatch'],
    );
    const forced = await runJson([file, '--resume', '--force', '--input', 'approved=true'], dir);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual(forced.out.vars['trail'], ['draft', 'approved by nobody', 'delivered']);
  });

  it('ignores whitespace and comment changes when resuming', async () => {
    const dir = tempDir();
    const file = join(dir, 'flow.mh');
    writeFileSync(file, readFileSync(fixture('pause-resume.mh'), 'utf8'));
    await runJson([file], dir);
    writeFileSync(file, `// reformatted\n\n${readFileSync(file, 'utf8').replace(/ {4}/g, '  ')}`);
    const resumed = await runJson([file, '--resume', '--input', 'approved=true'], dir);
    assert.equal(resumed.code, 0, resumed.stderr);
  });

  it('kills the whole process group when a step times out, and reports step_timeout', async () => {
    const dir = tempDir();
    const pidfile = join(dir, 'pid');
    const { code, out } = await runJson(
      [fixture('timeout-group.mh'), '--input', `pidfile=${pidfile}`],
      dir,
    );
    assert.deepEqual([code, out.kind, out.step], [1, 'step_timeout', 'Hang']);
    const pid = readPid(pidfile) as number;
    await until(() => !isAlive(pid), {
      what: `grandchild ${pid} to exit after the step timed out`,
    });
  });

  it('stops on SIGINT, kills the running step, and leaves the run resumable', async () => {
    const dir = tempDir();
    const pidfile = join(dir, 'pid');
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        fixture('timeout-group.mh'),
        '--input',
        `pidfile=${pidfile}`,
        '--format',
        'json',
      ],
      { cwd: dir },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const pid = await until(() => readPid(pidfile), { what: 'the step to start its command' });
    child.kill('SIGINT');
    assert.equal(await exited, 1);
    const out = JSON.parse(stdout) as JsonOutcome;
    assert.equal(out.kind, 'canceled');
    await until(() => !isAlive(pid), { what: `grandchild ${pid} to exit after the cancel` });
  });

  it('never writes a secret from env() to stdout, stderr, checkpoints or results', async () => {
    const dir = tempDir();
    const secret = 'sk-test-5d41402abc4b2a76b9719d911017c592';
    const r = await runCli(['run', fixture('secrets.mh')], {
      cwd: dir,
      env: { MHL_TEST_API_TOKEN: secret },
    });
    assert.equal(r.code, 1);
    assert.match(r.stdout, /token: \[REDACTED\]/);
    assert.match(r.stderr, /giving up with \[REDACTED\]/);
    const json = await runJson([fixture('secrets.mh')], dir, { MHL_TEST_API_TOKEN: secret });
    for (const text of [r.stdout, r.stderr, JSON.stringify(json.out)])
      assert.ok(!text.includes(secret));
    const files = filesUnder(join(dir, '.mhl'));
    assert.ok(files.size > 0, 'no state was written');
    for (const [path, text] of files) assert.ok(!text.includes(secret), `${path} holds the secret`);
  });

  it('reports invalid inputs with the missing and undeclared names (exit 2)', async () => {
    const { code, out } = await runJson(
      [fixture('timeout-group.mh'), '--input', 'colour=red'],
      tempDir(),
    );
    assert.deepEqual(
      [code, out.kind, out.missing, out.unknown],
      [2, 'invalid_inputs', ['pidfile'], ['colour']],
    );
    const text = await runCli(['run', fixture('timeout-group.mh')], { cwd: tempDir() });
    assert.equal(text.code, 2);
    assert.doesNotMatch(text.stderr, /--resume/);
  });

  it('offers --resume only with a checkpoint that holds every input as given', async () => {
    const secret = 'sk-test-0cc175b9c0f1b6a831c399e269772661';
    const cases: readonly (readonly [string, string[], boolean])[] = [
      ['FailsFirst', [], false],
      ['FailsSecond', ['--input', 'who=bo'], true],
      ['NoCheckpoints', [], false],
      ['SecretInput', ['--input', `key=${secret}`], false],
      ['SecretInput', ['--input', 'key=plain-value'], true],
    ];
    const env = { MHL_TEST_API_TOKEN: secret };
    for (const [pipeline, inputs, offered] of cases) {
      const args = [fixture('resume-hint.mh'), '--pipeline', pipeline, ...inputs];
      const what = `${pipeline} ${inputs.join(' ')}`;
      const text = await runCli(['run', ...args], { cwd: tempDir(), env });
      assert.equal(text.code, 1, `${what}: ${text.stderr}`);
      assert.equal(/--resume --session/.test(text.stderr), offered, `${what}: ${text.stderr}`);
      const { code, out } = await runJson(args, tempDir(), env);
      assert.deepEqual([code, out.kind], [1, 'step_failed']);
      const hint = (out as { hint?: string }).hint ?? '';
      assert.equal(/--resume --session/.test(hint), offered, `${what}: ${hint}`);
    }
  });

  it('coerces --input text by declared type and refuses text that does not fit', async () => {
    const bad = await runCli(['run', fixture('language.mh'), '--input', 'n=three'], {
      cwd: tempDir(),
    });
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), 'mhl run: --input n: expected a number, got "three"');
    const { out } = await runJson([fixture('language.mh'), '--input', 'n=4'], tempDir());
    assert.deepEqual(out.vars['squares'], [1, 4, 9, 16]);
  });

  it('prints the plan with --dry-run and runs nothing', async () => {
    const dir = tempDir();
    const r = await runCli(['run', fixture('build-report.mh'), '--dry-run'], { cwd: dir });
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      'pipeline BuildReport\n  input project: string (optional)\n  1. Prepare\n  2. Checks\n  3. Publish (timeout 10s)\n',
    );
    assert.deepEqual(readdirSync(dir), []);
  });

  it('exits 2 on usage errors and on a program with lint errors', async () => {
    const dir = tempDir();
    assert.equal(
      (await runCli(['run', fixture('build-report.mh'), '--force'], { cwd: dir })).stderr.trim(),
      'mhl run: --force only makes sense with --resume',
    );
    assert.equal(
      (await runCli(['run', fixture('build-report.mh'), '--resume', '--dry-run'], { cwd: dir }))
        .code,
      2,
    );
    assert.equal(
      (await runCli(['run', fixture('build-report.mh'), '--session', '../x'], { cwd: dir })).code,
      2,
    );
    writeFileSync(join(dir, 'bad.mh'), 'pipeline P { step S { log(nope) } }\n');
    const bad = await runCli(['run', 'bad.mh'], { cwd: dir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^bad\.mh:1:27: error: unknown name 'nope'$/m);
    assert.equal((await runCli(['run', 'missing.mh'], { cwd: dir })).code, 2);
  });
});

describe('examples', () => {
  it('runs the repository report on a real git repository', async () => {
    const dir = tempDir();
    const git = (...args: string[]) => runProcessSync('git', ['-C', dir, ...args]);
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'Test');
    writeFileSync(join(dir, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'first commit');
    writeFileSync(join(dir, 'b.txt'), 'two\n');
    // Run from another folder: every part of the report must be about `repo`, not the cwd.
    const { code, out } = await runJson(
      [join(REPO_ROOT, 'examples/repo-report.mh'), '--input', `repo=${dir}`],
      tempDir(),
    );
    assert.equal(code, 0);
    assert.deepEqual(
      (out.vars['largest'] as string[]).map((line) => line.split('\t')[1]),
      ['a.txt'],
    );
    assert.equal(
      out.vars['summary'],
      '1 recent commits, 1 uncommitted changes; first change: ?? b.txt',
    );
    assert.match((out.vars['recent'] as string[])[0] as string, /^[0-9a-f]+ first commit$/);
  });

  it('runs the TODO scan', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'x.ts'), '// TODO: one\nconst a = 1; // FIXME two\n');
    const { code, out } = await runJson(
      [join(REPO_ROOT, 'examples/todo-scan.mh'), '--input', `folder=${dir}`],
      tempDir(),
    );
    assert.equal(code, 0);
    assert.deepEqual([out.vars['count'], out.vars['files']], [2, [join(dir, 'x.ts')]]);
  });
});

function runProcessSync(command: string, args: string[]): void {
  const r = spawnSync(command, args, { stdio: 'pipe' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr}`);
}

describe('agents in mhl run', () => {
  it('drives a fake agent CLI: schema placeholder, hooks, skills, fallback, fan-out', async () => {
    const fake = join(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs');
    const secret = 'ghp_0123456789abcdefghijklmnopqrstuvwxyz';
    const { code, out } = await runJson([fixture('agents/agents.mh')], tempDir(), {
      FAKE_AGENT: fake,
      GITHUB_TOKEN: secret,
    });
    assert.equal(code, 0, out.error);
    const structured = out.vars['structured'] as {
      prompt: string;
      argv: string[];
      env: Record<string, string>;
    };
    const schema = readFileSync(fixture('agents/answer.schema.json'), 'utf8');
    // The before hook's fields interpolate into the prompt; ${schema} is one whole argv element.
    assert.deepEqual(structured.argv, ['--json-schema', schema, '-p', '[json] feeling calm']);
    // The child sees only the allow-listed environment: no token, not even the agent's own path.
    assert.equal(structured.env['GITHUB_TOKEN'], undefined);
    assert.equal(structured.env['FAKE_AGENT'], undefined);
    assert.equal(out.vars['shouted'], 'ANSWER: TELL ME ABOUT HOOKS AT DEPTH 1.');
    assert.equal(
      (out.vars['skilled'] as { prompt: string }).prompt,
      '[json] Terse:terse | summarise',
    );
    assert.equal(out.vars['rescued'], 'answer: please');
    assert.deepEqual(out.vars['fanned'], ['answer: one', 'failed', 'answer: three']);
  });
});

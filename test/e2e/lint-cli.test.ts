import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

function folder(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('mhl (CLI)', () => {
  it('prints its version with --version and -v', async () => {
    for (const flag of ['--version', '-v']) {
      const r = await runCli([flag]);
      assert.deepEqual([r.code, r.stdout.trim()], [0, pkg.version]);
    }
  });

  it('prints help listing the lint command', async () => {
    const r = await runCli(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /lint \[options\] \[paths\.\.\.\]/);
  });

  it('exits 2 on an unknown command or option', async () => {
    assert.equal((await runCli(['frobnicate'])).code, 2);
    const r = await runCli(['lint', '--colour']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option '--colour'/);
  });
});

describe('mhl lint', () => {
  it('passes the shipped examples and the sample fixtures', async () => {
    const examples = await runCli(['lint', 'examples']);
    assert.deepEqual([examples.code, examples.stdout.trim()], [0, 'no problems in 3 files']);
    const samples = await runCli(['lint', 'test/fixtures/samples']);
    assert.equal(samples.code, 0, samples.stdout);
    assert.match(samples.stdout, /^no problems in \d+ files$/m);
  });

  it('prints file:line:col diagnostics with a caret, sorted, and exits 1', async () => {
    const dir = folder({
      'b.mh': 'pipeline B {\n  step S { log(nope) }\n}\n',
      'a.mh': 'pipeline A {\n  step S {\n    if x > 1 { }\n  }\n}\n',
    });
    const r = await runCli(['lint'], { cwd: dir });
    assert.equal(r.code, 1);
    assert.equal(
      r.stdout,
      [
        "a.mh:3:8: error: expected '(' after 'if', found 'x'",
        '      if x > 1 { }',
        '         ^',
        "b.mh:2:16: error: unknown name 'nope'",
        '    step S { log(nope) }',
        '                 ^^^^',
        '2 errors, 0 warnings in 2 files',
        '',
      ].join('\n'),
    );
  });

  it('exits 0 when there are only warnings', async () => {
    const dir = folder({
      'w.mh': 'workflow W {\n  step A { goto C }\n  step B { }\n  step C { }\n}\n',
    });
    const r = await runCli(['lint', dir]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /w\.mh:3:8: warning: step 'B' is never reached/);
    assert.match(r.stdout, /0 errors, 1 warning in 1 file/);
  });

  it('emits one JSON document with --format json', async () => {
    const dir = folder({ 'a.mh': 'agent A { args: [] }\n' });
    const r = await runCli(['lint', '--format', 'json'], { cwd: dir });
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as {
      files: number;
      errors: number;
      diagnostics: Record<string, unknown>[];
    };
    assert.deepEqual([out.files, out.errors], [1, 1]);
    assert.deepEqual(out.diagnostics[0], {
      file: 'a.mh',
      line: 1,
      col: 7,
      start: 6,
      end: 7,
      severity: 'error',
      code: 'AGENT_CONFIG',
      message:
        'agent \'A\' has no command: add command: "<cli>" (or an engine like "ollama/<model>" with an endpoint)',
    });
  });

  it('skips hidden folders and node_modules', async () => {
    const dir = folder({
      'ok.mh': 'pipeline Ok { step S { log("x") } }\n',
      '.hidden/bad.mh': 'pipeline (',
      'node_modules/dep/bad.mh': 'pipeline (',
    });
    const r = await runCli(['lint', dir]);
    assert.deepEqual([r.code, r.stdout.trim()], [0, 'no problems in 1 file']);
  });

  it('reports a pipeline name declared in two files', async () => {
    const dir = folder({
      'one.mh': 'pipeline Same { step S { } }\n',
      'two.mh': 'workflow Same { step S { } }\n',
    });
    const r = await runCli(['lint', '--format', 'json'], { cwd: dir });
    const out = JSON.parse(r.stdout) as {
      diagnostics: { file: string; line: number; col: number; message: string }[];
    };
    assert.deepEqual(
      out.diagnostics.map((d) => `${d.file}:${d.line}:${d.col} ${d.message}`),
      [
        "two.mh:1:10 workflow 'Same' is already declared at one.mh:1:10; pipeline names become tool names and must be unique",
      ],
    );
  });

  it('exits 2 naming a path that does not exist', async () => {
    const r = await runCli(['lint', 'no/such/dir']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim(), 'mhl: no such file or directory: no/such/dir');
  });

  it('exits 2 on an unknown --format', async () => {
    const r = await runCli(['lint', '--format', 'xml', 'examples']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Allowed choices are text, json/);
  });

  it('exits 1 when a folder holds no .mh files', async () => {
    const r = await runCli(['lint', tempDir()]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no \.mh files found/);
  });

  it('survives a binary file with a .mh name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'junk.mh'), Buffer.from([0, 255, 254, 1, 2, 0x7b, 0x22, 0x24, 0x7b]));
    const r = await runCli(['lint', dir, '--format', 'json']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { errors: number };
    assert.ok(out.errors > 0);
  });
});

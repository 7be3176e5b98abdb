/**
 * `mhl test` as a user runs it: the built CLI on fixture folders with passing, failing, pending
 * and erroring cases (every assertion of §5.9), workflows run from tests, a real agent (the
 * fake AI CLI), the text, TAP and JSON reports, and the exit codes for no tests, bad paths and
 * malformed files.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, runCli } from '../helpers/cli.js';

const FIXTURES = 'test/fixtures/testing';
const FAKE_AGENT = resolve(REPO_ROOT, 'test/fixtures/bin/fake-agent.mjs');

interface JsonCase {
  file: string;
  test: string;
  case: string;
  status: 'passed' | 'failed' | 'pending';
  reason?: string;
  log: string[];
  failure?: {
    kind: string;
    code: string;
    assertion?: string;
    note?: string;
    expected?: string;
    actual?: string;
    file: string;
    line: number;
    col: number;
  };
}
interface JsonReport {
  ok: boolean;
  passed: number;
  failed: number;
  pending: number;
  cases: JsonCase[];
  errors: { file: string; line: number; col: number; code: string }[];
}

async function json(...args: string[]): Promise<{ code: number | null; report: JsonReport }> {
  const r = await runCli(['test', ...args, '--format', 'json']);
  return { code: r.code, report: JSON.parse(r.stdout) as JsonReport };
}

describe('mhl test', () => {
  it('passes every assertion, local and imported workflows, tools and commands', async () => {
    const r = await runCli(['test', `${FIXTURES}/suite`]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ {2}✔ Assertions › every_assertion_holds \(\d+(\.\d)?ms\)$/m);
    assert.match(r.stdout, /✔ Workflows › imported_tools_and_workflows_run/);
    assert.match(r.stdout, /^8 passed, 0 failed, 0 pending$/m);
  });

  it('passes the tests shipped with the examples', async () => {
    const r = await runCli(['test', 'examples']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^2 passed, 0 failed, 0 pending$/m);
  });

  it('reports each failed assertion with its name, expected and actual values and position', async () => {
    const { code, report } = await json(`${FIXTURES}/mixed/failing.mh`);
    assert.equal(code, 1);
    assert.deepEqual([report.passed, report.failed, report.pending], [1, 13, 0]);
    const failures = new Map(report.cases.map((c) => [c.case, c.failure]));
    const expect: [string, string, string, string, number][] = [
      ['are_equal_fails', 'are_equal', '3', '2', 3],
      ['are_not_equal_fails', 'are_not_equal', 'not "a"', '"a"', 4],
      ['not_equal_fails', 'not_equal', 'not [1]', '[1]', 5],
      ['is_true_fails', 'is_true', 'true', 'false', 6],
      ['is_false_fails', 'is_false', 'false', 'true', 7],
      ['is_null_fails', 'is_null', 'null', '"x"', 8],
      ['not_null_fails', 'not_null', 'a value other than null', 'null', 9],
      ['greater_than_fails', 'greater_than', '> 2', '1', 10],
      ['less_than_fails', 'less_than', '< 1', '2', 11],
      ['greater_than_or_equal_fails', 'greater_than_or_equal', '>= 2', '1', 12],
      ['less_than_or_equal_fails', 'less_than_or_equal', '<= 2', '3', 13],
      ['includes_fails', 'includes', 'an array including 5', '[1,2]', 14],
    ];
    for (const [name, assertion, expected, actual, line] of expect) {
      const f = failures.get(name);
      assert.ok(f, name);
      assert.deepEqual(
        [f.kind, f.code, f.assertion, f.expected, f.actual, f.file, f.line],
        [
          'assertion',
          'ASSERTION',
          assertion,
          expected,
          actual,
          `${FIXTURES}/mixed/failing.mh`,
          line,
        ],
        name,
      );
    }
    assert.equal(failures.get('message_is_shown')?.note, 'the greeting');
    assert.equal(failures.get('passes'), undefined);
  });

  it('prints failures like node --test: the case, file:line:col, the source line, the values', async () => {
    const r = await runCli(['test', `${FIXTURES}/mixed/failing.mh`]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^ {2}✖ Failing › are_equal_fails \(/m);
    assert.match(r.stdout, /^ {2}✔ Failing › passes \(/m);
    const detail =
      /✖ Failing › are_equal_fails\n {2}test\/fixtures\/testing\/mixed\/failing\.mh:3:32: are_equal failed\n.*are_equal\(1 \+ 1, 3\).*\n.*\^+\n {4}expected: 3\n {4}actual: {3}2\n/;
    assert.match(r.stdout, detail);
    assert.match(r.stdout, /^1 passed, 13 failed, 0 pending$/m);
  });

  it('counts incomplete() as pending, not failed, and exits 0', async () => {
    const { code, report } = await json(`${FIXTURES}/mixed/pending.mh`);
    assert.equal(code, 0);
    assert.deepEqual(
      report.cases.map((c) => [c.case, c.status, c.reason]),
      [
        ['not_written_yet', 'pending', 'waiting for the API'],
        ['no_reason', 'pending', ''],
      ],
    );
    const text = await runCli(['test', `${FIXTURES}/mixed/pending.mh`]);
    assert.match(text.stdout, /﹣ Later › not_written_yet .*# pending: waiting for the API/);
    assert.match(text.stdout, /^0 passed, 0 failed, 2 pending$/m);
  });

  it('turns a raised error into a failure at the raising position, with the case log', async () => {
    const { code, report } = await json(`${FIXTURES}/mixed/erroring.mh`);
    assert.equal(code, 1);
    const byName = new Map(report.cases.map((c) => [c.case, c]));
    const at = (n: string) => {
      const f = byName.get(n)?.failure;
      return [f?.kind, f?.code, f?.line, f?.col];
    };
    assert.deepEqual(at('fail_raises'), ['error', 'FAIL', 13, 9]);
    assert.deepEqual(byName.get('fail_raises')?.log, ['about to fail']);
    assert.deepEqual(at('a_type_error'), ['error', 'TYPE', 16, 17]);
    assert.deepEqual(at('an_error_in_a_tool'), ['error', 'NATIVE', 3, 37]);
    assert.equal(byName.get('a_failed_workflow_is_a_result')?.status, 'passed');
  });

  it('runs agents for real: a fake AI CLI stands in for the model', async () => {
    const r = await runCli(['test', `${FIXTURES}/agent`], { env: { FAKE_AGENT } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^3 passed, 0 failed, 0 pending$/m);
  });

  it('redacts a secret the case read from its failure and its log', async () => {
    const secret = 's3cr3t-value-for-e2e';
    for (const format of ['text', 'json', 'tap']) {
      const r = await runCli(['test', `${FIXTURES}/secret`, '--format', format], {
        env: { MHL_TEST_API_TOKEN: secret },
      });
      assert.equal(r.code, 1);
      assert.equal((r.stdout + r.stderr).includes(secret), false, format);
      assert.match(r.stdout, /\[REDACTED\]/);
    }
  });

  it('writes TAP version 14: a point per case, YAML under failures, TODO for pending', async () => {
    const r = await runCli(['test', `${FIXTURES}/mixed`, '--format', 'tap']);
    assert.equal(r.code, 1);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], 'TAP version 14');
    assert.ok(lines.includes('1..20'), r.stdout);
    assert.ok(lines.includes('ok 3 - Errors › a_failed_workflow_is_a_result'));
    assert.ok(lines.includes('not ok 19 - Later › not_written_yet # TODO waiting for the API'));
    const failure = r.stdout.indexOf('not ok 5 - Failing › are_equal_fails\n');
    assert.ok(failure > 0, r.stdout);
    const block = r.stdout.slice(failure).split('\n').slice(1, 10);
    assert.equal(block[0], '  ---');
    assert.ok(block.includes('  assertion: "are_equal"'));
    assert.ok(block.includes('  expected: "3"'));
    assert.ok(block.includes('  actual: "2"'));
    assert.ok(block.includes(`  at: "${FIXTURES}/mixed/failing.mh:3:32"`));
    assert.ok(
      lines.includes('# pass 2') && lines.includes('# fail 16') && lines.includes('# todo 2'),
    );
  });

  it('runs only the cases --filter names', async () => {
    const { code, report } = await json(`${FIXTURES}/mixed`, '--filter', 'Failing › passes');
    assert.equal(code, 0);
    assert.deepEqual(
      report.cases.map((c) => c.case),
      ['passes'],
    );
  });

  it('exits 1 when no test is found, in every format', async () => {
    const text = await runCli(['test', `${FIXTURES}/empty`]);
    assert.equal(text.code, 1);
    assert.match(text.stderr, /no tests found/);
    const { code, report } = await json(`${FIXTURES}/empty`);
    assert.deepEqual([code, report.ok, report.cases.length], [1, false, 0]);
  });

  it('exits 2 for a path that does not exist or a bad option', async () => {
    const missing = await runCli(['test', `${FIXTURES}/nope`]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no such file or directory: test\/fixtures\/testing\/nope/);
    assert.equal((await runCli(['test', FIXTURES, '--format', 'xml'])).code, 2);
    assert.equal((await runCli(['test', FIXTURES, '--timeout-ms', 'soon'])).code, 2);
  });

  it('reports a malformed file with file:line:col and exits 1', async () => {
    const r = await runCli(['test', `${FIXTURES}/broken`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^test\/fixtures\/testing\/broken\/malformed\.mh:4:5: error: /m);
    const { report } = await json(`${FIXTURES}/broken`);
    assert.deepEqual(
      report.errors.map((e) => [e.file, e.line, e.col, e.code]),
      [[`${FIXTURES}/broken/malformed.mh`, 4, 5, 'SYNTAX']],
    );
  });

  it('fails a case that outlives --timeout-ms', async () => {
    const { code, report } = await json(`${FIXTURES}/slow`, '--timeout-ms', '300');
    assert.equal(code, 1);
    assert.deepEqual(
      report.cases.map((c) => [c.case, c.status, c.failure?.code]),
      [
        ['sleeps', 'failed', 'TIMEOUT'],
        ['after_it', 'passed', undefined],
      ],
    );
  });
});

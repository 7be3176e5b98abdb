/**
 * Built-in functions and tagged values (spec: mhl-language.md §4, §5.7, §7.8, §7.9, §10): log,
 * fail, env and its redaction, type_of and is_*, nameof, and enum values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REDACTED } from '../../../../src/runtime/services/redact.js';
import { ok, run, value } from './harness.js';

const ENUM = 'enum Status { Draft, Published }';

describe('built-ins: log and fail', () => {
  it('logs one space-joined line of formatted values and returns null', async () => {
    const r = await run(
      'var r = 1 step A { r = log("a", 1, 0.25, [1], {b: 1, a: 2}, null, 1 == 1, Status.Draft, () -> 1) }',
      { decls: ENUM },
    );
    assert.deepEqual(r.output, ['a 1 0.25 [1] {"a":2,"b":1} null true Draft <function>']);
    assert.equal(r.vars['r'], null);
  });

  it('fails with the space-joined formatted values', async () => {
    const vars = await ok(
      'var r = null step A { try { fail("bad:", Status.Draft, [2]) } catch (e) { r = e } }',
      {
        decls: ENUM,
      },
    );
    assert.equal(vars['r'], 'bad: Draft [2]');
  });
});

describe('built-ins: env', () => {
  const env = { HOME_DIR: '/h', GITHUB_TOKEN: 'ghp_supersecret123', API_KEY: 'sk-1234567890' };

  it('reads variables, and "" for unset ones', async () => {
    assert.deepEqual(await value('[env("HOME_DIR"), env("UNSET_NAME")]', '', { env }), ['/h', '']);
  });

  it('redacts the value of a sensitive name in output, errors and results', async () => {
    const r = await run(
      'var tok = "" step A { var t = env("GITHUB_TOKEN") log("token is ${t}") tok = t } step B { fail("leaked", env("API_KEY")) }',
      { env },
    );
    assert.deepEqual(r.output, [`token is ${REDACTED}`]);
    assert.equal(r.vars['tok'], REDACTED);
    assert.equal(r.outcome.status, 'failed');
    assert.ok(r.outcome.error?.message.endsWith(`leaked ${REDACTED}`));
    assert.doesNotMatch(JSON.stringify(r), /ghp_supersecret123|sk-1234567890/);
  });

  it('does not redact the value of an ordinary name', async () => {
    const r = await run('step A { log(env("HOME_DIR")) }', { env });
    assert.deepEqual(r.output, ['/h']);
  });
});

describe('built-ins: type_of and is_*', () => {
  const table: [string, unknown][] = [
    ['type_of("s")', 'string'],
    ['type_of(1.5)', 'number'],
    ['type_of(1 == 1)', 'bool'],
    ['type_of([])', 'array'],
    ['type_of({})', 'object'],
    ['type_of([null][0])', 'null'],
    ['type_of(Status.Draft)', 'enum'],
    ['type_of((x) -> x)', 'function'],
    ['[is_string("a"), is_string(1)]', [true, false]],
    ['[is_number(1), is_number("1")]', [true, false]],
    ['[is_bool(1 == 2), is_bool(0)]', [true, false]],
    ['[is_array([]), is_array({})]', [true, false]],
    ['[is_object({}), is_object([]), is_object(Status.Draft)]', [true, false, false]],
    ['[is_null([null][0]), is_null(0), is_null("")]', [true, false, false]],
    ['[is_enum(Status.Draft), is_enum("Draft")]', [true, false]],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () =>
      assert.deepEqual(await value(src, '', { decls: ENUM }), expected));
  }

  it('types a spawn handle as task', async () => {
    const decls = 'agent Echo {\n  command: "sh"\n  args: ["-c", "${prompt}"]\n}';
    const vars = await ok(
      'var r = null step S { spawn h = Echo.run(prompt: "echo x") wait h r = type_of(h) }',
      {
        decls,
      },
    );
    assert.equal(vars['r'], 'task');
  });
});

describe('built-ins: nameof', () => {
  it('gives the declared name as a string', async () => {
    const decls = `${ENUM}\ntool T {\n  f() -> 1\n}\nprompt Pr() { "x" }\nmemory M { type: "kv" store: "memory" }`;
    assert.deepEqual(
      await value('[nameof(Status), nameof(T), nameof(Pr), nameof(M)]', '', { decls }),
      ['Status', 'T', 'Pr', 'M'],
    );
  });
});

describe('enums', () => {
  const table: [string, unknown][] = [
    ['Status.Draft == "Draft"', false],
    ['Status.Draft == Status.Draft', true],
    ['Status.Draft != Status.Published', true],
    ['[Status.Draft].contains(Status.Draft)', true],
    ['[Status.Draft].contains("Draft")', false],
    ['"${Status.Draft}"', 'Draft'],
    ['[Status.Draft, Status.Published].join(",")', 'Draft,Published'],
  ];
  for (const [src, expected] of table) {
    it(`evaluates ${src}`, async () =>
      assert.deepEqual(await value(src, '', { decls: ENUM }), expected));
  }

  it('keeps enum identity across steps and prints the variant in results', async () => {
    const vars = await ok(
      'var s = Status.Draft var r = null step A { } step B { r = [type_of(s), s == Status.Draft] }',
      {
        decls: ENUM,
      },
    );
    assert.deepEqual(vars, { r: ['enum', true], s: 'Draft' });
  });

  it('keeps enum identity across a resume', async () => {
    const body =
      'var s = Status.Draft var r = null step A { } step B { if (!context.resumed) pause() r = [type_of(s), s == Status.Draft] }';
    const first = await run(body, { decls: ENUM });
    const again = await run(body, {
      decls: ENUM,
      cwd: first.cwd,
      state: first.state,
      resume: true,
    });
    assert.deepEqual(again.vars['r'], ['enum', true]);
  });
});

/**
 * `router R { agents, select, decider }` and `R.delegate(prompt:, schema:?)` (spec:
 * mhl-language.md §5.8), with real agent processes: the fake agent CLI of test/fixtures/bin.
 * The decider answers through the fake agent's `[reply-for:judge=…]` directive.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chosenName } from '../../../../src/runtime/interpreter/router.js';
import { fromJson } from '../../../../src/runtime/interpreter/values.js';
import { failure, ok, tempDir } from './harness.js';

const FAKE = join(import.meta.dirname, '../../../fixtures/bin/fake-agent.mjs');

const SCHEMA = ', "--json-schema", "${schema}"';
const agent = (name: string, label: string, extra = '', schema = true) =>
  `agent ${name} {\n  command: "${FAKE}"\n  args: ["--name", "${label}"${schema ? SCHEMA : ''}, "-p", "\${prompt}"]\n${extra}\n}\n`;

const decls = [
  agent(
    'Coder',
    'coder',
    '  description: "writes and fixes code"\n  after: () -> "coder " + result',
    false,
  ),
  agent('Writer', 'writer', '  description: "writes prose"\n  after: () -> "writer " + result'),
  agent('Judge', 'judge'),
  'router Desk {\n  agents: [Coder, Writer]\n  select: (prompt) -> if (prompt.contains("code")) nameof(Coder) else null\n  decider: Judge\n}',
  'router Picky { agents: [Coder, Writer]  select: (p) -> "Nobody" }',
  'router Direct { agents: [Coder, Writer]  select: (p) -> Coder }',
  'router Blind { agents: [Coder]  select: (p) -> null }',
  `router Quick { agents: [Coder, Writer]  decider: agent { command: "${FAKE}"  args: ["--name", "judge", "-p", "\${prompt}"] } }`,
].join('\n');

describe('router delegate', () => {
  it('takes the agent select names, and runs it with its own hooks', async () => {
    const vars = await ok('var r = null step S { r = Desk.delegate(prompt: "fix this code") }', {
      decls,
    });
    assert.equal(vars['r'], 'coder answer: fix this code');
  });

  it('accepts the agent itself as select result', async () => {
    const vars = await ok('var r = null step S { r = Direct.delegate(prompt: "hi") }', { decls });
    assert.equal(vars['r'], 'coder answer: hi');
  });

  it('asks the decider when select returns null, with descriptions and an enum schema', async () => {
    const record = join(tempDir(), 'calls.jsonl');
    const vars = await ok(
      `var r = null step S { r = Desk.delegate(prompt: "[record:${record}] [reply-for:judge={\\"agent\\": \\"Writer\\"}] a poem", schema: "{}") }`,
      { decls },
    );
    assert.match(String(vars['r']), /^writer answer: /);
    const calls = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; prompt: string; schema: string });
    assert.deepEqual(
      calls.map((c) => c.name),
      ['judge', 'writer'],
    );
    const [judge, writer] = calls;
    assert.ok(judge?.prompt.includes('- Coder: writes and fixes code'));
    assert.ok(judge?.prompt.includes('- Writer: writes prose'));
    assert.deepEqual(JSON.parse(judge?.schema ?? '').properties.agent.enum, ['Coder', 'Writer']);
    // The chosen agent gets the caller's prompt and schema, untouched.
    assert.equal(writer?.schema, '{}');
    assert.ok(writer?.prompt.startsWith(`[record:${record}]`));
  });

  it('accepts a bare name from an inline decider agent', async () => {
    const vars = await ok(
      'var r = null step S { r = Quick.delegate(prompt: "[reply-for:judge=Coder] sort it") }',
      { decls },
    );
    assert.match(String(vars['r']), /^coder answer: /);
  });

  it('fails at the call when select names an agent the router does not list', async () => {
    const f = await failure('step S {\n var r = 1\n Picky.delegate(prompt: "x") }', { decls });
    assert.equal(f.step, 'S');
    assert.match(f.at ?? '', /^\d+:2$/);
  });

  it('fails when the decider names no listed agent', async () => {
    const f = await failure(
      'step S { Desk.delegate(prompt: "[reply-for:judge={\\"agent\\": \\"Nobody\\"}] hm") }',
      { decls },
    );
    assert.equal(f.step, 'S');
    assert.ok(f.at);
  });

  it('fails when select returns null and there is no decider', async () => {
    const f = await failure('step S { Blind.delegate(prompt: "x") }', { decls });
    assert.equal(f.step, 'S');
    assert.ok(f.at);
  });
});

describe('reading a decider answer', () => {
  const cases: [unknown, unknown][] = [
    ['{"agent": "A"}', 'A'],
    ['```json\n{"agent":"B"}\n```', 'B'],
    ['"A"', 'A'],
    ['  Writer.\n', 'Writer'],
    ['{"type":"result","result":"{\\"agent\\":\\"C\\"}"}', 'C'],
    ['{"structured_output":{"agent":"D"},"result":"ignored"}', 'D'],
    [{ agent: 'E' }, 'E'],
    [{ other: 1 }, { other: 1 }],
  ];
  for (const [answer, name] of cases) {
    it(`reads ${JSON.stringify(answer)}`, () => {
      assert.deepEqual(chosenName(fromJson(answer)), fromJson(name));
    });
  }
});

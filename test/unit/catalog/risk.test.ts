import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NATIVE_EFFECTS } from '../../../src/catalog/effects.js';
import { buildCatalog, type Workflow } from '../../../src/catalog/index.js';
import { riskOf, workflowEffects, workflowRisk } from '../../../src/catalog/risk.js';
import { memoryHost } from '../../../src/lang/index.js';
import { NATIVES } from '../../../src/runtime/natives/index.js';

/** The one workflow declared by `source`, with `extra` files beside it. */
function workflowOf(source: string, extra: Record<string, string> = {}): Workflow {
  const files = new Map([['/pack/main.mh', source], ...Object.entries(extra)]);
  const host = memoryHost(files);
  const result = buildCatalog({ root: '/pack', files: ['/pack/main.mh'], host, source: 'pack' });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  const [workflow] = result.catalog.workflows.values();
  assert.ok(workflow);
  return workflow;
}

const step = (body: string) =>
  `pipeline P {\n  input x: string = "a"\n  step S {\n    ${body}\n  }\n}\n`;

describe('workflow risk', () => {
  it('calls a workflow that reaches no effect read-only, low risk', () => {
    const w = workflowOf(step('var y = x.upper()\n    log(fs.read("notes.txt"))'));
    assert.deepEqual(workflowRisk(w), {
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      risk: { level: 'low', impact: 'read_only', effects: [], reversibility: 'not_applicable' },
    });
  });

  it('marks a command runner high risk, destructive, open-world and not idempotent', () => {
    const { annotations, risk } = workflowRisk(workflowOf(step('cmd.exec(["true"])')));
    assert.deepEqual(annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    assert.deepEqual(risk, {
      level: 'high',
      impact: 'destructive',
      effects: ['process'],
      reversibility: 'irreversible',
    });
  });

  it('marks a file writer medium risk and closed-world', () => {
    const { annotations, risk } = workflowRisk(workflowOf(step('fs.write("out.txt", x)')));
    assert.equal(annotations.readOnlyHint, false);
    assert.equal(annotations.openWorldHint, false);
    assert.deepEqual(
      [risk.level, risk.impact, risk.effects],
      ['medium', 'write', ['filesystem_write']],
    );
  });

  it('errs towards risk: an aliased namespace and an effect in an imported file both count', () => {
    assert.deepEqual(workflowEffects(workflowOf(step('var f = fs\n    log(x)'))), [
      'filesystem_write',
    ]);
    const imported = workflowOf(`import "./lib.mh"\n${step('log(Net.ping())')}`, {
      '/pack/lib.mh': 'export tool Net {\n  ping() -> http.get("http://example.invalid")\n}\n',
    });
    assert.deepEqual(workflowEffects(imported), ['network']);
  });

  it('ignores files of the same catalog that the workflow does not import', () => {
    const host = memoryHost(
      new Map([
        ['/pack/main.mh', step('log(x)')],
        ['/pack/other.mh', 'pipeline Other {\n  step S {\n    cmd.exec(["true"])\n  }\n}\n'],
      ]),
    );
    const files = ['/pack/main.mh', '/pack/other.mh'];
    const result = buildCatalog({ root: '/pack', files, host, source: 'pack' });
    assert.ok(result.ok);
    const effects = (name: string) => {
      const w = result.catalog.workflows.get(name);
      assert.ok(w);
      return workflowEffects(w);
    };
    assert.deepEqual([effects('P'), effects('Other')], [[], ['process']]);
  });

  it('counts an agent as a process that reaches the network', () => {
    const w = workflowOf(
      `agent Helper {\n  engine: "claude"\n}\n${step('var r = Helper.execute("hi")')}`,
    );
    assert.deepEqual(workflowEffects(w), ['agent', 'network', 'process']);
  });

  it('keeps only the title of declared annotations', () => {
    const w = { ...workflowOf(step('log(x)')), annotations: { title: 'T', readOnlyHint: false } };
    assert.deepEqual(workflowRisk(w).annotations, { title: 'T', ...riskOf([]).annotations });
  });

  it('reads effects from the calls a step makes, not from its text', () => {
    const cases: readonly (readonly [string, string, readonly string[]])[] = [
      ['a read', 'log(fs.read("a.txt"))', []],
      [
        'a listing and a join',
        'log(fs.list(".").size() + dir.list(".").size())\n    log(fs.join("a", "b"))',
        [],
      ],
      ['a write', 'fs.write("a.txt", x)', ['filesystem_write']],
      ['an append', 'fs.append("a.txt", x)', ['filesystem_write']],
      ['a folder created', 'dir.create("out")', ['filesystem_write']],
      ['a command', 'cmd.exec(["ls"])', ['process']],
      [
        'grep --exclude-dir in a command',
        'cmd.exec(["grep", "-r", "--exclude-dir", ".git", "TODO", "."])',
        ['process'],
      ],
      [
        'a shell line naming fs.write',
        'cmd.exec(["sh", "-c", "echo fs.write dir.create > /dev/null"])',
        ['process'],
      ],
      [
        'a string that looks like code',
        'log("fs.write(x) and cmd.exec and agent Foo and http.get")',
        [],
      ],
      ['git log and status', 'log(git.log())\n    log(git.status().stdout)', []],
      ['a git commit', 'git.add(["."])\n    git.commit("msg")', ['filesystem_write', 'process']],
      ['an http request', 'log(http.get("https://example.invalid").status)', ['network']],
      [
        'a download',
        'http.download("https://example.invalid", "out.bin")',
        ['filesystem_write', 'network'],
      ],
      [
        'json, log, time and uuid',
        'log(json.stringify({a: uuid.v4(), t: time.now()}))\n    log.info("x")',
        [],
      ],
      ['an inline agent', 'var a = agent { command: "x" }', ['agent', 'network', 'process']],
      ['html parsing', 'log(html.get_text(html.parse("<p>x</p>")))', []],
    ];
    for (const [what, body, effects] of cases) {
      assert.deepEqual(workflowEffects(workflowOf(step(body))), effects, what);
    }
  });

  it('counts what the declarations a workflow reaches do, and only those', () => {
    const decls = [
      'memory Cache { type: "kv" }',
      'memory Notes { type: "json" path: "notes.json" }',
      'extension mcp Docs { transport: "stdio", command: "docs-server" }',
      'tool Files {\n  save(t: string) -> fs.write("t.txt", t)\n  peek() -> fs.read("t.txt")\n}',
      'agent Helper {\n  command: "x"\n}',
    ].join('\n');
    const cases: readonly (readonly [string, readonly string[]])[] = [
      ['Cache.set("k", x)', []],
      ['Notes.set("k", x)', ['filesystem_write']],
      ['log(Docs)', ['network', 'process']],
      ['log(Files.peek())', ['filesystem_write']],
      ['log(x)', []],
    ];
    for (const [body, effects] of cases) {
      assert.deepEqual(workflowEffects(workflowOf(`${decls}\n${step(body)}`)), effects, body);
    }
  });

  it('ignores what another pipeline of the same file does', () => {
    const source = `${step('log(fs.read("a"))')}\npipeline Writer {\n  step W {\n    fs.write("a", "b")\n  }\n}\n`;
    const host = memoryHost(new Map([['/pack/main.mh', source]]));
    const result = buildCatalog({ root: '/pack', files: ['/pack/main.mh'], host, source: 'pack' });
    assert.ok(result.ok);
    const effects = (name: string) => {
      const w = result.catalog.workflows.get(name);
      assert.ok(w);
      return workflowEffects(w);
    };
    assert.deepEqual([effects('P'), effects('Writer')], [[], ['filesystem_write']]);
  });

  it('classifies every native namespace the runtime has, and no other', () => {
    assert.deepEqual(Object.keys(NATIVE_EFFECTS).sort(), Object.keys(NATIVES).sort());
    for (const [name, effects] of Object.entries(NATIVE_EFFECTS)) {
      const ops = Object.keys(NATIVES[name] ?? {});
      for (const op of [...effects.safe, ...Object.keys(effects.ops ?? {})]) {
        assert.ok(ops.includes(op), `${name}.${op} is not an operation of the runtime`);
      }
    }
  });
});

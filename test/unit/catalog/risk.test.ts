import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalog, type Workflow } from '../../../src/catalog/index.js';
import { riskOf, workflowEffects, workflowRisk } from '../../../src/catalog/risk.js';
import { memoryHost } from '../../../src/lang/index.js';

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
});

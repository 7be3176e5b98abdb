/**
 * Credential slots read from the tree: every literal `vault("name")` the workflow reaches,
 * across imports and declarations, with the kinds its calls name; a computed name, a local
 * `vault` or a call in code the workflow does not reach is no slot.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildCatalog, type Workflow, workflowSlots } from '../../../src/catalog/index.js';
import { memoryHost } from '../../../src/lang/index.js';

function workflowOf(source: string, extra: Record<string, string> = {}): Workflow {
  const files = new Map([['/pack/main.mh', source], ...Object.entries(extra)]);
  const result = buildCatalog({
    root: '/pack',
    files: ['/pack/main.mh'],
    host: memoryHost(files),
    source: 'pack',
  });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  const [workflow] = result.catalog.workflows.values();
  assert.ok(workflow);
  return workflow;
}

const step = (body: string, decls = '') =>
  `${decls}\npipeline P {\n  input x: string = "a"\n  step S {\n    ${body}\n  }\n}\n`;

describe('credential slots', () => {
  it('finds literal names with their kinds, any kind once a call names none', () => {
    const w = workflowOf(
      step(
        'var a = vault("db")\n    var b = vault("api", kind: "token")\n    var c = vault("api", kind: "api_key")\n    var d = vault("ssh", kind: "private_key")\n    var e = vault("ssh")',
      ),
    );
    assert.deepEqual(workflowSlots(w), [
      { name: 'api', kinds: ['api_key', 'token'] },
      { name: 'db', kinds: [] },
      { name: 'ssh', kinds: [] },
    ]);
  });

  it('follows the tools of imported files the workflow reaches, and only those', () => {
    const w = workflowOf(`import "./lib.mh"\n${step('log(Db.connect())')}`, {
      '/pack/lib.mh':
        'export tool Db {\n  connect() -> vault("near", kind: "password")\n}\nexport tool Other {\n  go() -> vault("far")\n}\n',
    });
    assert.deepEqual(workflowSlots(w), [{ name: 'near', kinds: ['password'] }]);
  });

  it('has no slot for a computed name or an interpolated one', () => {
    const w = workflowOf(step('var n = "db"\n    log(vault(n))\n    log(vault("${x}-key"))'));
    assert.deepEqual(workflowSlots(w), []);
  });
});

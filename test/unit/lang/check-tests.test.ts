import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFiles } from '../../../src/lang/checker.js';
import { pipelineDefinition } from '../../../src/lang/definition.js';
import { buildNamespace } from '../../../src/lang/modules.js';
import { memoryHost } from '../../../src/lang/source-host.js';

/** Lints `/p/main.mh` with the given in-memory files; returns `file:line:col CODE` rows. */
function lint(files: Record<string, string>): string[] {
  const { diagnostics } = checkFiles(['/p/main.mh'], memoryHost(new Map(Object.entries(files))));
  return diagnostics.map(
    (d) => `${d.span.file.replace('/p/', '')}:${d.span.line}:${d.span.col} ${d.code}`,
  );
}

describe('checker: test blocks', () => {
  it('accepts every assertion inside describe', () => {
    const body = [
      'are_equal(1, 1)',
      'are_not_equal(1, 2)',
      'not_equal(1, 2)',
      'is_true(true)',
      'is_false(false)',
      'is_null(null)',
      'not_null(1)',
      'greater_than(2, 1)',
      'less_than(1, 2)',
      'greater_than_or_equal(1, 1)',
      'less_than_or_equal(1, 1)',
      'includes([1], 1)',
      'incomplete("later")',
    ].join('\n');
    assert.deepEqual(lint({ '/p/main.mh': `test T {\n describe c {\n${body}\n }\n}` }), []);
  });

  it('lets a test run the file’s own and imported workflows by name', () => {
    const rows = lint({
      '/p/main.mh':
        'import { Other } from "lib.mh"\nworkflow Local { step S { log("x") } }\ntest T { describe c { is_true(Local.run().ok)\n is_true(Other.run().ok) } }',
      '/p/lib.mh': 'export workflow Other { step S { log("y") } }',
    });
    assert.deepEqual(rows, []);
  });

  it('reports an assertion used outside a describe block at its position', () => {
    const rows = lint({
      '/p/main.mh': 'workflow W {\n step S {\n  are_equal(1, 1)\n  incomplete()\n }\n}',
    });
    assert.deepEqual(rows, ['main.mh:3:3 INVALID', 'main.mh:4:3 INVALID']);
  });

  it('keeps is_null a plain built-in outside tests', () => {
    assert.deepEqual(lint({ '/p/main.mh': 'workflow W { step S { log(is_null(1)) } }' }), []);
  });

  it('does not let a workflow run another by name', () => {
    const rows = lint({
      '/p/main.mh': 'workflow A { step S { log("a") } }\nworkflow B { step S { A.run() } }',
    });
    assert.deepEqual(rows, ['main.mh:2:23 UNKNOWN_NAME']);
  });
});

describe('definition digest: test blocks', () => {
  const digest = (source: string) => {
    const { graph } = checkFiles(['/p/main.mh'], memoryHost(new Map([['/p/main.mh', source]])));
    const root = graph.get('/p/main.mh');
    assert.ok(root);
    const decl = root.program.decls.find((d) => d.kind === 'Pipeline');
    assert.ok(decl?.kind === 'Pipeline');
    const program = { root, namespace: buildNamespace(root), texts: graph.texts };
    return pipelineDefinition(program, decl).digest;
  };

  it('ignores test blocks, so editing a test never refuses a resume', () => {
    const workflow = 'workflow W { step S { log("x") } }';
    const a = digest(`${workflow}\ntest T { describe c { is_true(true) } }`);
    const b = digest(`${workflow}\ntest T { describe c { is_false(false) } }`);
    assert.equal(a, b);
    assert.equal(a, digest(workflow));
  });
});

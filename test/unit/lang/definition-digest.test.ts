/**
 * definitionDigest: stable across layout and comments of the same source, different for any
 * change to what runs. Sources go through the real parser.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DeclOf, definitionDigest, parse } from '../../../src/lang/index.js';

function pipeline(source: string, file = 'main.mh'): DeclOf<'Pipeline'> {
  const { program, diagnostics } = parse(source, file);
  assert.deepEqual(
    diagnostics.map((d) => d.message),
    [],
  );
  const decl = program.decls.find((d) => d.kind === 'Pipeline');
  assert.ok(decl?.kind === 'Pipeline');
  return decl;
}

const COMPACT = `pipeline Build {
  input project: string = "x"
  var count = 0
  step Prepare {
    count = count + 1
    log.info("prepared \${project}")
  }
  step Check { if (count > 1) { fail("twice") } }
}
`;

const SPREAD = `/** Builds the project.
    A header comment. **/
// Second comment line.

pipeline Build {
    input project: string = "x"     // the project

    var count = 0

    // a line comment
    step Prepare {
        count = count + 1

        log.info("prepared \${project}")
    }

    step Check {
        if (count > 1) {
            fail("twice")
        }
    }
}
`;

describe('definitionDigest', () => {
  it('is a sha256 hex digest', () => {
    assert.match(definitionDigest(pipeline(COMPACT)), /^[0-9a-f]{64}$/);
  });

  it('ignores whitespace, comments and the file name', () => {
    assert.equal(
      definitionDigest(pipeline(COMPACT)),
      definitionDigest(pipeline(SPREAD, 'other.mh')),
    );
  });

  it('changes when a step body changes', () => {
    const base = definitionDigest(pipeline(COMPACT));
    for (const changed of [
      COMPACT.replace('count + 1', 'count + 2'),
      COMPACT.replace('"twice"', '"two times"'),
      COMPACT.replace('var count = 0', 'var count = 1'),
      COMPACT.replace('step Check', 'step Verify'),
      COMPACT.replace('= "x"', '= "y"'),
    ]) {
      assert.notEqual(definitionDigest(pipeline(changed)), base, changed);
    }
  });

  it('ignores key order and every *Span property, but not other fields', () => {
    const span = { file: 'a', start: 0, end: 1, line: 1, col: 1 };
    const moved = { file: 'b', start: 9, end: 12, line: 4, col: 2 };
    const a = { kind: 'X', name: 'n', span, nameSpan: span, pathSpan: span, extra: undefined };
    const b = { pathSpan: moved, nameSpan: moved, span: moved, name: 'n', kind: 'X' };
    assert.equal(definitionDigest(a), definitionDigest(b));
    assert.notEqual(definitionDigest(a), definitionDigest({ ...b, name: 'm' }));
    assert.notEqual(definitionDigest([a, b]), definitionDigest([a]));
    assert.notEqual(definitionDigest({ v: '1' }), definitionDigest({ v: 1 }));
  });
});

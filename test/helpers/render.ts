/** Renders expressions as s-expressions so parser tests read as tables. */
import type { Expr } from '../../src/lang/ast.js';

export function render(e: Expr): string {
  switch (e.kind) {
    case 'Null':
      return 'null';
    case 'Bool':
    case 'Number':
      return String(e.value);
    case 'Duration':
      return `${e.ms}ms`;
    case 'String':
      return `"${e.segments.map((s) => (typeof s === 'string' ? s : `\${${render(s)}}`)).join('')}"`;
    case 'Ident':
      return e.name;
    case 'Array':
      return `[${e.items.map(render).join(' ')}]`;
    case 'Object':
      return `{${e.fields.map((f) => `${f.key}:${render(f.value)}`).join(' ')}}`;
    case 'Ref':
      return `(ref {${e.fields.map((f) => `${f.key}:${render(f.value)}`).join(' ')}})`;
    case 'With':
      return `(with ${render(e.object)} {${e.fields.map((f) => `${f.key}:${render(f.value)}`).join(' ')}})`;
    case 'InlineAgent':
      return `(agent ${e.props.map((p) => p.name).join(' ')})`;
    case 'Lambda':
      return `(fn (${e.params.map((p) => p.name).join(' ')}) ${e.body.kind === 'Block' ? `block/${e.body.body.length}` : render(e.body)})`;
    case 'IfExpr':
      return `(if ${render(e.cond)} ${render(e.then)} ${render(e.else)})`;
    case 'Match':
      return `(match ${render(e.subject)} ${e.arms.map((a) => `${a.pattern ? render(a.pattern) : '_'}->${render(a.value)}`).join(' ')})`;
    case 'Unary':
      return `(${e.op} ${render(e.operand)})`;
    case 'Binary':
      return `(${e.op} ${render(e.left)} ${render(e.right)})`;
    case 'Member':
      return `(${e.optional ? '?.' : '.'} ${render(e.object)} ${e.name})`;
    case 'Index':
      return `(${e.optional ? '?[]' : '[]'} ${render(e.object)} ${render(e.index)})`;
    case 'Slice': {
      const bound = (b: typeof e.lo) => (b ? `${b.fromEnd ? '^' : ''}${render(b.value)}` : '_');
      return `(slice ${render(e.object)} ${bound(e.lo)} ${bound(e.hi)})`;
    }
    case 'Call':
      return `(call ${render(e.callee)}${e.args.map((a) => ` ${a.name ? `${a.name}:` : ''}${render(a.value)}`).join('')})`;
  }
}

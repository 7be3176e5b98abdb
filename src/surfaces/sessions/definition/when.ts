/**
 * The `when` inline expression of steps (spec session-profile §1.9), parsed to a small AST and
 * evaluated over a variable bag. An expression that does not parse is `undefined` from
 * `parseWhen`, and `evaluateWhen` of such text is false (the step is skipped). Pure, no I/O.
 *
 *   or      := and ('||' and)*
 *   and     := unary ('&&' unary)*
 *   unary   := '!' unary | primary
 *   primary := '(' or ')' | true | false | IDENT [cmpop value]
 *   cmpop   := == | != | > | < | >= | <=
 *   value   := true | false | null | "str" | 'str' | integer | bareword
 *   IDENT   := [A-Za-z_][A-Za-z0-9_.]*
 */
import { compare, readPath } from './condition.js';

/** A parsed `when` expression. */
export type WhenAst =
  | { readonly kind: 'or' | 'and'; readonly left: WhenAst; readonly right: WhenAst }
  | { readonly kind: 'not'; readonly operand: WhenAst }
  | { readonly kind: 'literal'; readonly value: boolean }
  | { readonly kind: 'truthy'; readonly path: string }
  | {
      readonly kind: 'compare';
      readonly path: string;
      readonly op: string;
      readonly value: string | number | boolean | null;
    };

type Token =
  | { t: 'op'; v: string }
  | { t: 'ident'; v: string }
  | { t: 'str'; v: string }
  | { t: 'int'; v: number };

const OPS = ['||', '&&', '==', '!=', '>=', '<=', '>', '<', '!', '(', ')'];

function lex(text: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (op !== undefined) {
      out.push({ t: 'op', v: op });
      i += op.length;
      continue;
    }
    if (c === '"' || c === "'") {
      let value = '';
      i++;
      while (i < text.length && text[i] !== c) {
        if (text[i] === '\\') i++;
        value += text[i] ?? '';
        i++;
      }
      if (i >= text.length) return undefined;
      i++;
      out.push({ t: 'str', v: value });
      continue;
    }
    const int = /^-?\d+/.exec(text.slice(i));
    if (int && !/[A-Za-z_.]/.test(text[i + int[0].length] ?? '')) {
      out.push({ t: 'int', v: Number(int[0]) });
      i += int[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_.-]*/.exec(text.slice(i));
    if (!word) return undefined;
    out.push({ t: 'ident', v: word[0] });
    i += word[0].length;
  }
  return out;
}

class Parser {
  #pos = 0;
  readonly #tokens: Token[];
  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }
  done(): boolean {
    return this.#pos === this.#tokens.length;
  }
  #peekOp(v: string): boolean {
    const t = this.#tokens[this.#pos];
    return t?.t === 'op' && t.v === v;
  }
  or(): WhenAst {
    let left = this.and();
    while (this.#peekOp('||')) {
      this.#pos++;
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }
  and(): WhenAst {
    let left = this.unary();
    while (this.#peekOp('&&')) {
      this.#pos++;
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }
  unary(): WhenAst {
    if (this.#peekOp('!')) {
      this.#pos++;
      return { kind: 'not', operand: this.unary() };
    }
    return this.primary();
  }
  primary(): WhenAst {
    const t = this.#tokens[this.#pos++];
    if (t?.t === 'op' && t.v === '(') {
      const inner = this.or();
      if (!this.#peekOp(')')) throw new SyntaxError('expected )');
      this.#pos++;
      return inner;
    }
    if (t?.t !== 'ident' || t.v === 'null') throw new SyntaxError('expected a name');
    if (t.v === 'true' || t.v === 'false') return { kind: 'literal', value: t.v === 'true' };
    const op = this.#tokens[this.#pos];
    if (op?.t === 'op' && ['==', '!=', '>', '<', '>=', '<='].includes(op.v)) {
      this.#pos++;
      return { kind: 'compare', path: t.v, op: op.v, value: this.value() };
    }
    return { kind: 'truthy', path: t.v };
  }
  value(): string | number | boolean | null {
    const t = this.#tokens[this.#pos++];
    if (t === undefined || t.t === 'op') throw new SyntaxError('expected a value');
    if (t.t !== 'ident') return t.v;
    if (t.v === 'true') return true;
    if (t.v === 'false') return false;
    if (t.v === 'null') return null;
    return t.v;
  }
}

/** The AST of `text`, or undefined when it does not parse. */
export function parseWhen(text: string): WhenAst | undefined {
  const tokens = lex(text);
  if (tokens === undefined || tokens.length === 0) return undefined;
  try {
    const parser = new Parser(tokens);
    const ast = parser.or();
    return parser.done() ? ast : undefined;
  } catch {
    // Malformed expression: the format reads it as false.
    return undefined;
  }
}

/** Evaluates a parsed expression over the bag. */
export function evaluateAst(ast: WhenAst, bag: Readonly<Record<string, unknown>>): boolean {
  switch (ast.kind) {
    case 'or':
      return evaluateAst(ast.left, bag) || evaluateAst(ast.right, bag);
    case 'and':
      return evaluateAst(ast.left, bag) && evaluateAst(ast.right, bag);
    case 'not':
      return !evaluateAst(ast.operand, bag);
    case 'literal':
      return ast.value;
    case 'truthy':
      return Boolean(readPath(bag, ast.path));
    default:
      return compare(readPath(bag, ast.path), ast.op, ast.value);
  }
}

/** Evaluates `when` text; text that does not parse is false. */
export function evaluateWhen(text: string, bag: Readonly<Record<string, unknown>>): boolean {
  const ast = parseWhen(text);
  return ast === undefined ? false : evaluateAst(ast, bag);
}

/** Every bag path an expression reads. */
export function whenVariables(ast: WhenAst): string[] {
  switch (ast.kind) {
    case 'or':
    case 'and':
      return [...whenVariables(ast.left), ...whenVariables(ast.right)];
    case 'not':
      return whenVariables(ast.operand);
    case 'literal':
      return [];
    default:
      return [ast.path];
  }
}

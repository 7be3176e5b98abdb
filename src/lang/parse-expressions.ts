/**
 * Expressions, types, parameters and arguments (grammar in parser.ts, §"expressions").
 *
 * Binary operators use one precedence table; postfix trailers loop; `(` starts a lambda only when
 * its matching `)` is followed by `->`. String interpolations are lexed and parsed here, in place,
 * so their spans point into the original file.
 */
import type {
  Arg,
  BinaryOp,
  Block,
  Expr,
  MatchArm,
  ObjectField,
  Param,
  Property,
  ShapeField,
  SliceBound,
  StringSegment,
  TypeNode,
} from './ast.js';
import { type Interpolation, lex, TOKEN, type Token } from './lexer.js';
import { parseBlock, startsDeclaration } from './parse-statements.js';
import { describeToken, Filled, fit, TokenStream } from './token-stream.js';

const BINARY_PRECEDENCE: Readonly<Record<string, number>> = {
  '??': 1,
  '||': 2,
  '|': 2,
  '&&': 3,
  '&': 3,
  '==': 4,
  '!=': 4,
  '<': 5,
  '<=': 5,
  '>': 5,
  '>=': 5,
  '+': 6,
  '-': 6,
  '*': 7,
  '/': 7,
  '%': 7,
};

// expr = or_expr { "??" or_expr } ; … ; mul_expr = unary { ("*"|"/"|"%") unary }
export function parseExpr(s: TokenStream): Expr {
  s.enter();
  const expr = parseBinary(s, 1);
  s.depth--;
  return expr;
}

/** BINARY_PRECEDENCE by `TokenStream.punctCode`, with the operator each token stands for. */
const BINARY_BY_CODE = new Map<number, { readonly op: BinaryOp; readonly precedence: number }>(
  Object.entries(BINARY_PRECEDENCE).map(([text, precedence]) => {
    const code =
      text.length === 1 ? text.charCodeAt(0) : text.charCodeAt(0) | (text.charCodeAt(1) << 16);
    // A lone `&`/`|` was already reported by the lexer; read it as the operator it stands for.
    const op = (text === '&' ? '&&' : text === '|' ? '||' : text) as BinaryOp;
    return [code, { op, precedence }];
  }),
);

function parseBinary(s: TokenStream, minPrecedence: number): Expr {
  let left = parseUnary(s);
  for (let chain = 1; ; chain++) {
    // The operator by char codes: this runs after every operand, and a token would be garbage.
    const found = BINARY_BY_CODE.get(s.punctCode());
    if (found === undefined || found.precedence < minPrecedence) return left;
    s.guardDepth(chain);
    s.pos++;
    s.enter();
    const right = parseBinary(s, found.precedence + 1);
    s.depth--;
    const op = found.op;
    const { file, start, line, col } = left.span;
    const span = { file, start, end: right.span.end, line, col };
    left = { kind: 'Binary', op, left, right, span };
  }
}

// unary = [ "!" | "-" ] postfix
function parseUnary(s: TokenStream): Expr {
  if (s.isPunct('!') || s.isPunct('-')) {
    const t = s.next();
    s.enter();
    const operand = parseUnary(s);
    s.depth--;
    return { kind: 'Unary', op: t.text as '!' | '-', operand, span: s.spanFrom(t) };
  }
  return parsePostfix(s);
}

// postfix = primary { "." IDENT | "?." IDENT | "?." "[" expr "]" | "(" args ")" | "[" index | slice "]"
//                     | "with" object }
function parsePostfix(s: TokenStream): Expr {
  const start = s.peek();
  let expr = parsePrimary(s);
  for (let chain = 1; ; chain++) {
    s.guardDepth(chain);
    if (s.eatPunct('.')) {
      const name = s.expectIdent("a member name after '.'");
      expr = {
        kind: 'Member',
        object: expr,
        name: name.text,
        optional: false,
        span: s.spanFrom(start),
      };
    } else if (s.eatPunct('?.')) {
      if (s.eatPunct('[')) {
        const index = parseExpr(s);
        s.expectPunct(']', 'to close the index');
        expr = { kind: 'Index', object: expr, index, optional: true, span: s.spanFrom(start) };
      } else {
        const name = s.expectIdent("a member name after '?.'");
        expr = {
          kind: 'Member',
          object: expr,
          name: name.text,
          optional: true,
          span: s.spanFrom(start),
        };
      }
    } else if (s.isPunct('(')) {
      const args = parseArgs(s);
      expr = { kind: 'Call', callee: expr, args, span: s.spanFrom(start) };
    } else if (s.isPunct('[')) {
      expr = parseIndexOrSlice(s, expr, start);
    } else if (s.isWord('with') && s.isPunct('{', 1)) {
      s.next();
      const fields = parseObjectFields(s);
      expr = { kind: 'With', object: expr, fields, span: s.spanFrom(start) };
    } else {
      return expr;
    }
  }
}

function parseIndexOrSlice(s: TokenStream, object: Expr, start: Token): Expr {
  s.expectPunct('[');
  const lo = s.isPunct('..') ? undefined : parseSliceBound(s);
  if (s.eatPunct('..')) {
    const hi = s.isPunct(']') ? undefined : parseSliceBound(s);
    s.expectPunct(']', 'to close the slice');
    return { kind: 'Slice', object, lo, hi, span: s.spanFrom(start) };
  }
  if (!lo) return s.fail(`expected an index, found ${describeToken(s.peek())}`);
  if (lo.fromEnd) s.fail("'^' counts from the end only in a slice like items[^2..]");
  s.expectPunct(']', 'to close the index');
  return { kind: 'Index', object, index: lo.value, optional: false, span: s.spanFrom(start) };
}

function parseSliceBound(s: TokenStream): SliceBound {
  const fromEnd = s.eatPunct('^');
  return { value: parseExpr(s), fromEnd };
}

// args = "(" [ arg { "," arg } [ "," ] ] ")" ; arg = IDENT ":" [ expr ] | expr
export function parseArgs(s: TokenStream): Arg[] {
  const args = new Filled<Arg>(s.room());
  s.expectPunct('(');
  while (!s.isPunct(')')) {
    const start = s.peek();
    if (s.isIdent() && s.isPunct(':', 1)) {
      s.pos += 2;
      if (s.isPunct(',') || s.isPunct(')')) {
        const value: Expr = { kind: 'Ident', name: start.text, span: s.tokenSpan(start) };
        args.add({ name: start.text, value, span: s.spanFrom(start) });
      } else {
        args.add({ name: start.text, value: parseExpr(s), span: s.spanFrom(start) });
      }
    } else {
      const value = parseExpr(s);
      args.add({ name: undefined, value, span: s.spanFromOr(start, value.span) });
    }
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct(')', 'to close the argument list');
  return args.done();
}

// primary = DURATION | STRING | NUMBER | "true" | "false" | "null" | array | object
//         | "agent" "{" props "}" | "ref" object | lambda | "if" "(" expr ")" expr "else" expr
//         | "match" expr "{" arms "}" | IDENT | "(" expr ")"
function parsePrimary(s: TokenStream): Expr {
  const t = s.peek();
  switch (t.type) {
    case TOKEN.Number:
      s.next();
      return { kind: 'Number', value: t.num ?? 0, span: s.tokenSpan(t) };
    case TOKEN.Duration:
      s.next();
      return { kind: 'Duration', ms: t.num ?? 0, text: t.text, span: s.tokenSpan(t) };
    case TOKEN.String:
      s.next();
      return parseStringToken(s, t);
    case TOKEN.Ident:
      return parseWordPrimary(s, t);
    case TOKEN.Punct:
      if (t.text === '(') return isLambdaAhead(s) ? parseLambda(s) : parseParenthesized(s);
      if (t.text === '[') return parseArray(s);
      if (t.text === '{') {
        const fields = parseObjectFields(s);
        return { kind: 'Object', fields, span: s.spanFrom(t) };
      }
      break;
  }
  return s.fail(`expected an expression, found ${describeToken(t)}`);
}

function parseWordPrimary(s: TokenStream, t: Token): Expr {
  switch (t.text) {
    case 'true':
    case 'false':
      s.next();
      return { kind: 'Bool', value: t.text === 'true', span: s.tokenSpan(t) };
    case 'null':
      s.next();
      return { kind: 'Null', span: s.tokenSpan(t) };
    case 'if':
      return parseIfExpr(s);
    case 'match':
      return parseMatch(s);
    case 'agent':
      if (s.isPunct('{', 1)) {
        s.next();
        const props = parseProperties(s);
        return { kind: 'InlineAgent', props, span: s.spanFrom(t) };
      }
      break;
    case 'ref':
      if (s.isPunct('{', 1)) {
        s.next();
        const fields = parseObjectFields(s);
        return { kind: 'Ref', fields, span: s.spanFrom(t) };
      }
      break;
  }
  s.next();
  return { kind: 'Ident', name: t.text, span: s.tokenSpan(t) };
}

function parseParenthesized(s: TokenStream): Expr {
  s.expectPunct('(');
  const inner = parseExpr(s);
  s.expectPunct(')', 'to close the parenthesis');
  return inner;
}

function isLambdaAhead(s: TokenStream): boolean {
  const close = s.matchOf(s.pos);
  const after = close < 0 ? undefined : s.tokenAt(close + 1);
  return after?.type === TOKEN.Punct && after.text === '->';
}

// lambda = "(" [ params ] ")" "->" ( expr | block )
function parseLambda(s: TokenStream): Expr {
  const start = s.peek();
  const params = parseParams(s);
  s.expectPunct('->');
  const body = parseArrowBody(s);
  return { kind: 'Lambda', params, body, span: s.spanFrom(start) };
}

/**
 * After `->`: `{` opens an object literal when it is followed by `key:` or a lone shorthand
 * field (`{x}`, `{x, y}`); anything else, including `{}`, is a statement block.
 */
export function parseArrowBody(s: TokenStream): Expr | Block {
  return isObjectAhead(s) ? parseExpr(s) : s.isPunct('{') ? parseBlock(s) : parseExpr(s);
}

function isObjectAhead(s: TokenStream): boolean {
  if (!s.isPunct('{')) return false;
  const key = s.peek(1);
  if (key.type !== TOKEN.Ident && key.type !== TOKEN.String) return false;
  if (s.isPunct(':', 2)) return true;
  return key.type === TOKEN.Ident && (s.isPunct(',', 2) || s.isPunct('}', 2));
}

function parseIfExpr(s: TokenStream): Expr {
  const start = s.next();
  s.expectPunct('(', "after 'if'");
  const cond = parseExpr(s);
  s.expectPunct(')', 'to close the condition');
  const then = parseExpr(s);
  s.expectWord('else', 'in an if-expression (it needs both branches)');
  const otherwise = parseExpr(s);
  return { kind: 'IfExpr', cond, then, else: otherwise, span: s.spanFrom(start) };
}

// match = "match" expr "{" { ( "_" | expr ) "->" expr [ "," ] } "}"
function parseMatch(s: TokenStream): Expr {
  const start = s.next();
  const subject = parseExpr(s);
  s.expectPunct('{', 'to open the match arms');
  const arms: MatchArm[] = [];
  while (!s.isPunct('}') && !s.atEnd()) {
    const armStart = s.peek();
    const wildcard = s.isWord('_') && s.isPunct('->', 1);
    if (wildcard) s.next();
    const pattern = wildcard ? undefined : parseExpr(s);
    s.expectPunct('->', 'after the match pattern');
    const value = parseExpr(s);
    arms.push({ pattern, value, span: s.spanFrom(armStart) });
    s.eatPunct(',');
  }
  s.expectPunct('}', 'to close the match');
  return { kind: 'Match', subject, arms: fit(arms), span: s.spanFrom(start) };
}

// array = "[" [ expr { "," expr } [ "," ] ] "]"
function parseArray(s: TokenStream): Expr {
  const start = s.peek();
  const items = new Filled<Expr>(s.room());
  s.expectPunct('[');
  while (!s.isPunct(']')) {
    items.add(parseExpr(s));
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct(']', 'to close the array');
  return { kind: 'Array', items: items.done(), span: s.spanFrom(start) };
}

// object = "{" [ field { [ "," ] field } [ "," ] ] "}" ; field = ( STRING | IDENT ) ":" expr | IDENT
export function parseObjectFields(s: TokenStream): ObjectField[] {
  s.expectPunct('{');
  const fields: ObjectField[] = [];
  while (!s.isPunct('}') && !s.atEnd()) {
    const start = s.peek();
    if (start.type === TOKEN.Ident && !isFieldEnd(s))
      s.failMissing("expected '}' to close the object");
    let key: string;
    if (start.type === TOKEN.String) key = s.expectPlainString('an object key').value;
    else key = s.expectIdent('an object key').text;
    if (s.eatPunct(':')) {
      fields.push({ key, value: parseExpr(s), span: s.spanFrom(start) });
    } else if (start.type === TOKEN.Ident) {
      const value: Expr = { kind: 'Ident', name: key, span: s.tokenSpan(start) };
      fields.push({ key, value, span: s.spanFrom(start) });
    } else {
      s.expectPunct(':', 'after the object key');
    }
    s.eatPunct(',');
  }
  s.expectPunct('}', 'to close the object');
  return fit(fields);
}

/** After an identifier in an object: `:` (a field) or what may follow a `{name}` shorthand. */
function isFieldEnd(s: TokenStream): boolean {
  if (s.isPunct(':', 1) || s.isPunct(',', 1) || s.isPunct('}', 1)) return true;
  const next = s.peek(1).type;
  return next === TOKEN.Ident || next === TOKEN.String;
}

// props = "{" { IDENT ":" expr [ "," ] } "}"   (newline-separated; commas tolerated)
export function parseProperties(s: TokenStream): Property[] {
  s.expectPunct('{');
  const props: Property[] = [];
  while (!s.isPunct('}') && !s.atEnd()) {
    if (startsDeclaration(s)) s.failMissing("expected '}' to close the declaration body");
    props.push(parseProperty(s));
    s.eatPunct(',');
  }
  s.expectPunct('}', 'to close the declaration body');
  return fit(props);
}

export function parseProperty(s: TokenStream): Property {
  const name = s.expectIdent('a property name');
  s.expectPunct(':', `after property '${name.text}'`);
  return { name: name.text, value: parseExpr(s), span: s.spanFrom(name) };
}

// params = "(" [ param { "," param } ] ")" ; param = IDENT [ ":" type ] [ "=" expr ]
export function parseParams(s: TokenStream): Param[] {
  const params = new Filled<Param>(s.room());
  s.expectPunct('(');
  while (!s.isPunct(')')) {
    const name = s.expectIdent('a parameter name');
    const type = s.eatPunct(':') ? parseType(s) : undefined;
    const value = s.eatPunct('=') ? parseExpr(s) : undefined;
    params.add({ name: name.text, type, default: value, span: s.spanFrom(name) });
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct(')', 'to close the parameter list');
  return params.done();
}

// type = ( IDENT | shape ) { "[" "]" } ; shape = "{" [ field { [ "," ] field } ] "}"
export function parseType(s: TokenStream): TypeNode {
  return s.nested(() => {
    const start = s.peek();
    let type: TypeNode;
    if (s.isPunct('{')) {
      type = { kind: 'ShapeType', fields: parseShapeFields(s), span: s.spanFrom(start) };
    } else {
      const name = s.expectIdent('a type');
      type = { kind: 'NamedType', name: name.text, span: s.tokenSpan(name) };
    }
    for (let chain = 1; s.isPunct('[') && s.isPunct(']', 1); chain++) {
      s.guardDepth(chain);
      s.pos += 2;
      type = { kind: 'ArrayType', element: type, span: s.spanFrom(start) };
    }
    return type;
  });
}

function parseShapeFields(s: TokenStream): ShapeField[] {
  s.expectPunct('{');
  const fields: ShapeField[] = [];
  while (!s.isPunct('}') && !s.atEnd()) {
    const name = s.expectIdent('a field name');
    const optional = s.eatPunct('?');
    s.expectPunct(':', `after field '${name.text}'`);
    fields.push({ name: name.text, optional, type: parseType(s), span: s.spanFrom(name) });
    s.eatPunct(',');
  }
  s.expectPunct('}', 'to close the object type');
  return fit(fields);
}

/** Turns a string token into a String node, parsing each `${…}` as an expression in place. */
function parseStringToken(s: TokenStream, t: Token): Expr {
  const segments: StringSegment[] = (t.parts ?? ['']).map((part) =>
    typeof part === 'string' ? part : parseInterpolation(s, part),
  );
  return { kind: 'String', segments, triple: t.triple ?? false, span: s.tokenSpan(t) };
}

/** `${name}` and `${a.b.c}`, by far the most common interpolations, need no sub-parser. */
/** Words that are literals, not names, at the start of an interpolation. */
const LITERAL_WORDS = new Set(['true', 'false', 'null']);
const SIMPLE_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

function parseInterpolation(s: TokenStream, part: Interpolation): Expr {
  const source = s.text.slice(part.start, part.end);
  if (
    !part.escaped &&
    SIMPLE_PATH.test(source) &&
    !LITERAL_WORDS.has(source.split('.')[0] as string)
  ) {
    return simplePath(s, part, source);
  }
  const lexed = part.escaped
    ? lex(s.text.slice(part.start, part.end).replace(/\\(["\\])/g, '$1'), s.file, undefined, part)
    : lex(s.text, s.file, part);
  for (const d of lexed.diagnostics)
    s.report(part.escaped ? { ...d, span: { ...d.span, ...positionOf(part) } } : d);
  const sub = new TokenStream(lexed.table, s.file, s.limits, s.diagnostics, s.depth);
  if (sub.atEnd()) {
    const at = sub.peek();
    const empty = {
      file: s.file,
      start: part.start - 2,
      end: part.end + 1,
      line: at.line,
      col: part.col - 2,
    };
    sub.fail("empty '${}' in string: put an expression between the braces", empty);
  }
  const expr = parseExpr(sub);
  if (!sub.atEnd())
    sub.fail(`expected '}' to end the interpolation, found ${describeToken(sub.peek())}`);
  return expr;
}

function simplePath(s: TokenStream, part: Interpolation, source: string): Expr {
  const { file } = s;
  const { start, line, col } = part;
  let offset = 0;
  let expr: Expr | undefined;
  for (const name of source.split('.')) {
    const end = start + offset + name.length;
    if (!expr) {
      expr = { kind: 'Ident', name, span: { file, start, end, line, col } };
    } else {
      expr = {
        kind: 'Member',
        object: expr,
        name,
        optional: false,
        span: { file, start, end, line, col },
      };
    }
    offset += name.length + 1;
  }
  return expr as Expr;
}

/** Legacy `"${f(\"a\")}"` is lexed from unescaped text, so its tokens all report the interpolation's place. */
function positionOf(part: Interpolation) {
  return { start: part.start, end: part.end, line: part.line, col: part.col };
}

/**
 * Blocks and statements (grammar in parser.ts, §"statements").
 *
 * A block is the unit of error recovery: a bad statement is reported, the parser skips to the
 * next line inside the same block, and carries on, so one file yields all of its errors.
 */
import type {
  Block,
  DestructureField,
  Expr,
  ExprOf,
  LValue,
  Property,
  Stmt,
  StmtOf,
  WaitMode,
} from './ast.js';
import { DIAGNOSTIC_CODES, diagnostic } from './diagnostics.js';
import { TOKEN, type Token } from './lexer.js';
import { parseExpr, parseProperty } from './parse-expressions.js';
import { describeToken, fit, ParseError, type TokenStream } from './token-stream.js';

/** Words that open a pipeline member or a declaration: seeing one inside a block means a `}` is missing. */
const MEMBER_WORDS = new Set(['step', 'parallel', 'entry']);
const DECLARATION_WORDS = new Set([
  'agent',
  'pipeline',
  'workflow',
  'tool',
  'prompt',
  'memory',
  'export',
  'import',
  'use',
  'loop',
  'enum',
  'schema',
  'skill',
  'extension',
  'router',
  'test',
  'partial',
  'mcp_server',
]);

// block = "{" { statement } "}"
export function parseBlock(s: TokenStream): Block {
  return s.nested(() => {
    const open = s.peek();
    s.expectPunct('{', 'to open a block');
    const openIndex = s.pos - 1;
    const body: Stmt[] = [];
    while (!s.isPunct('}')) {
      if (s.atEnd() || startsEnclosingMember(s)) {
        s.report(unclosedBlock(s, open));
        return { kind: 'Block', body: fit(body), span: s.spanFrom(open) };
      }
      const before = s.pos;
      const depth = s.depth;
      try {
        body.push(parseStatement(s));
      } catch (e) {
        if (e instanceof ParseError && isAtMemberStart(s, e)) {
          // The statement ran into the next step or declaration: the block lacks its '}'.
          s.report(e.diagnostic);
          s.depth = depth;
          return { kind: 'Block', body: fit(body), span: s.spanFrom(open) };
        }
        const placeholder = declarationPlaceholder(s, before);
        if (placeholder) body.push(placeholder);
        s.recoverInBlock(e, openIndex, before, depth);
      }
    }
    s.next();
    return { kind: 'Block', body: fit(body), span: s.spanFrom(open) };
  });
}

/**
 * A `var x …`/`const x …` that failed to parse still declares `x` (as null), so the error is
 * reported once and not again at every later use of `x`.
 */
export function declarationPlaceholder(s: TokenStream, at: number): StmtOf<'VarDecl'> | undefined {
  const keyword = s.tokenAt(at);
  const name = s.tokenAt(at + 1);
  if (keyword.type !== TOKEN.Ident || name.type !== TOKEN.Ident) return undefined;
  if (!['var', 'const', 'mem', 'input'].includes(keyword.text)) return undefined;
  const span = s.tokenSpan(name);
  const value: Expr = { kind: 'Null', span };
  return {
    kind: 'VarDecl',
    name: name.text,
    isConst: keyword.text === 'const',
    value,
    span,
    nameSpan: span,
  };
}

function isAtMemberStart(s: TokenStream, e: ParseError): boolean {
  return e.diagnostic.span.start === s.peek().start && startsEnclosingMember(s);
}

function startsEnclosingMember(s: TokenStream): boolean {
  const t = s.peek();
  if (t.type !== TOKEN.Ident || !s.isIdent(1)) return false;
  if (MEMBER_WORDS.has(t.text))
    return s.isPunct('{', 2) || s.isWord('timeout', 2) || s.isWord('step', 1);
  return startsDeclaration(s);
}

/** A declaration keyword at the start of a line in column 1: a new top-level declaration. */
export function startsDeclaration(s: TokenStream): boolean {
  const t = s.peek();
  return t.type === TOKEN.Ident && t.col === 1 && DECLARATION_WORDS.has(t.text) && s.isIdent(1);
}

function unclosedBlock(s: TokenStream, open: Token) {
  const found = s.peek();
  const message = `expected '}' to close the block opened at line ${open.line}, found ${describeToken(found)}`;
  return diagnostic(DIAGNOSTIC_CODES.SYNTAX, message, s.missingSpan());
}

/** A block, or a single statement wrapped in one (`if (x) goto A else goto B`). */
function parseBody(s: TokenStream): Block {
  if (s.isPunct('{')) return parseBlock(s);
  const start = s.peek();
  const stmt = parseStatement(s);
  return { kind: 'Block', body: [stmt], span: s.spanFrom(start) };
}

// statement = const_decl | var_decl | "return" [expr] | "break" [expr] | "goto" target | spawn | wait
//           | "if" "(" expr ")" body [ "else" body ] | "while" "(" expr ")" body
//           | "for" "(" "var" IDENT "in" expr ")" body | "try" block "catch" ["(" IDENT ")"] block
//             ["finally" block] | destructure | lvalue ( "=" | "+=" ) expr | expr
export function parseStatement(s: TokenStream): Stmt {
  return s.nested(() => {
    const t = s.peek();
    if (t.type === TOKEN.Ident) {
      switch (t.text) {
        case 'var':
        case 'const':
          return parseVarDecl(s);
        case 'return':
        case 'break':
          return parseExit(s);
        case 'goto':
          return parseGoto(s);
        case 'spawn':
          return parseSpawn(s);
        case 'wait':
          return parseWait(s);
        case 'if':
          return parseIf(s);
        case 'while':
          return parseWhile(s);
        case 'for':
          return parseFor(s);
        case 'try':
          return parseTry(s);
        case 'self':
          if (s.isPunct('.', 1) && s.isPunct('{', 2)) {
            s.pos += 2;
            return parseDestructure(s, 'self', t);
          }
      }
    }
    if (s.isPunct('{')) return parseDestructure(s, 'assign', t);
    return parseAssignOrExpr(s);
  });
}

// var_decl = ( "var" | "const" ) ( IDENT | destructure_pattern ) "=" expr
export function parseVarDecl(s: TokenStream): Stmt {
  const start = s.next();
  const isConst = start.text === 'const';
  if (s.isPunct('{')) return parseDestructure(s, isConst ? 'const' : 'var', start);
  const name = s.expectIdent(`a variable name after '${start.text}'`);
  s.expectPunct('=', `after '${start.text} ${name.text}' (a declaration needs a value)`);
  const value = parseExpr(s);
  return {
    kind: 'VarDecl',
    name: name.text,
    isConst,
    value,
    span: s.spanFrom(start),
    nameSpan: s.tokenSpan(name),
  };
}

// destructure = "{" IDENT [ ":" IDENT ] { "," … } "}" "=" expr
function parseDestructure(
  s: TokenStream,
  mode: 'var' | 'const' | 'assign' | 'self',
  start: Token,
): Stmt {
  s.expectPunct('{');
  const fields: DestructureField[] = [];
  while (!s.isPunct('}')) {
    const key = s.expectIdent('a field name to destructure');
    const name = s.eatPunct(':') ? s.expectIdent('a variable name').text : key.text;
    fields.push({ key: key.text, name, span: s.spanFrom(key) });
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct('}', 'to close the destructuring pattern');
  s.expectPunct('=', 'after the destructuring pattern');
  const value = parseExpr(s);
  return { kind: 'Destructure', mode, fields: fit(fields), value, span: s.spanFrom(start) };
}

/** `return`/`break` take a value only when it starts on the same line. */
function parseExit(s: TokenStream): Stmt {
  const start = s.next();
  const next = s.peek();
  const hasValue = next.line === start.line && next.type !== TOKEN.EOF && !s.isPunct('}');
  const value = hasValue ? parseExpr(s) : undefined;
  const kind = start.text === 'return' ? 'Return' : 'Break';
  return { kind, value, span: s.spanFrom(start) };
}

// goto = "goto" ( IDENT | "nameof" "(" IDENT ")" )
function parseGoto(s: TokenStream): Stmt {
  const start = s.next();
  let target: Token;
  if (s.isWord('nameof') && s.isPunct('(', 1)) {
    s.pos += 2;
    target = s.expectIdent('a step name');
    s.expectPunct(')', 'to close nameof(');
  } else {
    target = s.expectIdent("a step name after 'goto'");
  }
  return {
    kind: 'Goto',
    target: target.text,
    targetSpan: s.tokenSpan(target),
    span: s.spanFrom(start),
  };
}

// spawn = "spawn" IDENT "=" expr [ "for" IDENT "in" expr ]
function parseSpawn(s: TokenStream): Stmt {
  const start = s.next();
  const name = s.expectIdent("a handle name after 'spawn'");
  s.expectPunct('=', `after 'spawn ${name.text}'`);
  const call = parseExpr(s);
  let forName: string | undefined;
  let forIterable: Expr | undefined;
  if (s.eatWord('for')) {
    forName = s.expectIdent("a loop variable after 'for'").text;
    s.expectWord('in', `after 'for ${forName}'`);
    forIterable = parseExpr(s);
  }
  return { kind: 'Spawn', name: name.text, call, forName, forIterable, span: s.spanFrom(start) };
}

// wait = "wait" [ "any" | NUMBER "of" ] IDENT { "," IDENT } { [ "," ] ( "timeout" | "on_error" ) ":" expr }
function parseWait(s: TokenStream): Stmt {
  const start = s.next();
  let mode: WaitMode = 'all';
  if (s.isWord('any') && s.isIdent(1) && !s.isPunct(':', 1)) {
    s.next();
    mode = 'any';
  } else if (s.peek().type === TOKEN.Number && s.isWord('of', 1)) {
    mode = s.next().num ?? 0;
    s.next();
  }
  const handles: ExprOf<'Ident'>[] = [];
  do {
    if (s.isIdent() && s.isPunct(':', 1)) break;
    const h = s.expectIdent('a spawn handle to wait for');
    handles.push({ kind: 'Ident', name: h.text, span: s.tokenSpan(h) });
  } while (s.eatPunct(','));
  if (handles.length === 0)
    s.fail(`expected a spawn handle to wait for, found ${describeToken(s.peek())}`);
  const options: Property[] = [];
  while ((s.isWord('timeout') || s.isWord('on_error')) && s.isPunct(':', 1)) {
    options.push(parseProperty(s));
    s.eatPunct(',');
  }
  return {
    kind: 'Wait',
    mode,
    handles: fit(handles),
    options: fit(options),
    span: s.spanFrom(start),
  };
}

function parseCondition(s: TokenStream, keyword: string): Expr {
  s.expectPunct('(', `after '${keyword}'`);
  const cond = parseExpr(s);
  s.expectPunct(')', `to close the ${keyword} condition`);
  return cond;
}

function parseIf(s: TokenStream): Stmt {
  const start = s.next();
  const cond = parseCondition(s, 'if');
  const then = parseBody(s);
  const otherwise = s.eatWord('else') ? parseBody(s) : undefined;
  return { kind: 'If', cond, then, else: otherwise, span: s.spanFrom(start) };
}

function parseWhile(s: TokenStream): Stmt {
  const start = s.next();
  const cond = parseCondition(s, 'while');
  const body = parseBody(s);
  return { kind: 'While', cond, body, span: s.spanFrom(start) };
}

// for = "for" "(" [ "var" ] IDENT "in" expr ")" body   (parentheses optional)
function parseFor(s: TokenStream): Stmt {
  const start = s.next();
  const parenthesized = s.eatPunct('(');
  s.eatWord('var');
  const name = s.expectIdent("a loop variable after 'for'");
  s.expectWord('in', `after 'for (var ${name.text}'`);
  const iterable = parseExpr(s);
  if (parenthesized) s.expectPunct(')', 'to close the for header');
  const body = parseBody(s);
  return { kind: 'ForIn', name: name.text, iterable, body, span: s.spanFrom(start) };
}

function parseTry(s: TokenStream): Stmt {
  const start = s.next();
  const body = parseBlock(s);
  s.expectWord('catch', 'after the try block (a try needs a catch block)');
  let catchName: string | undefined;
  if (s.eatPunct('(')) {
    catchName = s.expectIdent('a name for the caught error').text;
    s.expectPunct(')', 'to close catch (');
  }
  const handler = parseBlock(s);
  const finalizer = s.eatWord('finally') ? parseBlock(s) : undefined;
  return { kind: 'Try', body, catchName, handler, finalizer, span: s.spanFrom(start) };
}

function parseAssignOrExpr(s: TokenStream): Stmt {
  const start = s.peek();
  const expr = parseExpr(s);
  if (s.isPunct('=') || s.isPunct('+=')) {
    const op = s.next();
    if (!isLValue(expr)) {
      s.fail(
        `cannot assign to this expression: assign to a variable, a .field or an [index]`,
        start,
      );
    }
    const value = parseExpr(s);
    return {
      kind: 'Assign',
      target: expr,
      op: op.text as '=' | '+=',
      value,
      span: s.spanFrom(start),
    };
  }
  return { kind: 'ExprStmt', expr, span: s.spanFromOr(start, expr.span) };
}

function isLValue(e: Expr): e is LValue {
  if (e.kind === 'Ident') return true;
  if (e.kind === 'Member' || e.kind === 'Index') return !e.optional && isLValue(e.object);
  return false;
}

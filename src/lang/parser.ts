/**
 * The MHL parser: tokens → `Program`, with every syntax error collected as a diagnostic.
 *
 * A hand-written recursive-descent parser over the grammar below (the digest's EBNF with the
 * legacy forms the public samples still use). Recovery happens at three levels: statements
 * inside a block, members inside a pipeline, and top-level declarations, so one file reports
 * all its errors. `parse` never throws for any input.
 *
 * ```ebnf
 * program     = { [ "export" ] declaration } ;
 * declaration = import | use | agent | prompt | skill | schema | memory | tool | extension
 *             | mcp_server | extensible | router | type_alias | enum | pipeline | test ;
 * import      = "import" ( "{" item { "," item } "}" "from" STRING | STRING [ "as" IDENT ] ) ;
 * use         = "use" "{" item { "," item } "}" "from" STRING ;          (* legacy import *)
 * item        = IDENT [ "as" IDENT ] ;
 * agent       = "agent" IDENT props ;             props = "{" { IDENT ":" expr [ "," ] } "}" ;
 * prompt      = "prompt" IDENT params ( "from" STRING | "{" expr "}" ) ;
 * skill       = "skill" IDENT ( "from" STRING | "{" … "}" ) ;          (* block form: legacy *)
 * schema      = "schema" IDENT "from" STRING ;
 * memory      = "memory" IDENT props ;
 * tool        = "tool" IDENT "{" { var_decl | const_decl | method } "}" ;
 * method      = IDENT params [ ":" type ] "->" ( expr | block ) ;
 * extension   = "extension" IDENT IDENT props ;   mcp_server = ( "mcp_server" | "a2a_agent" ) IDENT props ;
 * extensible  = "extensible" IDENT "{" { IDENT ":" expr | "properties" ":" shape
 *             | IDENT params "->" type } "}" ;
 * router      = "router" IDENT props ;
 * type_alias  = "type" IDENT "=" type ;
 * enum        = "enum" IDENT "{" [ IDENT { [ "," ] IDENT } [ "," ] ] "}" ;
 * test        = "test" IDENT "{" { "describe" IDENT block } "}" ;
 * pipeline    = see parse-pipeline.ts ;   statements: parse-statements.ts ;
 * expressions and types: parse-expressions.ts
 * ```
 */
import type { Decl, DescribeCase, ImportItem, Program, Property, ToolMethod } from './ast.js';
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic } from './diagnostics.js';
import { lex, TOKEN, type Token } from './lexer.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import {
  parseArrowBody,
  parseExpr,
  parseParams,
  parseProperties,
  parseProperty,
  parseType,
} from './parse-expressions.js';
import { parsePipeline } from './parse-pipeline.js';
import { parseBlock, parseVarDecl } from './parse-statements.js';
import { AbortParse, describeToken, ParseError, TokenStream } from './token-stream.js';

export interface ParseResult {
  readonly program: Program;
  readonly diagnostics: Diagnostic[];
}

/** The words that open a top-level declaration (the editor vocabulary lists them too). */
export const DECLARATION_KEYWORDS = [
  'export',
  'import',
  'use',
  'agent',
  'prompt',
  'skill',
  'schema',
  'memory',
  'tool',
  'extension',
  'mcp_server',
  'a2a_agent',
  'extensible',
  'router',
  'type',
  'enum',
  'pipeline',
  'workflow',
  'loop',
  'partial',
  'test',
] as const;
const DECLARATION_START: ReadonlySet<string> = new Set(DECLARATION_KEYWORDS);

/** Parses one source file. Never throws: every problem is a diagnostic. */
export function parse(text: string, file: string, limits: Limits = DEFAULT_LIMITS): ParseResult {
  if (text.length > limits.maxSourceBytes) {
    const span = { file, start: 0, end: 1, line: 1, col: 1 };
    const message = `file is larger than ${limits.maxSourceBytes} bytes; split it into modules`;
    return {
      program: { file, decls: [] },
      diagnostics: [diagnostic(DIAGNOSTIC_CODES.LIMIT_EXCEEDED, message, span)],
    };
  }
  const lexed = lex(text, file);
  const s = new TokenStream(lexed.table, file, limits, [...lexed.diagnostics]);
  const decls: Decl[] = [];
  try {
    while (!s.atEnd()) {
      const before = s.pos;
      try {
        decls.push(parseDeclaration(s));
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        s.depth = 0;
        s.report(e.diagnostic);
        if (s.diagnostics.length >= limits.maxDiagnosticsPerFile) throw new AbortParse();
        syncTopLevel(s, before);
      }
    }
  } catch (e) {
    if (!(e instanceof AbortParse)) throw e;
    if (e.diagnostic) s.report(e.diagnostic);
    else if (!e.quiet) {
      const message = 'too many errors; stopped reading this file';
      s.report(diagnostic(DIAGNOSTIC_CODES.LIMIT_EXCEEDED, message, s.tokenSpan(s.peek())));
    }
  }
  return { program: { file, decls }, diagnostics: s.diagnostics };
}

/** Skips to the next token that can start a declaration at the start of a line at top level. */
function syncTopLevel(s: TokenStream, before: number): void {
  if (s.pos === before) s.next();
  while (!s.atEnd()) {
    const t = s.peek();
    const previous = s.previous();
    const startsLine = t.line > previous.line || s.pos === 0;
    if (
      startsLine &&
      s.enclosing[s.pos] === -1 &&
      t.type === TOKEN.Ident &&
      DECLARATION_START.has(t.text)
    )
      return;
    s.next();
  }
}

function parseDeclaration(s: TokenStream): Decl {
  const start = s.peek();
  const exported = s.eatWord('export');
  const partial = s.eatWord('partial');
  const loop = s.eatWord('loop');
  const t = s.peek();
  if (t.type === TOKEN.Ident && (t.text === 'pipeline' || t.text === 'workflow')) {
    return parsePipeline(s, start, { exported, partial, loop });
  }
  if (partial || loop) s.fail(`expected 'pipeline' or 'workflow', found ${describeToken(t)}`);
  if (t.type === TOKEN.Ident) {
    switch (t.text) {
      case 'import':
      case 'use':
        return parseImport(s, start);
      case 'agent':
      case 'memory':
      case 'router':
        return parsePropertyDecl(s, start, exported);
      case 'prompt':
        return parsePrompt(s, start, exported);
      case 'skill':
        return parseSkill(s, start, exported);
      case 'schema':
        return parseSchema(s, start, exported);
      case 'tool':
        return parseTool(s, start, exported);
      case 'extension':
      case 'mcp_server':
      case 'a2a_agent':
        return parseExtension(s, start, exported);
      case 'extensible':
        return parseExtensible(s, start, exported);
      case 'type':
        return parseTypeAlias(s, start, exported);
      case 'enum':
        return parseEnum(s, start, exported);
      case 'test':
        return parseTest(s, start, exported);
    }
  }
  return s.fail(
    `expected a declaration (agent, prompt, tool, memory, pipeline, workflow, import, …), found ${describeToken(t)}`,
  );
}

function named(s: TokenStream, start: Token, exported: boolean, what: string) {
  const keyword = s.next();
  const name = s.expectIdent(`${what} name after '${keyword.text}'`);
  return { name: name.text, exported, nameSpan: s.tokenSpan(name), keyword, start };
}

function finish(s: TokenStream, h: ReturnType<typeof named>) {
  return { name: h.name, exported: h.exported, nameSpan: h.nameSpan, span: s.spanFrom(h.start) };
}

// import = "import" ( "{" items "}" "from" STRING | STRING [ "as" IDENT ] ) ; use = "use" "{" items "}" "from" STRING
function parseImport(s: TokenStream, start: Token): Decl {
  const keyword = s.next();
  if (keyword.text === 'import' && s.peek().type === TOKEN.String) {
    const path = s.expectPlainString('an import path');
    const namespace = s.eatWord('as')
      ? s.expectIdent("a namespace name after 'as'").text
      : undefined;
    const form = namespace ? 'namespace' : 'file';
    const pathSpan = s.tokenSpan(path.token);
    return {
      kind: 'Import',
      form,
      items: [],
      path: path.value,
      pathSpan,
      namespace,
      span: s.spanFrom(start),
    };
  }
  s.expectPunct('{', `after '${keyword.text}' (e.g. ${keyword.text} { Name } from "file.mh")`);
  const items: ImportItem[] = [];
  while (!s.isPunct('}')) {
    const name = s.expectIdent('a declaration name to import');
    const alias = s.eatWord('as') ? s.expectIdent("an alias after 'as'").text : undefined;
    items.push({ name: name.text, alias, span: s.spanFrom(name) });
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct('}', 'to close the import list');
  s.expectWord('from', 'after the import list');
  const path = s.expectPlainString('an import path');
  const form = keyword.text === 'use' ? 'use' : 'named';
  const pathSpan = s.tokenSpan(path.token);
  return {
    kind: 'Import',
    form,
    items,
    path: path.value,
    pathSpan,
    namespace: undefined,
    span: s.spanFrom(start),
  };
}

function parsePropertyDecl(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(
    s,
    start,
    exported,
    `${s.peek().text === 'agent' ? 'an agent' : `a ${s.peek().text}`}`,
  );
  const props = parseProperties(s);
  const kind =
    h.keyword.text === 'agent' ? 'Agent' : h.keyword.text === 'memory' ? 'Memory' : 'Router';
  return { kind, props, ...finish(s, h) };
}

// prompt = "prompt" IDENT params ( "from" STRING | "{" expr "}" )
function parsePrompt(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a prompt');
  const params = s.isPunct('(') ? parseParams(s) : [];
  if (s.eatWord('from')) {
    const from = s.expectPlainString('a prompt file path');
    return {
      kind: 'Prompt',
      params,
      body: undefined,
      from: from.value,
      fromSpan: s.tokenSpan(from.token),
      ...finish(s, h),
    };
  }
  s.expectPunct('{', 'to open the prompt body (or use \'from "file.md"\')');
  const body = parseExpr(s);
  s.expectPunct('}', 'to close the prompt body (a prompt body is one string expression)');
  return { kind: 'Prompt', params, body, from: undefined, fromSpan: undefined, ...finish(s, h) };
}

// skill = "skill" IDENT ( "from" STRING | "{" … "}" )
function parseSkill(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a skill');
  if (s.eatWord('from')) {
    const from = s.expectPlainString('a skill file path');
    return {
      kind: 'Skill',
      from: from.value,
      fromSpan: s.tokenSpan(from.token),
      props: [],
      ...finish(s, h),
    };
  }
  if (!s.isPunct('{'))
    s.fail(`expected 'from "SKILL.md"' after skill ${h.name}, found ${describeToken(s.peek())}`);
  s.skipGroup();
  return { kind: 'Skill', from: undefined, fromSpan: undefined, props: [], ...finish(s, h) };
}

function parseSchema(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a schema');
  s.expectWord('from', `after schema ${h.name} (e.g. schema ${h.name} from "file.json")`);
  const from = s.expectPlainString('a schema file path');
  return { kind: 'Schema', from: from.value, fromSpan: s.tokenSpan(from.token), ...finish(s, h) };
}

// tool = "tool" IDENT "{" { var_decl | const_decl | method } "}"
function parseTool(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a tool');
  s.expectPunct('{', 'to open the tool body');
  const methods: ToolMethod[] = [];
  const vars = [];
  while (!s.isPunct('}')) {
    if (s.isWord('var') || s.isWord('const')) {
      const decl = parseVarDecl(s);
      if (decl.kind !== 'VarDecl')
        s.fail('destructuring is not allowed for tool variables', s.previous());
      vars.push(decl);
    } else {
      methods.push(parseMethod(s, true));
    }
    s.eatPunct(',');
  }
  s.next();
  return { kind: 'Tool', methods, vars, ...finish(s, h) };
}

// method = IDENT params [ ":" type ] "->" ( expr | block )     (signature only in extensible)
function parseMethod(s: TokenStream, withBody: boolean): ToolMethod {
  const name = s.expectIdent('a method name');
  if (!s.isPunct('('))
    s.fail(`expected '(' after method name '${name.text}', found ${describeToken(s.peek())}`);
  const params = parseParams(s);
  const returnType = s.eatPunct(':') ? parseType(s) : undefined;
  s.expectPunct('->', `after the parameters of '${name.text}'`);
  if (!withBody) {
    const type = parseType(s);
    return {
      kind: 'Method',
      name: name.text,
      params,
      returnType: type,
      body: { kind: 'Null', span: type.span },
      span: s.spanFrom(name),
    };
  }
  const body = parseArrowBody(s);
  return { kind: 'Method', name: name.text, params, returnType, body, span: s.spanFrom(name) };
}

// extension = "extension" IDENT IDENT props ; mcp_server = ( "mcp_server" | "a2a_agent" ) IDENT props
function parseExtension(s: TokenStream, start: Token, exported: boolean): Decl {
  const keyword = s.peek().text;
  const legacy = keyword !== 'extension';
  let extKind = keyword === 'mcp_server' ? 'mcp' : 'a2a';
  if (!legacy) {
    s.next();
    extKind = s.expectIdent("an extension kind after 'extension' (e.g. mcp)").text;
    s.pos--;
  }
  const h = named(s, start, exported, 'an extension');
  const props = parseProperties(s);
  return { kind: 'Extension', extKind, props, legacy, ...finish(s, h) };
}

function parseExtensible(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'an extensible kind');
  s.expectPunct('{', 'to open the extensible body');
  const props: Property[] = [];
  const methods: ToolMethod[] = [];
  while (!s.isPunct('}') && !s.atEnd()) {
    if (s.isWord('properties') && s.isPunct(':', 1)) {
      s.pos += 2;
      parseType(s);
    } else if (s.isIdent() && s.isPunct('(', 1)) {
      methods.push(parseMethod(s, false));
    } else {
      props.push(parseProperty(s));
    }
    s.eatPunct(',');
  }
  s.expectPunct('}', 'to close the extensible body');
  return { kind: 'Extensible', extKind: h.name, props, methods, ...finish(s, h) };
}

function parseTypeAlias(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a type');
  s.expectPunct('=', `after 'type ${h.name}'`);
  const type = parseType(s);
  return { kind: 'TypeAlias', type, ...finish(s, h) };
}

function parseEnum(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'an enum');
  s.expectPunct('{', 'to open the enum variants');
  const variants = [];
  while (!s.isPunct('}')) {
    const v = s.expectIdent('an enum variant');
    variants.push({ name: v.text, span: s.tokenSpan(v) });
    s.eatPunct(',');
  }
  s.next();
  return { kind: 'Enum', variants, ...finish(s, h) };
}

// test = "test" IDENT "{" { "describe" IDENT block } "}"
function parseTest(s: TokenStream, start: Token, exported: boolean): Decl {
  const h = named(s, start, exported, 'a test');
  s.expectPunct('{', 'to open the test body');
  const cases: DescribeCase[] = [];
  while (!s.isPunct('}')) {
    const d = s.expectWord('describe', 'inside a test');
    const name = s.expectIdent("a case name after 'describe'");
    cases.push({ name: name.text, body: parseBlock(s), span: s.spanFrom(d) });
  }
  s.next();
  return { kind: 'Test', cases, ...finish(s, h) };
}

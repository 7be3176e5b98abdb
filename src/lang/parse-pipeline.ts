/**
 * Pipeline and workflow declarations (grammar in parser.ts, §"pipelines").
 *
 * Members are sorted here into inputs, variables, properties and steps, in source order, so
 * the interpreter never re-scans a member list.
 */
import type { DeclOf, InputDecl, ParallelGroup, PipelineVar, Property, Step } from './ast.js';
import { TOKEN, type Token } from './lexer.js';
import { parseExpr, parseProperty, parseType } from './parse-expressions.js';
import { declarationPlaceholder, parseBlock, parseVarDecl } from './parse-statements.js';
import { describeToken, type TokenStream } from './token-stream.js';

interface Modifiers {
  readonly exported: boolean;
  readonly partial: boolean;
  readonly loop: boolean;
}

// pipeline = [ "partial" ] [ "loop" ] ( "pipeline" | "workflow" ) IDENT
//            [ "(" [ sig_param { "," sig_param } ] ")" [ ":" type ] ] [ "max" NUMBER ]
//            "{" { pipeline_member } "}" ;   sig_param = IDENT ":" type [ "=" expr ]
export function parsePipeline(s: TokenStream, start: Token, mods: Modifiers): DeclOf<'Pipeline'> {
  const keyword = s.next();
  const name = s.expectIdent(`a name after '${keyword.text}'`);
  const signature = s.isPunct('(') ? parseSignature(s) : undefined;
  let maxIterations: number | undefined;
  if (s.eatWord('max')) {
    const n = s.peek();
    if (n.type !== TOKEN.Number) s.fail(`expected a number after 'max', found ${describeToken(n)}`);
    s.next();
    maxIterations = n.num;
  }
  const members = parseMembers(s);
  // Signature parameters are inputs (the same objects, listed first), so validation, schemas
  // and name checks treat `pipeline P(x: T)` exactly as `input x: T`.
  if (signature) members.inputs.unshift(...signature.params);
  return {
    kind: 'Pipeline',
    name: name.text,
    exported: mods.exported,
    flavor: keyword.text === 'workflow' ? 'workflow' : 'pipeline',
    loop: mods.loop,
    partial: mods.partial,
    signature,
    maxIterations,
    ...members,
    span: s.spanFrom(start),
    nameSpan: s.tokenSpan(name),
  };
}

function parseSignature(s: TokenStream): NonNullable<DeclOf<'Pipeline'>['signature']> {
  const open = s.peek();
  s.expectPunct('(');
  const params: InputDecl[] = [];
  while (!s.isPunct(')')) {
    const name = s.expectIdent('a parameter name');
    s.expectPunct(':', 'after the parameter name (a pipeline parameter needs a type)');
    const type = parseType(s);
    const value = s.eatPunct('=') ? parseExpr(s) : undefined;
    params.push({ name: name.text, type, default: value, span: s.spanFrom(name) });
    if (!s.eatPunct(',')) break;
  }
  s.expectPunct(')', 'to close the pipeline signature');
  const span = s.spanFrom(open);
  const returns = s.eatPunct(':') ? parseType(s) : undefined;
  return { params, returns, span };
}

interface Members {
  inputs: InputDecl[];
  vars: PipelineVar[];
  props: Property[];
  steps: (Step | ParallelGroup)[];
}

// pipeline_member = "input" IDENT ":" type [ "=" expr ] | const_decl | var_decl | "mem" IDENT "=" expr
//                 | "parallel" IDENT [ "timeout" DURATION ] "{" { step } "}" | step | property
function parseMembers(s: TokenStream): Members {
  const members: Members = { inputs: [], vars: [], props: [], steps: [] };
  s.expectPunct('{', 'to open the pipeline body');
  const openIndex = s.pos - 1;
  while (!s.isPunct('}')) {
    if (s.atEnd()) s.failMissing("expected '}' to close the pipeline");
    const before = s.pos;
    const depth = s.depth;
    try {
      parseMember(s, members);
    } catch (e) {
      const placeholder = declarationPlaceholder(s, before);
      if (placeholder) {
        const { name, value, span, isConst } = placeholder;
        members.vars.push({ name, storage: isConst ? 'const' : 'var', value, span });
      }
      s.recoverInBlock(e, openIndex, before, depth);
    }
    s.eatPunct(',');
  }
  s.next();
  return members;
}

function parseMember(s: TokenStream, m: Members): void {
  const t = s.peek();
  if (t.type !== TOKEN.Ident) {
    s.fail(
      `expected a pipeline member (input, var, const, mem, step, parallel or a property), found ${describeToken(t)}`,
    );
  }
  if (s.isPunct(':', 1)) {
    m.props.push(parseProperty(s));
    return;
  }
  switch (t.text) {
    case 'input':
      m.inputs.push(parseInput(s));
      return;
    case 'var':
    case 'const': {
      const decl = parseVarDecl(s);
      if (decl.kind !== 'VarDecl') s.fail('destructuring is not allowed for pipeline variables', t);
      m.vars.push({
        name: decl.name,
        storage: decl.isConst ? 'const' : 'var',
        value: decl.value,
        span: decl.span,
      });
      return;
    }
    case 'mem': {
      s.next();
      const name = s.expectIdent("a variable name after 'mem'");
      s.expectPunct('=', `after 'mem ${name.text}' (a mem variable needs an initial value)`);
      m.vars.push({ name: name.text, storage: 'mem', value: parseExpr(s), span: s.spanFrom(t) });
      return;
    }
    case 'parallel':
      m.steps.push(parseParallel(s));
      return;
    case 'step':
    case 'entry':
      m.steps.push(parseStep(s));
      return;
  }
  s.fail(
    `expected a pipeline member (input, var, const, mem, step, parallel or a property), found ${describeToken(t)}`,
  );
}

function parseInput(s: TokenStream): InputDecl {
  const start = s.next();
  const name = s.expectIdent("an input name after 'input'");
  s.expectPunct(
    ':',
    `after 'input ${name.text}' (an input needs a type, e.g. input ${name.text}: string)`,
  );
  const type = parseType(s);
  const value = s.eatPunct('=') ? parseExpr(s) : undefined;
  return { name: name.text, type, default: value, span: s.spanFrom(start) };
}

/** `timeout 3m` after a step or group name. */
function parseTimeoutClause(s: TokenStream): number | undefined {
  if (!s.eatWord('timeout')) return undefined;
  const d = s.peek();
  if (d.type !== TOKEN.Duration)
    s.fail(`expected a duration like 30s or 5m after 'timeout', found ${describeToken(d)}`);
  s.next();
  return d.num;
}

// step = [ "entry" ] "step" IDENT [ "timeout" DURATION ] block
function parseStep(s: TokenStream): Step {
  const start = s.peek();
  const entry = s.eatWord('entry');
  s.expectWord('step', entry ? "after 'entry'" : undefined);
  const name = s.expectIdent("a step name after 'step'");
  const timeoutMs = parseTimeoutClause(s);
  const body = parseBlock(s);
  return {
    kind: 'Step',
    name: name.text,
    entry,
    timeoutMs,
    body,
    span: s.spanFrom(start),
    nameSpan: s.tokenSpan(name),
  };
}

function parseParallel(s: TokenStream): ParallelGroup {
  const start = s.next();
  const name = s.expectIdent("a group name after 'parallel'");
  const timeoutMs = parseTimeoutClause(s);
  s.expectPunct('{', 'to open the parallel group');
  const steps: Step[] = [];
  while (!s.isPunct('}')) {
    if (!s.isWord('step'))
      s.fail(
        `expected 'step' inside parallel group '${name.text}', found ${describeToken(s.peek())}`,
      );
    steps.push(parseStep(s));
  }
  s.next();
  return {
    kind: 'Parallel',
    name: name.text,
    timeoutMs,
    steps,
    span: s.spanFrom(start),
    nameSpan: s.tokenSpan(name),
  };
}

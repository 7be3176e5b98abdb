/**
 * The parser's cursor over a token array: look-ahead, expectations with helpful messages,
 * spans, a nesting guard, and the bracket map that error recovery and lambda detection use.
 * It knows no grammar; the `parse-*` modules do.
 */
import {
  DIAGNOSTIC_CODES,
  type Diagnostic,
  type DiagnosticCode,
  diagnostic,
  type Span,
} from './diagnostics.js';
import { TOKEN, type Token } from './lexer.js';
import type { Limits } from './limits.js';

/** Thrown inside the parser to unwind to the nearest recovery point; never escapes `parse()`. */
export class ParseError extends Error {
  readonly diagnostic: Diagnostic;
  constructor(d: Diagnostic) {
    super(d.message);
    this.diagnostic = d;
  }
}

/** Thrown once a file has more diagnostics than the limit; `parse()` stops there. */
export class TooManyErrors extends Error {}

const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = new Set([')', ']', '}']);

/** Describes a token for "found …" in messages. */
export function describeToken(t: Token): string {
  switch (t.type) {
    case TOKEN.EOF:
      return 'end of file';
    case TOKEN.String:
      return t.text.length > 24 ? `string ${t.text.slice(0, 20)}…` : `string ${t.text}`;
    case TOKEN.Number:
      return `number ${t.text}`;
    case TOKEN.Duration:
      return `duration ${t.text}`;
    default:
      return `'${t.text}'`;
  }
}

export class TokenStream {
  readonly tokens: readonly Token[];
  readonly file: string;
  readonly text: string;
  readonly limits: Limits;
  readonly diagnostics: Diagnostic[];
  /** For each opening bracket, the index of its matching closer (or -1). */
  readonly match: Int32Array;
  /** For each token, the index of the innermost bracket it sits in (or -1 at top level). */
  readonly enclosing: Int32Array;
  pos = 0;
  depth: number;

  constructor(
    tokens: readonly Token[],
    file: string,
    text: string,
    limits: Limits,
    diagnostics: Diagnostic[],
    depth = 0,
  ) {
    this.tokens = tokens;
    this.file = file;
    this.text = text;
    this.limits = limits;
    this.diagnostics = diagnostics;
    this.depth = depth;
    this.match = new Int32Array(tokens.length).fill(-1);
    this.enclosing = new Int32Array(tokens.length).fill(-1);
    this.#mapBrackets();
  }

  #mapBrackets(): void {
    const stack: number[] = [];
    this.tokens.forEach((t, i) => {
      this.enclosing[i] = stack.length ? (stack[stack.length - 1] as number) : -1;
      if (t.type !== TOKEN.Punct) return;
      if (OPENERS[t.text]) stack.push(i);
      else if (CLOSERS.has(t.text)) {
        const at = stack.findLastIndex((o) => OPENERS[this.tokens[o]?.text ?? ''] === t.text);
        if (at < 0) return;
        const opener = stack[at] as number;
        this.match[opener] = i;
        this.enclosing[i] = this.enclosing[opener] as number;
        stack.length = at;
      }
    });
  }

  peek(k = 0): Token {
    const i = Math.min(this.pos + k, this.tokens.length - 1);
    return this.tokens[i] as Token;
  }

  previous(): Token {
    return this.tokens[Math.max(0, this.pos - 1)] as Token;
  }

  next(): Token {
    const t = this.peek();
    if (t.type !== TOKEN.EOF) this.pos++;
    return t;
  }

  atEnd(): boolean {
    return this.peek().type === TOKEN.EOF;
  }

  /** Whether the token `k` ahead is the punctuation `text`. */
  isPunct(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.type === TOKEN.Punct && t.text === text;
  }

  /** Whether the token `k` ahead is the identifier or keyword `word`. */
  isWord(word: string, k = 0): boolean {
    const t = this.peek(k);
    return t.type === TOKEN.Ident && t.text === word;
  }

  isIdent(k = 0): boolean {
    return this.peek(k).type === TOKEN.Ident;
  }

  eatPunct(text: string): boolean {
    if (!this.isPunct(text)) return false;
    this.pos++;
    return true;
  }

  eatWord(word: string): boolean {
    if (!this.isWord(word)) return false;
    this.pos++;
    return true;
  }

  /** Consumes the punctuation `text` or fails with "expected … found …". */
  expectPunct(text: string, context?: string): Token {
    if (this.isPunct(text)) return this.next();
    return this.fail(
      `expected '${text}'${context ? ` ${context}` : ''}, found ${describeToken(this.peek())}`,
    );
  }

  expectWord(word: string, context?: string): Token {
    if (this.isWord(word)) return this.next();
    return this.fail(
      `expected '${word}'${context ? ` ${context}` : ''}, found ${describeToken(this.peek())}`,
    );
  }

  /** Consumes an identifier; `what` names it in the message ("a step name"). */
  expectIdent(what: string): Token {
    if (this.isIdent()) return this.next();
    return this.fail(`expected ${what}, found ${describeToken(this.peek())}`);
  }

  /** Consumes a plain string literal (no interpolation) and returns its text. */
  expectPlainString(what: string): { value: string; token: Token } {
    const t = this.peek();
    if (t.type !== TOKEN.String)
      this.fail(`expected ${what} (a string), found ${describeToken(t)}`);
    const parts = t.parts ?? [];
    if (parts.length !== 1 || typeof parts[0] !== 'string') {
      this.fail(`${what} must be a plain string without \${…}`, t);
    }
    this.pos++;
    return { value: parts[0] as string, token: t };
  }

  /** Throws a syntax error at `at` (default: the current token). */
  fail(
    message: string,
    at: Token = this.peek(),
    code: DiagnosticCode = DIAGNOSTIC_CODES.SYNTAX,
  ): never {
    throw new ParseError(diagnostic(code, message, this.tokenSpan(at)));
  }

  report(d: Diagnostic): void {
    this.diagnostics.push(d);
  }

  tokenSpan(t: Token): Span {
    return { file: this.file, start: t.start, end: t.end, line: t.line, col: t.col };
  }

  /** The span from `start` to the end of the last consumed token. */
  spanFrom(start: Token): Span {
    const last = this.previous();
    const end = Math.max(last.end, start.end);
    return { file: this.file, start: start.start, end, line: start.line, col: start.col };
  }

  /** Guards recursion: every nesting production calls this around its body. */
  nested<T>(parse: () => T): T {
    if (this.depth >= this.limits.maxDepth) {
      this.fail(
        `nesting deeper than ${this.limits.maxDepth} levels; split the expression or block`,
        this.peek(),
        DIAGNOSTIC_CODES.LIMIT_EXCEEDED,
      );
    }
    this.depth++;
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  /** Index of the bracket matching the opener at `index`, or -1. */
  matchOf(index: number): number {
    return this.match[index] ?? -1;
  }

  /**
   * After an error inside a block opened at `openerIndex`, moves to the next token that starts a
   * new line directly inside that block, or to the block's closing brace.
   */
  syncInBlock(openerIndex: number, errorLine: number): void {
    const close = this.matchOf(openerIndex);
    while (!this.atEnd()) {
      if (this.pos === close) return;
      const t = this.peek();
      if (t.line > errorLine && this.enclosing[this.pos] === openerIndex) return;
      this.pos++;
    }
  }

  /**
   * The recovery step shared by every list-in-braces production: reports a syntax error, then
   * resynchronises with `syncInBlock`, always making progress past `before`.
   */
  recoverInBlock(e: unknown, openerIndex: number, before: number): void {
    if (!(e instanceof ParseError)) throw e;
    this.report(e.diagnostic);
    if (this.diagnostics.length >= this.limits.maxDiagnosticsPerFile) throw new TooManyErrors();
    this.syncInBlock(openerIndex, e.diagnostic.span.line);
    if (this.pos === before) this.next();
  }

  /** Moves past the bracketed group starting at the current opener (for parse-and-ignore forms). */
  skipGroup(): void {
    const close = this.matchOf(this.pos);
    this.pos = close < 0 ? this.tokens.length - 1 : close + 1;
  }
}

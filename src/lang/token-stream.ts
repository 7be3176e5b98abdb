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
import type { Limits } from './limits.js';
import { TOKEN, type Token } from './token.js';
import { TableToken, type TokenTable, TYPE_CODE } from './token-table.js';

/** Thrown inside the parser to unwind to the nearest recovery point; never escapes `parse()`. */
export class ParseError extends Error {
  readonly diagnostic: Diagnostic;
  constructor(d: Diagnostic) {
    super(d.message);
    this.diagnostic = d;
  }
}

/**
 * Stops reading a file: thrown when it has more diagnostics than the limit, or nests deeper than
 * the limit (recovering from that would only report the same problem again and again).
 */
export class AbortParse extends Error {
  /** Reported when the parse stops; undefined means "too many errors". */
  readonly diagnostic: Diagnostic | undefined;
  /** Stop without a word: what remains is an echo of an error already reported. */
  readonly quiet: boolean;
  constructor(d?: Diagnostic, quiet = false) {
    super(d?.message ?? 'too many errors');
    this.diagnostic = d;
    this.quiet = quiet;
  }
}

const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = new Set([')', ']', '}']);

/** The 1-based column where the line holding `offset` has its first non-blank character. */
function indentOf(source: string, offset: number): number {
  const lineStart = source.lastIndexOf('\n', offset - 1) + 1;
  let p = lineStart;
  while (source[p] === ' ' || source[p] === '\t') p++;
  return p - lineStart + 1;
}

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

/**
 * `items` in an array of exactly its length. An array grown by `push` keeps room for 17
 * elements (V8's first growth step), so the AST's many one- and two-element lists would hold
 * four times the memory they use; the AST outlives the young generation, and the collector
 * copies every byte of it.
 */
export function fit<T>(items: T[]): T[] {
  return items.length === 0 ? items : items.slice();
}

/**
 * A list parsed into room made for it (`TokenStream.room`): filled by index, cut to what was
 * filled. No growth and no copy, so no garbage either.
 */
export class Filled<T> {
  readonly items: T[];
  #count = 0;
  constructor(room: number) {
    this.items = room > 0 ? new Array<T>(room) : [];
  }
  add(item: T): void {
    this.items[this.#count++] = item;
  }
  /** The items added, in an array of (about) their number. */
  done(): T[] {
    if (this.#count < this.items.length) this.items.length = this.#count;
    return this.items;
  }
}

const PUNCT = TYPE_CODE.punct;
const IDENT = TYPE_CODE.ident;
const EOF = TYPE_CODE.eof;
const CACHE_SIZE = 16;

export class TokenStream {
  readonly table: TokenTable;
  readonly file: string;
  /** The text tokens were read from: the file, or the unescaped text of a legacy interpolation. */
  readonly text: string;
  readonly limits: Limits;
  readonly diagnostics: Diagnostic[];
  /** For each opening bracket, the index of its matching closer (or -1). */
  readonly match: Int32Array;
  /** For each token, the index of the innermost bracket it sits in (or -1 at top level). */
  readonly enclosing: Int32Array;
  pos = 0;
  depth: number;
  /** The last few tokens made into objects, so repeated look-ahead does not make them again. */
  readonly #cacheIndex = new Int32Array(CACHE_SIZE).fill(-1);
  readonly #cache: (Token | undefined)[] = new Array(CACHE_SIZE);
  /** Lines with lexical errors: syntax errors there are their echoes. */
  readonly #lexicalLines = new Set<number>();

  constructor(
    table: TokenTable,
    file: string,
    limits: Limits,
    diagnostics: Diagnostic[],
    depth = 0,
  ) {
    this.table = table;
    this.file = file;
    this.text = table.source;
    this.limits = limits;
    this.diagnostics = diagnostics;
    this.depth = depth;
    for (const d of diagnostics)
      if (d.code === DIAGNOSTIC_CODES.LEXICAL) this.#lexicalLines.add(d.span.line);
    this.match = new Int32Array(table.count).fill(-1);
    this.enclosing = new Int32Array(table.count).fill(-1);
    this.#mapBrackets();
  }

  get count(): number {
    return this.table.count;
  }

  #mapBrackets(): void {
    const { types, starts, ends, source, count } = this.table;
    // The open brackets, innermost last, in a typed array with its own depth: an array whose
    // length drops to 0 loses its storage, and every top-level bracket would allocate anew.
    const stack = new Int32Array(count);
    let depth = 0;
    const charOf = (i: number) => source[starts[i] as number] as string;
    for (let i = 0; i < count; i++) {
      this.enclosing[i] = depth > 0 ? (stack[depth - 1] as number) : -1;
      if (types[i] !== PUNCT || (ends[i] as number) - (starts[i] as number) !== 1) continue;
      const c = charOf(i);
      if (OPENERS[c]) stack[depth++] = i;
      else if (CLOSERS.has(c)) {
        // Well-formed code closes the innermost bracket; search deeper only when it does not.
        let at = depth - 1;
        while (at >= 0 && OPENERS[charOf(stack[at] as number)] !== c) at--;
        if (at < 0) continue;
        const opener = stack[at] as number;
        this.match[opener] = i;
        this.enclosing[i] = this.enclosing[opener] as number;
        depth = at;
      }
    }
  }

  /** The token at index `i` (clamped to the EOF token). */
  tokenAt(i: number): Token {
    const index = Math.min(i, this.table.count - 1);
    const slot = index % CACHE_SIZE;
    if (this.#cacheIndex[slot] === index) return this.#cache[slot] as Token;
    const token = new TableToken(this.table, index);
    this.#cacheIndex[slot] = index;
    this.#cache[slot] = token;
    return token;
  }

  peek(k = 0): Token {
    return this.tokenAt(this.pos + k);
  }

  previous(): Token {
    return this.tokenAt(Math.max(0, this.pos - 1));
  }

  next(): Token {
    const t = this.peek();
    if (t.type !== TOKEN.EOF) this.pos++;
    return t;
  }

  atEnd(): boolean {
    return this.table.types[this.#index(0)] === EOF;
  }

  /**
   * The punctuation `k` ahead as a number, its one or two char codes (`c0 | c1 << 16`), or -1
   * for any other token: lets hot loops ask "which operator?" without making a token or a string.
   */
  punctCode(k = 0): number {
    const i = this.#index(k);
    if (this.table.types[i] !== PUNCT) return -1;
    const start = this.table.starts[i] as number;
    const length = (this.table.ends[i] as number) - start;
    const text = this.text;
    if (length === 1) return text.charCodeAt(start);
    if (length === 2) return text.charCodeAt(start) | (text.charCodeAt(start + 1) << 16);
    return -1;
  }

  #index(k: number): number {
    return Math.min(this.pos + k, this.table.count - 1);
  }

  /** Whether the token `k` ahead is the punctuation `text`. */
  isPunct(text: string, k = 0): boolean {
    return this.table.is(this.#index(k), PUNCT, text);
  }

  /** Whether the token `k` ahead is the identifier or keyword `word`. */
  isWord(word: string, k = 0): boolean {
    return this.table.is(this.#index(k), IDENT, word);
  }

  isIdent(k = 0): boolean {
    return this.table.types[this.#index(k)] === IDENT;
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

  /**
   * Consumes the punctuation `text` or fails with "expected … found …". Returns nothing: most
   * callers only need it gone, and making its token would be garbage (peek first to keep it).
   */
  expectPunct(text: string, context?: string): void {
    if (this.isPunct(text)) this.pos++;
    else this.failMissing(`expected '${text}'${context ? ` ${context}` : ''}`);
  }

  expectWord(word: string, context?: string): Token {
    if (this.isWord(word)) return this.next();
    return this.failMissing(`expected '${word}'${context ? ` ${context}` : ''}`);
  }

  /** Consumes an identifier; `what` names it in the message ("a step name"). */
  expectIdent(what: string): Token {
    if (this.isIdent()) return this.next();
    return this.failMissing(`expected ${what}`);
  }

  /** Consumes a plain string literal (no interpolation) and returns its text. */
  expectPlainString(what: string): { value: string; token: Token } {
    const t = this.peek();
    if (t.type !== TOKEN.String) this.failMissing(`expected ${what} (a string)`);
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
    at: Token | Span = this.peek(),
    code: DiagnosticCode = DIAGNOSTIC_CODES.SYNTAX,
  ): never {
    const span = 'file' in at ? at : this.tokenSpan(at);
    throw new ParseError(diagnostic(code, message, span));
  }

  /**
   * "expected X, found Y". When Y starts a later line, X was missing at the end of the line
   * before, so that is where the caret goes, not on the good code below.
   */
  failMissing(expected: string): never {
    if (this.atEnd() && expected.startsWith("expected '}'")) this.#failUnclosed();
    return this.fail(`${expected}, found ${describeToken(this.peek())}`, this.missingSpan());
  }

  /**
   * The file ended inside a block. Brackets pair up innermost-first, so the '}' that is really
   * missing is usually earlier: the last '{' whose partner is indented less than the line that
   * opened it. Point there; if an error was already reported from that line on, stop quietly.
   */
  #failUnclosed(): void {
    const { types, starts, ends, cols, lines, source, count } = this.table;
    let suspect = -1;
    for (let i = 0; i < count; i++) {
      const close = this.match[i] as number;
      if (close < 0 || types[i] !== PUNCT || ends[i] !== (starts[i] as number) + 1) continue;
      if (source[starts[i] as number] !== '{') continue;
      if ((cols[close] as number) < indentOf(source, starts[i] as number)) suspect = i;
    }
    if (suspect < 0) return;
    const line = lines[suspect] as number;
    if (this.diagnostics.some((d) => d.span.file === this.file && d.span.line >= line)) {
      throw new AbortParse(undefined, true);
    }
    const message = `expected '}' to close the block opened at line ${line}, found end of file`;
    this.fail(message, this.tokenSpan(this.tokenAt(suspect)));
  }

  /** Where a missing token belongs: after the previous token when the next one starts a later line. */
  missingSpan(): Span {
    const found = this.peek();
    const last = this.previous();
    if (this.pos === 0 || found.line <= last.line) return this.tokenSpan(found);
    const lineStart = this.text.lastIndexOf('\n', last.end - 1) + 1;
    const line = last.line + (this.text.slice(last.start, last.end).match(/\n/g)?.length ?? 0);
    return {
      file: this.file,
      start: last.end,
      end: last.end + 1,
      line,
      col: last.end - lineStart + 1,
    };
  }

  /**
   * Records a diagnostic, dropping syntax errors that only echo a lexical one: on the same line or
   * the next (an unterminated string swallows the rest of its line), or at the end of the file
   * (an unterminated triple-quoted string swallows the rest of the file).
   */
  report(d: Diagnostic): void {
    if (d.code === DIAGNOSTIC_CODES.SYNTAX && this.#lexicalLines.size > 0) {
      const l = d.span.line;
      const atEnd = d.span.start >= this.text.length;
      if (atEnd || this.#lexicalLines.has(l) || this.#lexicalLines.has(l - 1)) return;
    }
    this.diagnostics.push(d);
  }

  tokenSpan(t: Token): Span {
    return { file: this.file, start: t.start, end: t.end, line: t.line, col: t.col };
  }

  /** The span from `start` to the end of the last consumed token. */
  spanFrom(start: Token): Span {
    const end = this.#endFrom(start);
    return { file: this.file, start: start.start, end, line: start.line, col: start.col };
  }

  /**
   * `spanFrom(start)`, reusing `same` when it covers exactly that range (a positional argument
   * and its expression, an expression statement and its expression): one object, not two equal.
   */
  spanFromOr(start: Token, same: Span): Span {
    const end = this.#endFrom(start);
    return same.start === start.start && same.end === end && same.file === this.file
      ? same
      : { file: this.file, start: start.start, end, line: start.line, col: start.col };
  }

  #endFrom(start: Token): number {
    const { override, ends } = this.table;
    const lastEnd = override ? override.end : (ends[Math.max(0, this.pos - 1)] as number);
    return Math.max(lastEnd, start.end);
  }

  /**
   * Guards recursion: every nesting production calls `enter()` before its body and lowers
   * `depth` after it. A syntax error skips the lowering; the recovery points restore the depth
   * they saved (`recoverInBlock`), so the hot path needs no try/finally.
   */
  enter(): void {
    this.guardDepth(1);
    this.depth++;
  }

  /** `enter()`, the body, and the way out, for productions off the hot path. */
  nested<T>(parse: () => T): T {
    this.enter();
    const result = parse();
    this.depth--;
    return result;
  }

  /**
   * Fails when `extra` more levels would pass the depth limit. Loops that build left-nested
   * trees (`a.b.c…`, `a + b + …`, `T[][]…`) call this with their length, since the checker and
   * the interpreter recurse through what they build.
   */
  guardDepth(extra: number): void {
    if (this.depth + extra <= this.limits.maxDepth) return;
    const message = `nesting deeper than ${this.limits.maxDepth} levels; split the expression or block`;
    throw new AbortParse(
      diagnostic(DIAGNOSTIC_CODES.LIMIT_EXCEEDED, message, this.tokenSpan(this.peek())),
    );
  }

  /**
   * How many comma-separated items the bracket group opening at the current token can hold: its
   * top-level commas plus one (a trailing comma makes it one too many). 0 for `()`.
   */
  room(): number {
    const open = this.pos;
    const close = this.match[open] ?? -1;
    if (close <= open + 1) return 0;
    const { types, starts, ends, source } = this.table;
    let n = 1;
    for (let i = open + 1; i < close; i++) {
      if (this.enclosing[i] !== open || types[i] !== PUNCT) continue;
      const start = starts[i] as number;
      if ((ends[i] as number) - start === 1 && source.charCodeAt(start) === 44) n++;
    }
    return n;
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
    const { lines, count } = this.table;
    while (this.pos < count - 1) {
      if (this.pos === close) return;
      // A closer whose opener sits in this block ends a nested group, not a statement.
      const directlyInside = this.enclosing[this.pos] === openerIndex && !this.#isCloser(this.pos);
      if (directlyInside && (lines[this.pos] as number) > errorLine) return;
      this.pos++;
    }
  }

  /**
   * The recovery step shared by every list-in-braces production: reports a syntax error, then
   * resynchronises with `syncInBlock`, always making progress past `before`.
   */
  recoverInBlock(e: unknown, openerIndex: number, before: number, depth: number): void {
    if (!(e instanceof ParseError)) throw e;
    this.depth = depth;
    this.report(e.diagnostic);
    if (this.diagnostics.length >= this.limits.maxDiagnosticsPerFile) throw new AbortParse();
    this.syncInBlock(openerIndex, e.diagnostic.span.line);
    if (this.pos === before) this.next();
  }

  #isCloser(i: number): boolean {
    const { types, starts, ends, source } = this.table;
    return (
      types[i] === PUNCT &&
      (ends[i] as number) - (starts[i] as number) === 1 &&
      CLOSERS.has(source[starts[i] as number] as string)
    );
  }

  /** Moves past the bracketed group starting at the current opener (for parse-and-ignore forms). */
  skipGroup(): void {
    const close = this.matchOf(this.pos);
    this.pos = close < 0 ? this.table.count - 1 : close + 1;
  }
}

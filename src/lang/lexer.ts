/**
 * The MHL lexer: source text → tokens, in one pass over char codes.
 *
 * Newlines are not tokens (MHL has no statement separators), so every token keeps its line and
 * column; the parser uses them to recover after errors. String tokens keep their interpolations
 * as source ranges, which the parser lexes again in place, so positions inside `${…}` stay exact.
 * Lexical problems become diagnostics and the lexer carries on; it never throws.
 */
import { DIAGNOSTIC_CODES, type Diagnostic, diagnostic, type Span } from './diagnostics.js';
import { type StringPart, TOKEN, type Token, type TokenType } from './token.js';
import { type PositionOverride, TokenTable } from './token-table.js';

export { type Interpolation, type StringPart, TOKEN, type Token, type TokenType } from './token.js';

export interface LexResult {
  readonly table: TokenTable;
  readonly diagnostics: Diagnostic[];
}

const DURATION_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const TWO_CHAR_PUNCT = new Set(['..', '->', '==', '!=', '>=', '<=', '&&', '||', '?.', '??', '+=']);
/** Second characters of two-char punctuation: only these make the lexer look at a pair. */
const TWO_CHAR_SECOND = new Set([...TWO_CHAR_PUNCT].map((p) => p.charCodeAt(1)));
const ONE_CHAR_PUNCT = new Set('-+*/%<>=!^(){}[]:,.?');
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '"': '"',
  '\\': '\\',
  '/': '/',
  $: '$',
  '0': '\0',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  "'": "'",
};

/** Strings inside `${…}` inside strings…: deeper than this is refused, not recursed into. */
const MAX_STRING_NESTING = 32;

const isDigit = (c: number) => c >= 48 && c <= 57;
const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentPart = (c: number) => isIdentStart(c) || isDigit(c);

/** Where to start lexing inside a file: used for whole files and for interpolations. */
export interface LexRange {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
}

/**
 * Splits `text` (or the range of it given) into a token table ending with one EOF token.
 * `override` reports every token at one position (for text that is not the file itself).
 * Never throws; problems are returned as diagnostics.
 */
export function lex(
  text: string,
  file: string,
  range?: LexRange,
  override?: PositionOverride,
): LexResult {
  return new Lexer(text, file, range, override).run();
}

/** `lex`, with every token made into an object: for tests and tools, not the parser's hot path. */
export function tokenize(
  text: string,
  file: string,
  range?: LexRange,
): { tokens: Token[]; diagnostics: Diagnostic[] } {
  const { table, diagnostics } = lex(text, file, range);
  return { tokens: Array.from({ length: table.count }, (_, i) => table.token(i)), diagnostics };
}

class Lexer {
  readonly #text: string;
  readonly #file: string;
  readonly #end: number;
  #pos: number;
  #line: number;
  #lineStart: number;
  readonly #tokens: TokenTable;
  readonly #diags: Diagnostic[] = [];

  constructor(text: string, file: string, range?: LexRange, override?: PositionOverride) {
    this.#text = text;
    this.#file = file;
    this.#pos = range?.start ?? 0;
    this.#end = range?.end ?? text.length;
    // About one token per four characters of MHL; the table grows if that is short.
    this.#tokens = new TokenTable(text, (this.#end - this.#pos) >> 2, override);
    this.#line = range?.line ?? 1;
    this.#lineStart = this.#pos - ((range?.col ?? 1) - 1);
  }

  run(): LexResult {
    if (this.#pos === 0) this.#skipFileHeaderComment();
    while (true) {
      this.#skipTrivia();
      if (this.#pos >= this.#end) break;
      this.#scanToken();
    }
    this.#push(TOKEN.EOF, this.#pos, this.#line, this.#col(this.#pos));
    return { table: this.#tokens, diagnostics: this.#diags };
  }

  #col(pos: number): number {
    return pos - this.#lineStart + 1;
  }

  #push(
    type: TokenType,
    start: number,
    line: number,
    col: number,
    num = 0,
    parts?: StringPart[],
    triple = false,
  ): void {
    const i = this.#tokens.push(type, start, this.#pos, line, col, num);
    if (parts) this.#tokens.strings.set(i, { parts, triple });
  }

  #error(message: string, start: number, end: number, line = this.#line, col = this.#col(start)) {
    const span: Span = { file: this.#file, start, end: Math.max(end, start + 1), line, col };
    this.#diags.push(diagnostic(DIAGNOSTIC_CODES.LEXICAL, message, span));
  }

  #newline(at: number): void {
    this.#line++;
    this.#lineStart = at + 1;
  }

  /** The one block comment MHL has: a `/** … **\/` doc header at the very start of a file. */
  #skipFileHeaderComment(): void {
    const text = this.#text;
    let p = 0;
    while (p < this.#end && /\s/.test(text[p] as string)) p++;
    if (!text.startsWith('/**', p)) return;
    const close = text.indexOf('*/', p + 3);
    if (close < 0) return;
    for (let i = this.#pos; i < close + 2; i++) if (text.charCodeAt(i) === 10) this.#newline(i);
    this.#pos = close + 2;
  }

  #skipTrivia(): void {
    const text = this.#text;
    while (this.#pos < this.#end) {
      const c = text.charCodeAt(this.#pos);
      if (c === 10) {
        this.#newline(this.#pos);
        this.#pos++;
      } else if (c === 32 || c === 9 || c === 13 || c === 0xfeff) {
        this.#pos++;
      } else if (c === 47 && text.charCodeAt(this.#pos + 1) === 47) {
        const nl = text.indexOf('\n', this.#pos);
        this.#pos = nl < 0 || nl > this.#end ? this.#end : nl;
      } else if (c === 47 && text.charCodeAt(this.#pos + 1) === 42) {
        this.#skipMisplacedBlockComment();
      } else {
        return;
      }
    }
  }

  #skipMisplacedBlockComment(): void {
    const start = this.#pos;
    this.#error(
      'block comments are only allowed as a /** … **/ header at the start of a file; use // comments',
      start,
      start + 2,
    );
    const close = this.#text.indexOf('*/', start + 2);
    const stop = close < 0 || close + 2 > this.#end ? this.#end : close + 2;
    for (let i = start; i < stop; i++) if (this.#text.charCodeAt(i) === 10) this.#newline(i);
    this.#pos = stop;
  }

  #scanToken(): void {
    const text = this.#text;
    const start = this.#pos;
    const line = this.#line;
    const col = this.#col(start);
    const c = text.charCodeAt(start);
    if (c === 34) {
      if (text.startsWith('"""', start)) this.#scanTripleString(start, line, col);
      else this.#scanString(start, line, col);
      return;
    }
    if (isDigit(c)) return this.#scanNumber(start, line, col);
    if (isIdentStart(c)) {
      let p = start + 1;
      while (p < this.#end && isIdentPart(text.charCodeAt(p))) p++;
      this.#pos = p;
      this.#push(TOKEN.Ident, start, line, col);
      return;
    }
    const next = text.charCodeAt(start + 1);
    const two =
      start + 2 <= this.#end && TWO_CHAR_SECOND.has(next) ? text.slice(start, start + 2) : '';
    if (two && TWO_CHAR_PUNCT.has(two)) {
      this.#pos = start + 2;
      this.#push(TOKEN.Punct, start, line, col);
      return;
    }
    const one = text[start] as string;
    if (ONE_CHAR_PUNCT.has(one)) {
      this.#pos = start + 1;
      this.#push(TOKEN.Punct, start, line, col);
      return;
    }
    // A surrogate pair is one character; a lone high surrogate is one unit, so it never swallows
    // the newline (or quote) after it.
    this.#pos = start + (isSurrogatePair(c, next) ? 2 : 1);
    this.#error(unexpectedCharMessage(text.slice(start, this.#pos)), start, this.#pos, line, col);
    // Read on as the author meant, so one slip is one diagnostic: `&` as `&&`, 'x' as "x".
    if (one === '&' || one === '|') this.#push(TOKEN.Punct, start, line, col);
    else if (one === "'") this.#recoverSingleQuoted(start, line, col);
  }

  #recoverSingleQuoted(start: number, line: number, col: number): void {
    const text = this.#text;
    const nl = text.indexOf('\n', start);
    const close = text.indexOf("'", start + 1);
    if (close < 0 || close > this.#end || (nl >= 0 && close > nl)) return;
    this.#pos = close + 1;
    this.#push(TOKEN.String, start, line, col, 0, [text.slice(start + 1, close)], false);
  }

  #scanNumber(start: number, line: number, col: number): void {
    const text = this.#text;
    let p = start;
    while (p < this.#end && isDigit(text.charCodeAt(p))) p++;
    let fraction = false;
    if (text.charCodeAt(p) === 46 && isDigit(text.charCodeAt(p + 1)) && p + 1 < this.#end) {
      fraction = true;
      p++;
      while (p < this.#end && isDigit(text.charCodeAt(p))) p++;
    }
    const numberEnd = p;
    while (p < this.#end && isIdentPart(text.charCodeAt(p))) p++;
    this.#pos = p;
    const raw = text.slice(start, p);
    if (p === numberEnd) {
      this.#push(TOKEN.Number, start, line, col, Number(raw));
      return;
    }
    const unit = text.slice(numberEnd, p);
    const factor = DURATION_MS[unit];
    if (!fraction && factor !== undefined) {
      const ms = Number(text.slice(start, numberEnd)) * factor;
      this.#push(TOKEN.Duration, start, line, col, ms);
      return;
    }
    this.#error(
      `malformed number '${raw}': numbers are digits with an optional .fraction, durations are whole numbers with ms, s, m, h or d`,
      start,
      p,
      line,
      col,
    );
    this.#push(TOKEN.Number, start, line, col, 0);
  }

  /** A double-quoted string with Go-style escapes and `${…}` interpolations. */
  #scanString(start: number, line: number, col: number): void {
    const text = this.#text;
    const parts: StringPart[] = [];
    let chunk = '';
    let p = start + 1;
    while (true) {
      if (p >= this.#end || text.charCodeAt(p) === 10) {
        this.#pos = p;
        this.#error(
          'unterminated string: add the closing " on the same line, or use """ for text that spans lines',
          start,
          p,
          line,
          col,
        );
        break;
      }
      const c = text.charCodeAt(p);
      if (c === 34) {
        this.#pos = p + 1;
        break;
      }
      if (c === 92) {
        const decoded = this.#decodeEscape(p);
        chunk += decoded.text;
        p = decoded.next;
        continue;
      }
      if (c === 36 && text.charCodeAt(p + 1) === 123) {
        if (chunk) parts.push(chunk);
        chunk = '';
        p = this.#scanInterpolation(p, parts);
        if (p < 0) break; // unterminated `${`: already reported, and it ends the string too
        continue;
      }
      const run = p;
      while (p < this.#end) {
        const d = text.charCodeAt(p);
        if (d === 34 || d === 92 || d === 10 || (d === 36 && text.charCodeAt(p + 1) === 123)) break;
        p++;
      }
      chunk += text.slice(run, p);
    }
    if (chunk || parts.length === 0) parts.push(chunk);
    this.#push(TOKEN.String, start, line, col, 0, parts, false);
  }

  #decodeEscape(p: number): { text: string; next: number } {
    const text = this.#text;
    const e = text[p + 1] ?? '';
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) return { text: simple, next: p + 2 };
    const hexLength = e === 'u' ? 4 : e === 'x' ? 2 : e === 'U' ? 8 : 0;
    if (hexLength) {
      const hex = text.slice(p + 2, p + 2 + hexLength);
      const code =
        /^[0-9a-fA-F]+$/.test(hex) && hex.length === hexLength ? Number.parseInt(hex, 16) : -1;
      if (code >= 0 && code <= 0x10ffff)
        return { text: String.fromCodePoint(code), next: p + 2 + hexLength };
    }
    this.#error(
      `invalid escape '\\${e}' in string: use \\n, \\t, \\", \\\\, \\$ or \\uXXXX`,
      p,
      p + 2,
    );
    return { text: e, next: p + 2 };
  }

  /**
   * Scans `${ … }` starting at the `$`, tracking brace depth and nested strings so that
   * `"${f(x, "a}b")}"` is one token. Returns the position after the closing brace, or -1 (with
   * the lexer moved to the end of the line) when the interpolation is never closed.
   */
  #scanInterpolation(dollar: number, parts: StringPart[]): number {
    const text = this.#text;
    const exprStart = dollar + 2;
    const line = this.#line;
    let depth = 1;
    let escaped = false;
    let p = exprStart;
    while (p < this.#end) {
      const c = text.charCodeAt(p);
      if (c === 10) break;
      if (c === 123) depth++;
      else if (c === 125 && --depth === 0) break;
      else if (c === 92) {
        escaped = true;
        p += 2;
        continue;
      } else if (c === 34) {
        p = this.#skipNestedString(p + 1);
        continue;
      }
      p++;
    }
    if (depth !== 0) {
      this.#error("unterminated '${' in string: close the interpolation with '}'", dollar, p);
      this.#pos = p;
      return -1;
    }
    parts.push({ start: exprStart, end: p, line, col: this.#col(exprStart), escaped });
    return p + 1;
  }

  /** Skips a string nested inside an interpolation; returns the position after its closing quote. */
  #skipNestedString(p: number, nesting = 1): number {
    const text = this.#text;
    if (nesting > MAX_STRING_NESTING) {
      this.#error(
        `strings nest more than ${MAX_STRING_NESTING} levels deep inside \${…}; use variables`,
        p - 1,
        p,
      );
      const nl = text.indexOf('\n', p);
      return nl < 0 || nl > this.#end ? this.#end : nl;
    }
    while (p < this.#end) {
      const c = text.charCodeAt(p);
      if (c === 10) return p;
      if (c === 34) return p + 1;
      if (c === 92) p += 2;
      else if (c === 36 && text.charCodeAt(p + 1) === 123) {
        let depth = 1;
        p += 2;
        while (p < this.#end && depth > 0 && text.charCodeAt(p) !== 10) {
          const d = text.charCodeAt(p);
          if (d === 123) depth++;
          else if (d === 125) depth--;
          else if (d === 34) {
            p = this.#skipNestedString(p + 1, nesting + 1);
            continue;
          }
          p++;
        }
      } else p++;
    }
    return p;
  }

  /** `"""…"""`: no escapes, trimmed, may span lines; `${…}` still interpolates. */
  #scanTripleString(start: number, line: number, col: number): void {
    const text = this.#text;
    const close = text.indexOf('"""', start + 3);
    const contentEnd = close < 0 || close + 3 > this.#end ? this.#end : close;
    if (contentEnd === this.#end) {
      this.#error('unterminated """ string: add the closing """', start, start + 3, line, col);
    }
    const parts: StringPart[] = [];
    let chunkStart = start + 3;
    let p = chunkStart;
    while (p < contentEnd) {
      const c = text.charCodeAt(p);
      if (c === 10) {
        this.#newline(p);
        p++;
      } else if (c === 36 && text.charCodeAt(p + 1) === 123) {
        if (p > chunkStart) parts.push(text.slice(chunkStart, p));
        p = Math.min(this.#scanTripleInterpolation(p, contentEnd, parts), contentEnd);
        chunkStart = p;
      } else p++;
    }
    if (contentEnd > chunkStart) parts.push(text.slice(chunkStart, contentEnd));
    trimParts(parts);
    this.#pos = contentEnd === this.#end ? this.#end : contentEnd + 3;
    this.#push(TOKEN.String, start, line, col, 0, parts, true);
  }

  #scanTripleInterpolation(dollar: number, limit: number, parts: StringPart[]): number {
    const text = this.#text;
    const exprStart = dollar + 2;
    const line = this.#line;
    const col = this.#col(exprStart);
    // Where the `${` is, before the scan below moves the line on past newlines.
    const dollarCol = this.#col(dollar);
    let depth = 1;
    let p = exprStart;
    while (p < limit) {
      const c = text.charCodeAt(p);
      if (c === 10) this.#newline(p);
      else if (c === 123) depth++;
      else if (c === 125 && --depth === 0) break;
      else if (c === 34) {
        p = this.#skipNestedString(p + 1);
        continue;
      }
      p++;
    }
    if (depth !== 0) {
      const message = "unterminated '${' in string: close the interpolation with '}'";
      this.#error(message, dollar, p, line, dollarCol);
      return limit;
    }
    parts.push({ start: exprStart, end: p, line, col, escaped: false });
    return p + 1;
  }
}

/** Trims leading whitespace of the first part and trailing whitespace of the last, if text. */
function trimParts(parts: StringPart[]): void {
  const first = parts[0];
  if (typeof first === 'string') parts[0] = first.trimStart();
  const lastIndex = parts.length - 1;
  const last = parts[lastIndex];
  if (typeof last === 'string') parts[lastIndex] = last.trimEnd();
  if (parts.length === 0) parts.push('');
}

function unexpectedCharMessage(ch: string): string {
  if (ch === ';') return "unexpected ';': MHL statements need no separator; remove it";
  if (ch === "'") return 'unexpected "\'": strings use double quotes';
  if (ch === '&' || ch === '|') return `unexpected '${ch}': did you mean '${ch}${ch}'?`;
  const code = ch.codePointAt(0) ?? 0;
  const shown =
    code < 32 || code === 127 ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : ch;
  return `unexpected character '${shown}'`;
}

function isSurrogatePair(high: number, low: number): boolean {
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

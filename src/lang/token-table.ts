/**
 * Tokens stored column-wise in typed arrays, with `Token` objects made only on demand.
 *
 * A 10,000-line file has ~80,000 tokens; as objects they outlive the young generation and make
 * the garbage collector the parser's biggest cost. Stored here they cost ~25 bytes each, and the
 * objects the parser looks at die young.
 */
import { type StringPart, TOKEN, type Token, type TokenType } from './token.js';

const TYPE_CODES: readonly TokenType[] = [
  TOKEN.Ident,
  TOKEN.Number,
  TOKEN.Duration,
  TOKEN.String,
  TOKEN.Punct,
  TOKEN.EOF,
];
export const TYPE_CODE: Readonly<Record<TokenType, number>> = {
  ident: 0,
  number: 1,
  duration: 2,
  string: 3,
  punct: 4,
  eof: 5,
};

/** Where every token of a table is reported, for tokens lexed from text that is not the file. */
export interface PositionOverride {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
}

export class TokenTable {
  /** The text the tokens were read from (their `text` is sliced from it). */
  readonly source: string;
  readonly override: PositionOverride | undefined;
  count = 0;
  types: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  lines: Int32Array;
  cols: Int32Array;
  nums: Float64Array;
  readonly strings = new Map<number, { parts: StringPart[]; triple: boolean }>();

  constructor(source: string, expected: number, override?: PositionOverride) {
    this.source = source;
    this.override = override;
    const capacity = Math.max(4, expected);
    this.types = new Uint8Array(capacity);
    this.starts = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
    this.lines = new Int32Array(capacity);
    this.cols = new Int32Array(capacity);
    this.nums = new Float64Array(capacity);
  }

  push(type: TokenType, start: number, end: number, line: number, col: number, num = 0): number {
    if (this.count === this.types.length) this.#grow();
    const i = this.count++;
    this.types[i] = TYPE_CODE[type];
    this.starts[i] = start;
    this.ends[i] = end;
    this.lines[i] = line;
    this.cols[i] = col;
    this.nums[i] = num;
    return i;
  }

  #grow(): void {
    const size = this.types.length * 2;
    const grow = <T extends Uint8Array | Int32Array | Float64Array>(
      a: T,
      make: new (n: number) => T,
    ): T => {
      const next = new make(size);
      next.set(a);
      return next;
    };
    this.types = grow(this.types, Uint8Array);
    this.starts = grow(this.starts, Int32Array);
    this.ends = grow(this.ends, Int32Array);
    this.lines = grow(this.lines, Int32Array);
    this.cols = grow(this.cols, Int32Array);
    this.nums = grow(this.nums, Float64Array);
  }

  typeAt(i: number): TokenType {
    return TYPE_CODES[this.types[i] as number] as TokenType;
  }

  /** Whether token `i` is of `type` with exactly the text `text`, without making an object. */
  is(i: number, typeCode: number, text: string): boolean {
    const start = this.starts[i] as number;
    return (
      this.types[i] === typeCode &&
      (this.ends[i] as number) - start === text.length &&
      this.source.startsWith(text, start)
    );
  }

  /** Makes the `Token` object for index `i`. */
  token(i: number): Token {
    const type = this.typeAt(i);
    const start = this.starts[i] as number;
    const end = this.ends[i] as number;
    const text = type === TOKEN.EOF ? '' : this.source.slice(start, end);
    const str = type === TOKEN.String ? this.strings.get(i) : undefined;
    const o = this.override;
    return {
      type,
      text,
      start: o ? o.start : start,
      end: o ? o.end : end,
      line: o ? o.line : (this.lines[i] as number),
      col: o ? o.col : (this.cols[i] as number),
      num: this.nums[i] as number,
      parts: str?.parts,
      triple: str?.triple ?? false,
    };
  }
}

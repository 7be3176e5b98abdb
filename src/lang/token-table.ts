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
  /**
   * One string per distinct identifier: the AST keeps every name it reads, and a 10,000-line
   * file spells its thousand names some 30,000 times.
   */
  readonly #names = new Map<string, string>();

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

  /** The text of identifier token `i`, the same string for every spelling of the name. */
  name(i: number): string {
    const text = this.source.slice(this.starts[i] as number, this.ends[i] as number);
    const known = this.#names.get(text);
    if (known !== undefined) return known;
    this.#names.set(text, text);
    return text;
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

/**
 * A token of a table, read from its columns when asked: what the parser's look-ahead makes. It
 * holds the table and an index (48 bytes instead of a nine-field object) and slices its text
 * only when asked, once, so punctuation the parser merely steps over costs no string.
 */
export class TableToken implements Token {
  readonly #table: TokenTable;
  readonly #index: number;
  #text: string | undefined;

  constructor(table: TokenTable, index: number) {
    this.#table = table;
    this.#index = index;
  }

  get type(): TokenType {
    return this.#table.typeAt(this.#index);
  }

  get text(): string {
    if (this.#text === undefined) {
      const t = this.#table;
      const i = this.#index;
      const type = t.types[i];
      this.#text =
        type === TYPE_CODE.ident
          ? t.name(i)
          : type === TYPE_CODE.eof
            ? ''
            : t.source.slice(t.starts[i] as number, t.ends[i] as number);
    }
    return this.#text;
  }

  get start(): number {
    return this.#table.override?.start ?? (this.#table.starts[this.#index] as number);
  }

  get end(): number {
    return this.#table.override?.end ?? (this.#table.ends[this.#index] as number);
  }

  get line(): number {
    return this.#table.override?.line ?? (this.#table.lines[this.#index] as number);
  }

  get col(): number {
    return this.#table.override?.col ?? (this.#table.cols[this.#index] as number);
  }

  get num(): number {
    return this.#table.nums[this.#index] as number;
  }

  get parts(): readonly StringPart[] | undefined {
    return this.#table.types[this.#index] === TYPE_CODE.string
      ? this.#table.strings.get(this.#index)?.parts
      : undefined;
  }

  get triple(): boolean {
    return this.#table.types[this.#index] === TYPE_CODE.string
      ? (this.#table.strings.get(this.#index)?.triple ?? false)
      : false;
  }
}

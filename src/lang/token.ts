/**
 * Token kinds and the token shape the parser sees. Shared by the lexer, the token table and the
 * parser; holds no logic.
 */
export const TOKEN = {
  Ident: 'ident',
  Number: 'number',
  Duration: 'duration',
  String: 'string',
  Punct: 'punct',
  EOF: 'eof',
} as const;
export type TokenType = (typeof TOKEN)[keyof typeof TOKEN];

/** A `${…}` inside a string literal: the source range of the expression between the braces. */
export interface Interpolation {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
  /** Legacy form with backslash-escaped quotes inside (`"${f(\"a\")}"`): lexed from unescaped text. */
  readonly escaped: boolean;
}
export type StringPart = string | Interpolation;

export interface Token {
  readonly type: TokenType;
  /** Identifier or punctuation text; the source text for literals. */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
  /** Numbers: the value. Durations: milliseconds. Otherwise 0. */
  readonly num: number;
  /** Strings: literal text and interpolations, in order. Otherwise undefined. */
  readonly parts: readonly StringPart[] | undefined;
  /** Strings: whether this was a triple-quoted string. */
  readonly triple: boolean;
}

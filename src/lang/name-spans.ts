/**
 * Spans of single names inside larger nodes. The AST keeps a name span only where the checker
 * reports on it; editor tooling needs one for every name (a loop variable, a catch binding, a
 * member after a dot), and finds it in the source text instead of widening the parser's output.
 */
import type { Span } from './diagnostics.js';

const WORD = /[A-Za-z0-9_]/;

/** A span inside `within` from offset `start` to `end`, with its line and column worked out. */
export function subSpan(text: string, within: Span, start: number, end: number): Span {
  let line = within.line;
  let col = within.col;
  for (let i = within.start; i < start; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      col = 1;
    } else col++;
  }
  return { file: within.file, start, end, line, col };
}

function isWordAt(text: string, at: number, name: string): boolean {
  return (
    text.startsWith(name, at) &&
    !WORD.test(text[at - 1] ?? '') &&
    !WORD.test(text[at + name.length] ?? '')
  );
}

/**
 * The first whole-word occurrence of `name` in `within`, at or after `from` (an absolute
 * offset), or the last one with `last`. Undefined when the text no longer holds it.
 */
export function findName(
  text: string,
  within: Span,
  name: string,
  options: { from?: number; last?: boolean } = {},
): Span | undefined {
  if (name === '') return undefined;
  const end = Math.min(within.end, text.length);
  let found: number | undefined;
  for (let i = Math.max(options.from ?? within.start, within.start); i + name.length <= end; i++) {
    if (!isWordAt(text, i, name)) continue;
    found = i;
    if (!options.last) break;
  }
  return found === undefined ? undefined : subSpan(text, within, found, found + name.length);
}

/** `span` when the text under it is exactly `name`; else the name found inside it. */
export function exactName(text: string, span: Span, name: string): Span | undefined {
  if (span.end - span.start === name.length && text.startsWith(name, span.start)) return span;
  return findName(text, span, name);
}

/** The member name that ends a `a.b` or `a?.b` node. */
export function memberName(text: string, span: Span, name: string): Span | undefined {
  const start = span.end - name.length;
  if (start < span.start || !isWordAt(text, start, name)) return undefined;
  return subSpan(text, span, start, span.end);
}

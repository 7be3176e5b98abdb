/**
 * Positions and diagnostics for MHL source.
 *
 * Every AST node carries a `Span`; every problem found while reading or checking source becomes a
 * `Diagnostic` (collected, never thrown), and problems found while evaluating become a `LangError`
 * (thrown). This module only formats; it reads no files.
 */

/** A half-open range of UTF-16 offsets in one file, with the 1-based line and column of its start. */
export interface Span {
  readonly file: string;
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
}

export type Severity = 'error' | 'warning';

/** Stable diagnostic codes: tests and tools match on these, never on message text. */
export const DIAGNOSTIC_CODES = {
  SYNTAX: 'SYNTAX',
  LEXICAL: 'LEXICAL',
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  IMPORT: 'IMPORT',
  IMPORT_CYCLE: 'IMPORT_CYCLE',
  ASSET: 'ASSET',
  UNKNOWN_NAME: 'UNKNOWN_NAME',
  DUPLICATE: 'DUPLICATE',
  UNKNOWN_TYPE: 'UNKNOWN_TYPE',
  UNKNOWN_PROPERTY: 'UNKNOWN_PROPERTY',
  AGENT_CONFIG: 'AGENT_CONFIG',
  EXTENSION_CONFIG: 'EXTENSION_CONFIG',
  GOTO: 'GOTO',
  UNREACHABLE: 'UNREACHABLE',
  CONST_ASSIGN: 'CONST_ASSIGN',
  INVALID: 'INVALID',
} as const;
export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[keyof typeof DIAGNOSTIC_CODES];

export interface Diagnostic {
  readonly severity: Severity;
  readonly code: DiagnosticCode;
  readonly message: string;
  readonly span: Span;
}

/** Builds a diagnostic; `severity` defaults to error. */
export function diagnostic(
  code: DiagnosticCode,
  message: string,
  span: Span,
  severity: Severity = 'error',
): Diagnostic {
  return { severity, code, message, span };
}

/** Orders diagnostics by file, then offset, then severity (errors first), so output is stable. */
export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  if (a.span.file !== b.span.file) return a.span.file < b.span.file ? -1 : 1;
  if (a.span.start !== b.span.start) return a.span.start - b.span.start;
  if (a.severity !== b.severity) return a.severity === 'error' ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/** `file:line:col: severity: message`, the one-line form every tool prints. */
export function formatDiagnostic(d: Diagnostic, displayFile: string = d.span.file): string {
  return `${displayFile}:${d.span.line}:${d.span.col}: ${d.severity}: ${d.message}`;
}

/**
 * The source line under a span with a caret underline, for humans. Tabs are kept so the caret
 * lines up with the text in a terminal.
 */
export function sourceExcerpt(text: string, span: Span): string {
  const lineStart = span.start - (span.col - 1);
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  const line = text.slice(lineStart, lineEnd).replace(/\r$/, '');
  const pad = line.slice(0, span.col - 1).replace(/[^\t]/g, ' ');
  const width = Math.max(1, Math.min(span.end, lineEnd) - span.start);
  return `  ${line}\n  ${pad}${'^'.repeat(width)}`;
}

/** What a raise site may add to a `LangError`: the error it wraps, and what to do about it. */
export interface LangErrorOptions {
  readonly cause?: unknown;
  /** One sentence on what to do; without it the run reports the hint documented for the code. */
  readonly hint?: string | undefined;
}

/** An error raised while evaluating MHL, carrying the span of the construct that failed. */
export class LangError extends Error {
  readonly code: string;
  readonly span: Span | undefined;
  readonly summary: string;
  readonly hint: string | undefined;

  constructor(code: string, summary: string, span?: Span, options?: LangErrorOptions) {
    super(
      span ? `${span.file}:${span.line}:${span.col}: ${summary}` : summary,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'LangError';
    this.code = code;
    this.span = span;
    this.summary = summary;
    this.hint = options?.hint;
  }
}

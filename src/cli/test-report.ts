/**
 * How `mhl test` shows results: text (one line per case as it ends, failures in detail at the
 * end, then `N passed, N failed, N pending`), TAP version 14 (one test point per case, a YAML
 * block under each failure) and one JSON object. Each reporter gets the cases as they end and
 * the files that could not run; it only formats and writes.
 */
import { type Diagnostic, formatDiagnostic, type Span, sourceExcerpt } from '../lang/index.js';
import type { CaseResult, FileResult } from '../runtime/index.js';
import { displayPath } from './files.js';
import type { Output } from './lint.js';

export interface Reporter {
  /** A file is about to run its cases. */
  file(file: string): void;
  case(result: CaseResult): void;
  /** A file finished; with diagnostics, it could not run (parse or check errors). */
  done(result: FileResult): void;
  /** Everything ran; `durationMs` is the whole run's. */
  end(durationMs: number): void;
}

/** The summary counts of a set of cases. */
export function counts(cases: readonly CaseResult[]) {
  const n = (s: CaseResult['status']) => cases.filter((c) => c.status === s).length;
  return { passed: n('passed'), failed: n('failed'), pending: n('pending') };
}

function where(span: Span): string {
  return `${displayPath(span.file)}:${span.line}:${span.col}`;
}

function title(c: CaseResult): string {
  return `${c.test} › ${c.name}`;
}

/** Text for people, close to `node --test`'s spec reporter. */
export class TextReporter implements Reporter {
  readonly #io: Output;
  readonly #cases: CaseResult[] = [];
  readonly #texts = new Map<string, string>();
  #broken = 0;

  constructor(io: Output) {
    this.#io = io;
  }

  file(file: string): void {
    this.#io.out(`▶ ${displayPath(file)}`);
  }

  case(c: CaseResult): void {
    this.#cases.push(c);
    const time = `(${c.durationMs}ms)`;
    if (c.status === 'passed') this.#io.out(`  ✔ ${title(c)} ${time}`);
    else if (c.status === 'failed') this.#io.out(`  ✖ ${title(c)} ${time}`);
    else this.#io.out(`  ﹣ ${title(c)} ${time} # pending${c.reason ? `: ${c.reason}` : ''}`);
  }

  done(result: FileResult): void {
    // Kept for the excerpts under failures, printed at the end.
    if (result.cases.some((c) => c.status === 'failed'))
      for (const [k, v] of result.texts) this.#texts.set(k, v);
    if (result.diagnostics.length === 0) return;
    this.#broken++;
    this.#io.err(`✖ ${displayPath(result.file)} could not run:`);
    for (const d of result.diagnostics) {
      this.#io.err(formatDiagnostic(d, displayPath(d.span.file)));
      const text = result.texts.get(d.span.file);
      if (text !== undefined) this.#io.err(sourceExcerpt(text, d.span));
    }
  }

  end(): void {
    const failed = this.#cases.filter((c) => c.status === 'failed');
    if (failed.length > 0) {
      this.#io.out('');
      this.#io.out('failures:');
      for (const c of failed) this.#failure(c);
    }
    const n = counts(this.#cases);
    this.#io.out('');
    if (this.#broken > 0)
      this.#io.out(`${this.#broken} ${this.#broken === 1 ? 'file' : 'files'} could not run`);
    this.#io.out(`${n.passed} passed, ${n.failed} failed, ${n.pending} pending`);
  }

  #failure(c: CaseResult): void {
    const f = c.failure;
    if (!f) return;
    this.#io.out('');
    this.#io.out(`✖ ${title(c)}`);
    const what =
      f.kind === 'assertion'
        ? `${f.assertion} failed${f.note ? `: ${f.note}` : ''}`
        : `error ${f.code}: ${f.message}`;
    this.#io.out(`  ${where(f.span)}: ${what}`);
    const text = this.#texts.get(f.span.file);
    if (text !== undefined) this.#io.out(indent(sourceExcerpt(text, f.span), '  '));
    if (f.kind === 'assertion') {
      this.#io.out(`    expected: ${f.expected}`);
      this.#io.out(`    actual:   ${f.actual}`);
    }
    if (c.log.length > 0) {
      this.#io.out('  log:');
      for (const line of c.log) this.#io.out(`    ${line}`);
    }
  }
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

/** TAP version 14: a plan at the end, a YAML diagnostic block under every failure. */
export class TapReporter implements Reporter {
  readonly #io: Output;
  readonly #cases: CaseResult[] = [];
  #points = 0;
  #broken = 0;

  constructor(io: Output) {
    this.#io = io;
    this.#io.out('TAP version 14');
  }

  file(file: string): void {
    this.#io.out(`# ${displayPath(file)}`);
  }

  case(c: CaseResult): void {
    this.#cases.push(c);
    const n = ++this.#points;
    const name = tapEscape(title(c));
    if (c.status === 'passed') return this.#io.out(`ok ${n} - ${name}`);
    if (c.status === 'pending')
      return this.#io.out(`not ok ${n} - ${name} # TODO ${tapEscape(c.reason || 'incomplete')}`);
    this.#io.out(`not ok ${n} - ${name}`);
    const f = c.failure;
    if (!f) return;
    const fields: [string, string | number][] = [
      ['message', f.message],
      ['severity', 'fail'],
      ['code', f.code],
    ];
    if (f.assertion) fields.push(['assertion', f.assertion]);
    if (f.expected !== undefined) fields.push(['expected', f.expected]);
    if (f.actual !== undefined) fields.push(['actual', f.actual]);
    fields.push(['at', where(f.span)], ['duration_ms', c.durationMs]);
    this.#yaml(fields);
  }

  done(result: FileResult): void {
    if (result.diagnostics.length === 0) return;
    this.#broken++;
    const n = ++this.#points;
    this.#io.out(`not ok ${n} - ${tapEscape(displayPath(result.file))} could not run`);
    const first = result.diagnostics.find((d) => d.severity === 'error') ?? result.diagnostics[0];
    if (first) this.#yaml(diagnosticFields(first));
  }

  end(durationMs: number): void {
    const n = counts(this.#cases);
    this.#io.out(`1..${this.#points}`);
    this.#io.out(`# tests ${this.#points}`);
    this.#io.out(`# pass ${n.passed}`);
    this.#io.out(`# fail ${n.failed + this.#broken}`);
    this.#io.out(`# todo ${n.pending}`);
    this.#io.out(`# duration_ms ${Math.round(durationMs)}`);
  }

  #yaml(fields: readonly (readonly [string, string | number])[]): void {
    this.#io.out('  ---');
    // A JSON string is a YAML double-quoted scalar: quotes, colons and newlines stay safe.
    for (const [k, v] of fields) this.#io.out(`  ${k}: ${JSON.stringify(v)}`);
    this.#io.out('  ...');
  }
}

function diagnosticFields(d: Diagnostic): [string, string][] {
  return [
    ['message', d.message],
    ['severity', 'fail'],
    ['code', d.code],
    ['at', where(d.span)],
  ];
}

/** `#` starts a directive and a backslash escapes in TAP names. */
function tapEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/#/g, '\\#').replace(/\n/g, ' ');
}

/** One JSON object on stdout once everything ran. */
export class JsonReporter implements Reporter {
  readonly #io: Output;
  readonly #cases: CaseResult[] = [];
  readonly #files: string[] = [];
  readonly #errors: ReturnType<typeof errorJson>[] = [];

  constructor(io: Output) {
    this.#io = io;
  }

  file(file: string): void {
    this.#files.push(displayPath(file));
  }

  case(c: CaseResult): void {
    this.#cases.push(c);
  }

  done(result: FileResult): void {
    for (const d of result.diagnostics) this.#errors.push(errorJson(d));
  }

  end(durationMs: number): void {
    const n = counts(this.#cases);
    const ok = n.failed === 0 && this.#errors.length === 0 && this.#cases.length > 0;
    const report = {
      ok,
      ...n,
      duration_ms: Math.round(durationMs),
      files: this.#files,
      cases: this.#cases.map(caseJson),
      errors: this.#errors,
    };
    this.#io.out(JSON.stringify(report));
  }
}

function caseJson(c: CaseResult) {
  const f = c.failure;
  return {
    file: displayPath(c.file),
    test: c.test,
    case: c.name,
    line: c.span.line,
    col: c.span.col,
    status: c.status,
    duration_ms: c.durationMs,
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(f
      ? {
          failure: {
            kind: f.kind,
            code: f.code,
            message: f.message,
            ...(f.assertion !== undefined ? { assertion: f.assertion } : {}),
            ...(f.note !== undefined ? { note: f.note } : {}),
            ...(f.expected !== undefined ? { expected: f.expected } : {}),
            ...(f.actual !== undefined ? { actual: f.actual } : {}),
            file: displayPath(f.span.file),
            line: f.span.line,
            col: f.span.col,
          },
        }
      : {}),
    log: c.log,
  };
}

function errorJson(d: Diagnostic) {
  return {
    file: displayPath(d.span.file),
    line: d.span.line,
    col: d.span.col,
    severity: d.severity,
    code: d.code,
    message: d.message,
  };
}

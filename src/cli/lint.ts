/**
 * `mhl lint [paths…]`: checks every `.mh` file under the paths and prints one line per finding,
 * `file:line:col: severity: message` with the source line and a caret, then a summary.
 * Exit status: 0 clean or warnings only, 1 any error.
 */
import {
  checkFiles,
  type Diagnostic,
  diskHost,
  formatDiagnostic,
  sourceExcerpt,
} from '../lang/index.js';
import { displayPath as display, findMhFiles, PathNotFoundError } from './files.js';

export interface LintOptions {
  readonly format: 'text' | 'json';
}

export interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Runs lint and returns the exit code (2 for a path that does not exist). */
export function runLint(paths: readonly string[], options: LintOptions, io: Output): number {
  let files: string[];
  try {
    files = findMhFiles(paths.length ? paths : ['.']);
  } catch (e) {
    if (!(e instanceof PathNotFoundError)) throw e;
    io.err(`mhl: ${e.message}`);
    return 2;
  }
  if (files.length === 0) {
    io.err(`mhl lint: no .mh files found in ${paths.join(', ') || '.'}`);
    return 1;
  }
  const result = checkFiles(files, diskHost);
  const diagnostics = [
    ...result.unreadable.map(
      (u): Diagnostic => ({
        severity: 'error',
        code: 'IMPORT',
        message: `cannot read file: ${u.reason}`,
        span: { file: u.path, start: 0, end: 1, line: 1, col: 1 },
      }),
    ),
    ...result.diagnostics,
  ];
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  const warnings = diagnostics.length - errors;
  const checked = result.graph.modules.length;
  if (options.format === 'json') {
    io.out(
      JSON.stringify({ files: checked, errors, warnings, diagnostics: diagnostics.map(toJson) }),
    );
  } else {
    for (const d of diagnostics) {
      io.out(formatDiagnostic(d, display(d.span.file)));
      const text = result.graph.texts.get(d.span.file);
      if (text !== undefined) io.out(sourceExcerpt(text, d.span));
    }
    io.out(summary(errors, warnings, checked));
  }
  return errors > 0 ? 1 : 0;
}

function toJson(d: Diagnostic) {
  const { file, line, col, start, end } = d.span;
  return {
    file: display(file),
    line,
    col,
    start,
    end,
    severity: d.severity,
    code: d.code,
    message: d.message,
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function summary(errors: number, warnings: number, files: number): string {
  if (errors === 0 && warnings === 0) return `no problems in ${plural(files, 'file')}`;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')} in ${plural(files, 'file')}`;
}

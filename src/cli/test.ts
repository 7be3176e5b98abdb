/**
 * `mhl test [paths…]`: runs the `test` blocks of every `.mh` file under the paths (default `.`)
 * and reports each `describe` case as text, TAP or JSON. Exit status: 0 when every case passed
 * or is pending, 1 when one failed, a file could not run or no test was found, 2 for a usage
 * error (a path that does not exist, a bad option).
 */
import { diskHost } from '../lang/index.js';
import { childEnvironment, type FileResult, runTestFile } from '../runtime/index.js';
import { findMhFiles, PathNotFoundError } from './files.js';
import type { Output } from './lint.js';
import { counts, JsonReporter, type Reporter, TapReporter, TextReporter } from './test-report.js';

export interface TestCliOptions {
  readonly format: 'text' | 'json' | 'tap';
  /** Bounds each case, in milliseconds (a string from the command line). */
  readonly timeoutMs: string;
  /** Only cases whose `Test › case` name contains this text. */
  readonly filter?: string;
}

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** Runs the command; resolves to the exit code. */
export async function runTest(
  paths: readonly string[],
  options: TestCliOptions,
  io: Output,
  signal: AbortSignal,
): Promise<number> {
  const timeoutMs = Number(options.timeoutMs);
  if (!/^\d+$/.test(options.timeoutMs) || timeoutMs < 1) {
    io.err('mhl test: --timeout-ms takes a whole number of milliseconds (at least 1)');
    return EXIT_USAGE;
  }
  let files: string[];
  try {
    files = findMhFiles(paths.length ? paths : ['.']);
  } catch (e) {
    if (!(e instanceof PathNotFoundError)) throw e;
    io.err(`mhl test: ${e.message}`);
    return EXIT_USAGE;
  }
  const reporter = reporterFor(options.format, io);
  const started = performance.now();
  const results: FileResult[] = [];
  const childEnv = childEnvironment(passEnv());
  try {
    for (const file of files) {
      let announced = false;
      const result = await runTestFile(file, diskHost, {
        childEnv,
        env: process.env,
        signal,
        timeoutMs,
        ...(options.filter !== undefined ? { filter: options.filter } : {}),
        onCase: (c) => {
          if (!announced) reporter.file(file);
          announced = true;
          reporter.case(c);
        },
      });
      reporter.done(result);
      results.push(result);
    }
  } catch (e) {
    if (!signal.aborted) throw e;
    io.err('mhl test: interrupted');
    return EXIT_FAILED;
  }
  const cases = results.flatMap((r) => r.cases);
  const broken = results.filter((r) => r.diagnostics.length > 0).length;
  if (cases.length === 0 && broken === 0) {
    const where = paths.join(', ') || '.';
    const what =
      options.filter === undefined ? 'no tests found' : `no test matches "${options.filter}"`;
    io.err(
      `mhl test: ${what} in ${where} (a test is a block: test Name { describe a_case { … } })`,
    );
    // Text has nothing else to say; TAP and JSON readers still get a well-formed report.
    if (options.format === 'text') return EXIT_FAILED;
  }
  reporter.end(performance.now() - started);
  return counts(cases).failed > 0 || broken > 0 || cases.length === 0 ? EXIT_FAILED : EXIT_OK;
}

function reporterFor(format: TestCliOptions['format'], io: Output): Reporter {
  if (format === 'json') return new JsonReporter(io);
  if (format === 'tap') return new TapReporter(io);
  return new TextReporter(io);
}

/** Extra variables children may see, named by the operator: `MHL_PASS_ENV=ANTHROPIC_API_KEY,…`. */
function passEnv(): string[] {
  return (process.env['MHL_PASS_ENV'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

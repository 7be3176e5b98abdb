/**
 * `mhl run FILE`: runs one pipeline or workflow from the command line, with checkpoints under
 * `<state-dir>/.mhl/`, `--resume`, `--dry-run`, text or JSON output and a live progress line on
 * a terminal. Exit status: 0 completed or paused, 1 the run failed or was cancelled, 2 the
 * command, the program or its inputs are wrong. A failed or paused run is offered `--resume`
 * only when a checkpoint holds its progress and every input it was given.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import type { InputDecl, PipelineDecl, Span } from '../lang/index.js';
import { diskHost, formatDiagnostic, sourceExcerpt } from '../lang/index.js';
import {
  canResume,
  childEnvironment,
  coerceInput,
  executeWorkflow,
  type LoadResult,
  loadProgram,
  type RunEvent,
  type RunOutcome,
  selectPipeline,
  toPlain,
  typeText,
  type Value,
} from '../runtime/index.js';
import { Vault, vaultLookup, vaultPaths } from '../secrets/index.js';
import { DirStore, STORE_ERROR_CODES, StoreError } from '../store/index.js';
import { displayPath } from './files.js';
import type { Output } from './lint.js';
import { Progress } from './progress.js';

export interface RunCliOptions {
  readonly input: readonly string[];
  readonly resume: boolean;
  readonly force: boolean;
  readonly session?: string;
  readonly stateDir?: string;
  readonly format: 'text' | 'json';
  readonly dryRun: boolean;
  readonly pipeline?: string;
}

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** Runs the command; resolves to the exit code. */
export async function runRun(
  file: string,
  options: RunCliOptions,
  io: Output,
  signal: AbortSignal,
): Promise<number> {
  if (options.force && !options.resume) return usage(io, '--force only makes sense with --resume');
  if (options.dryRun && options.resume)
    return usage(io, '--dry-run cannot be combined with --resume');
  if (options.session !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(options.session)) {
    return usage(io, '--session takes letters, digits, "-" and "_" (at most 128)');
  }
  const loaded = loadProgram(resolve(file), diskHost);
  if (!loaded.ok) {
    if (options.format === 'json') io.out(JSON.stringify(invalidProgram(loaded, shownFile(file))));
    for (const d of loaded.diagnostics) {
      io.err(formatDiagnostic(d, displayPath(d.span.file)));
      const text = loaded.texts.get(d.span.file);
      if (text !== undefined) io.err(sourceExcerpt(text, d.span));
    }
    io.err(`mhl run: ${file} has errors; fix them (see mhl lint) and run again`);
    return EXIT_USAGE;
  }
  const pipeline = selectPipeline(loaded.pipelines, options.pipeline, loaded.partials);
  if (typeof pipeline === 'string') return usage(io, pipeline);
  const inputs = parseInputs(options.input, pipeline.inputs);
  if (typeof inputs === 'string') return usage(io, inputs);
  if (options.dryRun) return dryRun(pipeline, options.format, io);

  const stateDir = resolve(options.stateDir ?? '.');
  const progress = new Progress(options.format === 'text' && process.stderr.isTTY === true, io);
  const outputLines: string[] = [];
  const output = (text: string) => {
    if (options.format === 'json') outputLines.push(text);
    else progress.line(text);
  };
  const store = new DirStore(resolve(stateDir, '.mhl'));
  const execution = await executeWorkflow({
    program: loaded.program,
    pipeline,
    inputs,
    cwd: process.cwd(),
    childEnv: childEnvironment(passEnv()),
    env: process.env,
    // The user's own vault, by secret name (a run from the command line has no credentials).
    vault: vaultLookup(new Vault(vaultPaths(process.env))),
    state: { store },
    resume: options.resume,
    force: options.force,
    ...(options.session !== undefined ? { session: options.session } : {}),
    signal,
    output,
    agentCache: { dir: resolve(stateDir, '.mhl-cache') },
    onEvent: (event) => progress.event(event, options.format === 'text'),
  }).catch((error: unknown) => {
    // The state dir failing (a full disk) is the operator's to fix, not a crash to trace.
    if (!(error instanceof StoreError)) throw error;
    return error;
  });
  progress.done();
  if (execution instanceof StoreError) {
    io.err(`mhl run: ${stateFailure(execution, stateDir)}`);
    return EXIT_FAILED;
  }
  const { outcome, redactor } = execution;
  const resumable = await canResume(outcome, pipeline, store, redactor);
  const shown = shownFile(file);
  if (options.format === 'json')
    io.out(JSON.stringify(jsonOutcome(outcome, resolve(file), outputLines, resumable, shown)));
  else printOutcome(outcome, io, resumable, shown, loaded.program.texts);
  if (outcome.status === 'completed' || outcome.status === 'paused') return EXIT_OK;
  // Inputs that do not fit the declaration are the caller's mistake, like a bad --input.
  return outcome.error?.kind === 'invalid_inputs' ? EXIT_USAGE : EXIT_FAILED;
}

/** `--format json` for a program that does not check: the first error's fields, then them all. */
function invalidProgram(
  loaded: Extract<LoadResult, { ok: false }>,
  shown: (file: string) => string,
): Record<string, unknown> {
  const diagnostics = loaded.diagnostics.map((d) => ({
    severity: d.severity,
    code: d.code,
    message: d.message,
    file: shown(d.span.file),
    line: d.span.line,
    col: d.span.col,
  }));
  const first = diagnostics[0];
  return {
    ok: false,
    error: first?.message ?? 'the program has errors',
    code: first?.code ?? 'INVALID',
    file: first?.file ?? null,
    line: first?.line ?? null,
    col: first?.col ?? null,
    kind: 'invalid_program',
    hint: 'fix the errors mhl lint reports (all of them are in diagnostics), then run again',
    diagnostics,
  };
}

/** What to tell the operator when the state store refused a write: where, why, what next. */
function stateFailure(error: StoreError, stateDir: string): string {
  const why =
    error.code === STORE_ERROR_CODES.FULL
      ? 'no space left; free space there'
      : `${error.message}; make it writable`;
  return `the run state could not be saved under ${stateDir} (--state-dir): ${why}, then rerun with --resume to continue from the last checkpoint`;
}

function usage(io: Output, message: string): number {
  io.err(`mhl run: ${message}`);
  return EXIT_USAGE;
}

/** Extra variables children may see, named by the operator: `MHL_PASS_ENV=ANTHROPIC_API_KEY,…`. */
function passEnv(): string[] {
  return (process.env['MHL_PASS_ENV'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseInputs(
  pairs: readonly string[],
  decls: readonly InputDecl[],
): Record<string, Value> | string {
  const inputs: Record<string, Value> = {};
  const byName = new Map(decls.map((d) => [d.name, d]));
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return `--input takes key=value, got ${JSON.stringify(pair)}`;
    const key = pair.slice(0, eq);
    try {
      inputs[key] = coerceInput(key, pair.slice(eq + 1), byName.get(key));
    } catch (e) {
      return (e as Error).message.replace(/^.*?: (--input)/, '$1');
    }
  }
  return inputs;
}

function dryRun(pipeline: PipelineDecl, format: 'text' | 'json', io: Output): number {
  const steps = pipeline.steps.map((s) => ({
    name: s.name,
    kind: s.kind === 'Parallel' ? 'parallel' : 'step',
    ...(s.timeoutMs ? { timeout_ms: s.timeoutMs } : {}),
    ...(s.kind === 'Step' && s.entry ? { entry: true } : {}),
    ...(s.kind === 'Parallel' ? { steps: s.steps.map((x) => x.name) } : {}),
  }));
  const inputs = pipeline.inputs.map((i) => ({
    name: i.name,
    type: typeText(i.type),
    required: !i.default,
  }));
  if (format === 'json') {
    io.out(
      JSON.stringify({
        ok: true,
        dry_run: true,
        pipeline: pipeline.name,
        kind: pipeline.flavor,
        loop: pipeline.loop,
        inputs,
        steps,
      }),
    );
    return EXIT_OK;
  }
  io.out(`${pipeline.loop ? 'loop ' : ''}${pipeline.flavor} ${pipeline.name}`);
  for (const i of inputs) io.out(`  input ${i.name}: ${i.type}${i.required ? '' : ' (optional)'}`);
  for (const [n, s] of steps.entries()) {
    const extra = [
      s.entry ? 'entry: the run starts here' : '',
      s.timeout_ms ? `timeout ${s.timeout_ms / 1000}s` : '',
      s.steps ? `parallel: ${s.steps.join(', ')}` : '',
    ].filter(Boolean);
    io.out(`  ${n + 1}. ${s.name}${extra.length ? ` (${extra.join('; ')})` : ''}`);
  }
  return EXIT_OK;
}

/**
 * How an error's file is shown: relative to the current directory, unless the user typed an
 * absolute path (then absolute, as typed). Never an absolute path the user did not type.
 */
function shownFile(typed: string): (file: string) => string {
  if (isAbsolute(typed)) return (file) => file;
  return (file) => (isAbsolute(file) ? relative(process.cwd(), file) || file : file);
}

function printOutcome(
  o: RunOutcome,
  io: Output,
  resumable: boolean,
  shown: (file: string) => string,
  texts: ReadonlyMap<string, string>,
): void {
  const resume = `resume with: mhl run … --resume --session ${o.session}`;
  if (o.status === 'completed') {
    io.out(`result: ${JSON.stringify(toPlain(o.vars))}`);
    io.err(
      `${o.pipeline} ${o.broke ? 'stopped early (break)' : 'completed'}: session ${o.session}`,
    );
  } else if (o.status === 'paused') {
    const reason = o.pauseReason ? `: ${formatReason(o.pauseReason)}` : '';
    io.err(`${o.pipeline} paused${reason}${resumable ? `; ${resume}` : ''}`);
  } else {
    const e = o.error;
    if (e === undefined) io.err('error: run failed');
    else {
      io.err(`${shown(e.file)}:${e.line}:${e.col}: error: ${e.summary}`);
      const text = texts.get(e.file);
      const span = text === undefined ? undefined : spanAt(text, e.file, e.line, e.col);
      if (text !== undefined && span !== undefined) io.err(sourceExcerpt(text, span));
      io.err(`  hint: ${e.hint} [${e.code}]`);
    }
    if (resumable) io.err(`the last completed step is checkpointed; ${resume}`);
  }
}

function formatReason(reason: Value): string {
  return typeof reason === 'string' ? reason : JSON.stringify(toPlain(reason));
}

function jsonOutcome(
  o: RunOutcome,
  file: string,
  log: string[],
  resumable: boolean,
  shown: (file: string) => string,
): Record<string, unknown> {
  if (o.status === 'completed' || o.status === 'paused') {
    return {
      ok: true,
      pipeline: o.pipeline,
      session: o.session,
      file,
      executed: o.executed,
      skipped: o.skipped,
      resumed: o.resumed,
      paused: o.status === 'paused',
      ...(o.status === 'paused' ? { reason: toPlain(o.pauseReason ?? null) } : {}),
      broke: o.broke,
      loop: o.loop,
      iterations: o.iterations,
      terminal_reason: o.terminalReason,
      vars: toPlain(o.vars),
      log,
    };
  }
  const e = o.error;
  return {
    ok: false,
    pipeline: o.pipeline,
    session: o.session,
    error: e?.summary ?? 'run failed',
    code: e?.code ?? 'INTERNAL',
    file: e ? shown(e.file) : null,
    line: e?.line ?? null,
    col: e?.col ?? null,
    kind: e?.kind ?? 'other',
    step: e?.step ?? null,
    hint: hintFor(o, resumable),
    missing: e?.missing ?? [],
    unknown: e?.unknown ?? [],
    log,
  };
}

/** The error's hint, and how to resume when a checkpoint holds the run's progress. */
function hintFor(o: RunOutcome, resumable: boolean): string {
  const hint = o.error?.hint ?? '';
  if (!resumable) return hint;
  const resume = `resume from the last completed step with --resume --session ${o.session}`;
  return hint === '' ? resume : `${hint}; then ${resume}`;
}

/** A one-character span at `line:col` of `text`, for the source excerpt under an error. */
function spanAt(text: string, file: string, line: number, col: number): Span | undefined {
  let start = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', start);
    if (next < 0) return undefined;
    start = next + 1;
  }
  const offset = start + col - 1;
  return offset > text.length ? undefined : { file, start: offset, end: offset + 1, line, col };
}

export type { RunEvent };

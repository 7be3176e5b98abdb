/**
 * Runs the `test` blocks of one `.mh` file (spec §5.9): every `describe` case in declaration
 * order, each in a fresh environment (its own run scope, memories, agent cache and secrets),
 * with the assertions bound in its scope and every pipeline or workflow the file declares or
 * imports callable as `Name.run(inputs: {…})`. Agents, commands and files are real: a case's
 * working directory is its file's folder.
 *
 * A case passes when its body ends, fails on the first failed assertion or raised error (with
 * its position), and is pending when it calls `incomplete()`. Nothing here throws for program
 * errors; a file that does not parse or check is reported with its diagnostics. Output
 * formatting is the caller's (the CLI).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  type DeclOf,
  type Diagnostic,
  LangError,
  type LoadedProgram,
  type Module,
  moduleScope,
  type PipelineDecl,
  parse,
  type SourceHost,
  type Span,
} from '../../lang/index.js';
import { AgentLimiters } from '../agents/agent-rate-limit.js';
import { runAgents } from '../agents/run-agents.js';
import { RunScope, type RunServices } from '../interpreter/declarations.js';
import { PauseSignal } from '../interpreter/signals.js';
import { SpawnLimiter } from '../interpreter/tasks.js';
import { newObject } from '../interpreter/values.js';
import { loadProgram } from '../pipeline/program.js';
import { deadline } from '../services/deadline.js';
import { Redactor } from '../services/redact.js';
import {
  ASSERTION_FAILED,
  AssertionDetail,
  assertionFunctions,
  IncompleteSignal,
} from './assertions.js';
import { workflowReference } from './workflow-call.js';

export type CaseStatus = 'passed' | 'failed' | 'pending';

/** Why a case failed: an assertion, an error it raised, or its time running out. */
export interface CaseFailure {
  readonly kind: 'assertion' | 'error' | 'timeout';
  /** `ASSERTION`, or the raised error's code (`FAIL`, `TYPE`, `AGENT`, …). */
  readonly code: string;
  readonly message: string;
  /** Where: the failed assertion's call, the raising expression, or the case itself. */
  readonly span: Span;
  readonly assertion?: string;
  /** The author's message, when the assertion was given one. */
  readonly note?: string;
  readonly expected?: string;
  readonly actual?: string;
}

export interface CaseResult {
  readonly file: string;
  /** The `test` block's name. */
  readonly test: string;
  /** The `describe` case's name. */
  readonly name: string;
  readonly span: Span;
  readonly status: CaseStatus;
  readonly durationMs: number;
  /** `incomplete(reason)`'s reason (pending cases). */
  readonly reason?: string;
  readonly failure?: CaseFailure;
  /** What the case printed (`log`, agents' and commands' log lines), redacted. */
  readonly log: readonly string[];
}

export interface FileResult {
  readonly file: string;
  readonly cases: readonly CaseResult[];
  /** Why the file could not run: its parse or check errors (then `cases` is empty). */
  readonly diagnostics: readonly Diagnostic[];
  /** Source texts by path, for excerpts under diagnostics. */
  readonly texts: ReadonlyMap<string, string>;
}

export interface TestRunOptions {
  /** The environment child processes get (an allow-list, see `childEnvironment`). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** What `env()` reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Stops the run (SIGINT); the case under way fails as canceled and no further case starts. */
  readonly signal: AbortSignal;
  /** Bounds each case; a case past it fails with kind `timeout`. */
  readonly timeoutMs?: number;
  /** Only cases whose `Test › case` name contains this text run. */
  readonly filter?: string;
  /** Called as each case ends, for live output. */
  readonly onCase?: (result: CaseResult) => void;
}

/** Runs every test case of `file`. Never throws for bad source or failing cases. */
export async function runTestFile(
  file: string,
  host: SourceHost,
  options: TestRunOptions,
): Promise<FileResult> {
  let text: string | undefined;
  try {
    text = host.readText(file);
  } catch (e) {
    return unreadable(file, (e as NodeJS.ErrnoException).code ?? 'unreadable');
  }
  if (text === undefined) return unreadable(file, 'no such file');
  const parsed = parse(text, file);
  const texts = new Map([[file, text]]);
  if (parsed.diagnostics.some((d) => d.severity === 'error'))
    return { file, cases: [], diagnostics: parsed.diagnostics, texts };
  const tests = parsed.program.decls.filter((d): d is DeclOf<'Test'> => d.kind === 'Test');
  if (tests.length === 0) return { file, cases: [], diagnostics: [], texts };
  const loaded = loadProgram(file, host);
  if (!loaded.ok) return { file, cases: [], diagnostics: loaded.diagnostics, texts: loaded.texts };
  const program = loaded.program;
  const cacheRoot = await mkdtemp(join(tmpdir(), 'mhl-test-cache-'));
  const cases: CaseResult[] = [];
  try {
    for (const test of program.root.program.decls) {
      if (test.kind !== 'Test') continue;
      for (const c of test.cases) {
        if (options.filter && !`${test.name} › ${c.name}`.includes(options.filter)) continue;
        options.signal.throwIfAborted();
        const result = await runCase(program, test, c, { ...options, cacheRoot });
        cases.push(result);
        options.onCase?.(result);
      }
    }
  } finally {
    await rm(cacheRoot, { recursive: true, force: true });
  }
  return { file, cases, diagnostics: [], texts: program.texts };
}

/** A file that could not be read, reported like a parse error at its start. */
function unreadable(file: string, reason: string): FileResult {
  const span = { file, start: 0, end: 1, line: 1, col: 1 };
  const d: Diagnostic = {
    severity: 'error',
    code: 'IMPORT',
    message: `cannot read file: ${reason}`,
    span,
  };
  return { file, cases: [], diagnostics: [d], texts: new Map() };
}

type Case = DeclOf<'Test'>['cases'][number];

async function runCase(
  program: LoadedProgram,
  test: DeclOf<'Test'>,
  c: Case,
  options: TestRunOptions & { readonly cacheRoot: string },
): Promise<CaseResult> {
  const started = performance.now();
  const log: string[] = [];
  const redactor = new Redactor();
  const agents = runAgents({ root: options.cacheRoot }, true, new AgentLimiters());
  const services: RunServices = {
    cwd: dirname(program.root.path),
    childEnv: options.childEnv,
    env: options.env,
    redactor,
    output: (line) => log.push(redactor.redact(line)),
    cacheDir: agents.cacheDir,
    agents: agents.agents,
  };
  const startedAt = new Date().toISOString();
  const context = () =>
    newObject([
      ['session_id', ''],
      ['started_at', startedAt],
      ['resumed', false],
      ['principal', ''],
      ['vars', newObject()],
    ]);
  const scope = new RunScope(program, services, context, new SpawnLimiter(4));
  const env = scope.moduleEnv(program.root).child();
  for (const [name, w] of workflowsOf(program)) {
    env.declare(name, workflowReference(w.decl, w.module, program.texts, services), true);
  }
  for (const [name, fn] of assertionFunctions()) env.declare(name, fn, true);
  const limit = deadline(options.signal, options.timeoutMs, `test case "${c.name}"`);
  const base = { file: program.root.path, test: test.name, name: c.name, span: c.span };
  let outcome: Pick<CaseResult, 'status' | 'reason' | 'failure'>;
  try {
    await scope.interpreter.execIn(c.body, env.child(), limit.signal);
    await scope.joinPending();
    outcome = { status: 'passed' };
  } catch (e) {
    outcome = settle(e, c.span, limit.expired(), options.timeoutMs);
    if (options.signal.aborted && !limit.expired()) throw e;
  } finally {
    limit.dispose();
    await agents.dispose();
  }
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  return { ...base, ...redacted(outcome, redactor), durationMs, log };
}

/** A secret the case read (`env("API_KEY")`) never shows in what its failure reports. */
function redacted<T extends Pick<CaseResult, 'reason' | 'failure'>>(o: T, redactor: Redactor): T {
  const f = o.failure;
  const r = (text: string) => redactor.redact(text);
  return {
    ...o,
    ...(o.reason !== undefined ? { reason: r(o.reason) } : {}),
    ...(f
      ? {
          failure: {
            ...f,
            message: r(f.message),
            ...(f.expected !== undefined ? { expected: r(f.expected) } : {}),
            ...(f.actual !== undefined ? { actual: r(f.actual) } : {}),
            ...(f.note !== undefined ? { note: r(f.note) } : {}),
          },
        }
      : {}),
  };
}

/** How a case that threw ended: pending, a failed assertion, a timeout or an error. */
function settle(
  e: unknown,
  caseSpan: Span,
  expired: boolean,
  timeoutMs: number | undefined,
): Pick<CaseResult, 'status' | 'reason' | 'failure'> {
  if (e instanceof IncompleteSignal) return { status: 'pending', reason: e.reason };
  if (expired) {
    const message = `the case ran longer than ${timeoutMs} ms (--timeout-ms)`;
    return {
      status: 'failed',
      failure: { kind: 'timeout', code: 'TIMEOUT', message, span: caseSpan },
    };
  }
  if (e instanceof LangError && e.code === ASSERTION_FAILED && e.cause instanceof AssertionDetail) {
    const d = e.cause;
    const failure: CaseFailure = {
      kind: 'assertion',
      code: ASSERTION_FAILED,
      message: e.summary,
      span: e.span ?? caseSpan,
      assertion: d.assertion,
      ...(d.note !== undefined ? { note: d.note } : {}),
      expected: d.expected,
      actual: d.actual,
    };
    return { status: 'failed', failure };
  }
  if (e instanceof LangError) {
    const failure: CaseFailure = {
      kind: 'error',
      code: e.code,
      message: e.summary,
      span: e.span ?? caseSpan,
    };
    return { status: 'failed', failure };
  }
  if (e instanceof PauseSignal) {
    const message = 'pause() suspends a workflow run; in a test, call it from a step of Name.run()';
    return { status: 'failed', failure: { kind: 'error', code: 'PAUSE', message, span: caseSpan } };
  }
  // A fault of the runtime itself: reported like an error, without its stack.
  const message = e instanceof Error ? e.message : String(e);
  return {
    status: 'failed',
    failure: { kind: 'error', code: 'INTERNAL', message, span: caseSpan },
  };
}

/** Every pipeline a test may run, by the name it sees: the file's own, then imported ones. */
function workflowsOf(program: LoadedProgram): Map<string, { decl: PipelineDecl; module: Module }> {
  const root = program.root;
  const out = new Map<string, { decl: PipelineDecl; module: Module }>();
  const bindings = [...program.namespace.bindings, ...moduleScope(root).bindings];
  for (const [name, b] of bindings) {
    if (b.kind === 'decl' && b.decl.kind === 'Pipeline')
      out.set(name, { decl: b.decl, module: b.module });
  }
  for (const d of root.program.decls) {
    if (d.kind === 'Pipeline' && !d.partial) out.set(d.name, { decl: d, module: root });
  }
  return out;
}

/**
 * Runs MHL source through the real front end (`loadProgram` over a `memoryHost`) and the real
 * runner (`runPipeline` over a MemoryStore-backed CheckpointStore), in a temp directory as cwd.
 * Semantics tests take the outcome, the projected variables and the program's output lines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { memoryHost } from '../../../../src/lang/source-host.js';
import { createAgentState } from '../../../../src/runtime/agents/agents.js';
import { CheckpointStore } from '../../../../src/runtime/checkpoints/checkpoints.js';
import type { VaultLookup } from '../../../../src/runtime/interpreter/builtins.js';
import { toPlain, type Value } from '../../../../src/runtime/interpreter/values.js';
import { loadProgram, selectPipeline } from '../../../../src/runtime/pipeline/program.js';
import { type RunOutcome, runPipeline } from '../../../../src/runtime/pipeline/runner.js';
import { Redactor } from '../../../../src/runtime/services/redact.js';
import { MemoryStore } from '../../../../src/store/index.js';

export interface RunSpec {
  /** Top-level declarations placed before the pipeline. */
  readonly decls?: string;
  /** The pipeline header, e.g. `loop workflow P max 3`; default `workflow P`. */
  readonly header?: string;
  readonly inputs?: Readonly<Record<string, Value>>;
  /** Extra source files by path relative to the program's folder (prompt files, imports). */
  readonly files?: Readonly<Record<string, string>>;
  /** What `env()` sees. */
  readonly env?: Readonly<Record<string, string>>;
  /** What `vault()` reads; without it `vault()` is UNSUPPORTED. */
  readonly vault?: VaultLookup;
  /** Reuse a cwd and state (for `kv`/json memory across runs, resume). */
  readonly cwd?: string;
  readonly state?: CheckpointStore;
  readonly redactor?: Redactor;
  readonly resume?: boolean;
  readonly session?: string;
  readonly ephemeral?: boolean;
  /** Run as a served program: its folder (the cwd) is the root messages are relative to. */
  readonly served?: boolean;
}

export interface Ran {
  readonly outcome: RunOutcome;
  /** The result variables as plain JSON data. */
  readonly vars: Record<string, unknown>;
  readonly output: readonly string[];
  readonly cwd: string;
  readonly state: CheckpointStore;
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp directory, removed when the test file ends. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'mhl-sem-'));
  dirs.push(d);
  return d;
}

/** Runs `body` as the members of a pipeline (default `workflow P { … }`). */
export async function run(body: string, spec: RunSpec = {}): Promise<Ran> {
  const cwd = spec.cwd ?? tempDir();
  const file = join(cwd, 'main.mh');
  const source = `${spec.decls ?? ''}\n${spec.header ?? 'workflow P'} {\n${body}\n}\n`;
  const files = new Map<string, string>([[file, source]]);
  for (const [p, text] of Object.entries(spec.files ?? {})) files.set(join(cwd, p), text);
  const loaded = loadProgram(file, memoryHost(files));
  if (!loaded.ok)
    assert.fail(`program does not load:\n${loaded.diagnostics.map((d) => d.message).join('\n')}`);
  const pipeline = selectPipeline(loaded.pipelines, undefined);
  assert.ok(typeof pipeline !== 'string', String(pipeline));
  const redactor = spec.redactor ?? new Redactor();
  const state = spec.state ?? new CheckpointStore(new MemoryStore(), redactor);
  const output: string[] = [];
  const program = spec.served ? { ...loaded.program, displayRoot: cwd } : loaded.program;
  const outcome = await runPipeline(program, pipeline, {
    inputs: spec.inputs ?? {},
    ...(spec.resume ? { resume: true } : {}),
    ...(spec.session ? { session: spec.session } : {}),
    ...(spec.ephemeral ? { ephemeral: true } : {}),
    signal: new AbortController().signal,
    state,
    services: {
      cwd,
      childEnv: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      env: spec.env ?? {},
      vault: spec.vault,
      redactor,
      output: (line) => output.push(redactor.redact(line)),
      cacheDir: join(cwd, '.mhl-cache'),
      agents: createAgentState(),
    },
  });
  return { outcome, vars: toPlain(outcome.vars) as Record<string, unknown>, output, cwd, state };
}

/** Runs a program that must complete; returns its variables. */
export async function ok(body: string, spec?: RunSpec): Promise<Record<string, unknown>> {
  const r = await run(body, spec);
  assert.equal(r.outcome.status, 'completed', r.outcome.error?.message);
  return r.vars;
}

/** The value `expr` has inside a step (with optional statements before it). */
export async function value(expr: string, setup = '', spec?: RunSpec): Promise<unknown> {
  const vars = await ok(`var r = null\nstep S {\n${setup}\nr = ${expr}\n}`, spec);
  return vars['r'];
}

/** Where a failed run's error points: the step, and the source line/column of the raise. */
export interface Failure {
  readonly kind: string | undefined;
  readonly step: string | undefined;
  /** `line:col` in main.mh of the construct that raised, when the error has a position. */
  readonly at: string | undefined;
}

/**
 * Runs a program that must fail. The outcome carries no error code (only message text), so
 * tests assert the kind, the step and the position of the raise — never the wording.
 */
export async function failure(body: string, spec?: RunSpec): Promise<Failure> {
  const r = await run(body, spec);
  assert.equal(r.outcome.status, 'failed', `expected a failure, got ${JSON.stringify(r.vars)}`);
  const at = /main\.mh:(\d+:\d+): /.exec(r.outcome.error?.message ?? '')?.[1];
  return { kind: r.outcome.error?.kind, step: r.outcome.error?.step, at };
}

/** Where `expr` failed: the offset of the raising construct within `expr`, and the step. */
export interface Raised {
  readonly kind: string | undefined;
  readonly step: string | undefined;
  /** 0-based column of the raise within `expr`; undefined when the error had no position. */
  readonly offset: number | undefined;
}

/** Evaluates `expr` in step S (after one line of `setup`) and returns where it raised. */
export async function raises(expr: string, setup = ''): Promise<Raised> {
  // Line 1 holds the declarations, line 2 the header, 3 `step S {`, 4 the setup, 5 the expr.
  const f = await failure(`step S {\n${setup}\nvar r = ${expr}\n}`);
  const [line, col] = (f.at ?? '').split(':').map(Number);
  return {
    kind: f.kind,
    step: f.step,
    offset: line === 5 && col !== undefined ? col - 9 : undefined,
  };
}

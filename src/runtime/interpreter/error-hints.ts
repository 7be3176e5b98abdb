/**
 * The stable codes of runtime errors and the hint each reports: one sentence saying what the
 * author or operator can change. Raise sites that know better pass their own `hint` to
 * `LangError`; every other error gets the one listed here for its code. docs/errors.md lists
 * them all, and test/unit/runtime/error-hints.test.ts keeps the two in step.
 */
import type { LangError } from '../../lang/index.js';
import { AGENT_FAILURES, AgentError, type AgentFailure } from '../agents/agent-error.js';

/** Codes the runner raises itself (the interpreter's are `LangError` codes). */
export const RUN_ERROR_CODES = {
  STEP_TIMEOUT: 'STEP_TIMEOUT',
  INVALID_INPUTS: 'INVALID_INPUTS',
  DEFINITION_MISMATCH: 'DEFINITION_MISMATCH',
  CONTEXT_REQUIRED: 'CONTEXT_REQUIRED',
  CHECKPOINT: 'CHECKPOINT',
  SECRET_NOT_RESUMABLE: 'SECRET_NOT_RESUMABLE',
  GOTO: 'GOTO',
  CANCELLED: 'CANCELLED',
  INTERNAL: 'INTERNAL',
} as const;

/**
 * The hint for each code, for raise sites that know no better one. One sentence, imperative,
 * saying what the author or operator can change; never the message again.
 */
export const ERROR_HINTS: Readonly<Record<string, string>> = {
  SECRET_NOT_RESUMABLE:
    'read vault() (or env()) in the step that uses the secret, into a step-local var, so a resumed run reads it again; then rerun without --resume',
  FAIL: 'the workflow called fail(): handle the condition it reports, or catch it with try/catch',
  NATIVE:
    'a native operation failed: check its arguments, and the command, file or URL it used; catch it with try/catch to recover',
  AGENT:
    "the agent call failed: check the agent's command, model and prompt (run the command by hand), or raise its retry/timeout settings",
  EXTENSION:
    "an extension call failed: read the server's or agent's message, check the extension's command or url, headers and the env() variables it reads; catch it with try/catch to recover",
  ROUTER:
    "the router could not pick an agent: check its select or decider, that it names one of its agents, and the delegate call's prompt and schema",
  TYPE: 'a value had the wrong type at run time: check what the expression at the position shown holds (log it), or convert it',
  UNDEFINED: 'declare the name before its use, or check its spelling',
  CONST_ASSIGN: "declare the variable with 'var' instead of 'const' to change it",
  FIELD: 'the object has no such field: check its spelling, or use ?. and ?? for optional fields',
  NULL: 'the value was null: use ?. to allow null, or give it a default with ??',
  INDEX: 'the index is out of range or of the wrong type: check the length first',
  CALL: 'check the name and the arguments of the call at the position shown',
  ARITY: 'pass the number of arguments the function declares',
  ARITHMETIC: 'check the operands before dividing (a zero divisor, a non-finite result)',
  MATCH: 'add an arm for this value, or a `_ ->` arm',
  LIMIT_EXCEEDED: 'the loop or recursion ran past its limit: check its exit condition',
  WAIT: 'check the spawned calls the wait names, and how many it needs',
  TIMEOUT: 'raise the timeout, or make the awaited work faster',
  PARALLEL: 'let only one step of a parallel group change each pipeline variable',
  HOOK: 'a lifecycle hook raised: fix the hook the message names (its own error follows), or catch the error inside the hook',
  MEMORY: "check the memory declaration's path and that the folder is writable",
  ASSET: 'check that the prompt, skill or schema file exists next to the workflow and is readable',
  INVALID: 'the construct is not allowed here: see docs/language.md',
  UNSUPPORTED:
    'this construct is not supported by the runtime yet: rewrite it (see docs/language.md)',
  [RUN_ERROR_CODES.STEP_TIMEOUT]:
    'raise the step timeout (step NAME timeout 5m), or make the step faster',
  [RUN_ERROR_CODES.INVALID_INPUTS]:
    'pass every required input with --input name=value, and only declared ones',
  [RUN_ERROR_CODES.DEFINITION_MISMATCH]:
    'the pipeline changed since the checkpoint: rerun without --resume, or add --force',
  [RUN_ERROR_CODES.CONTEXT_REQUIRED]:
    'complete one run of this pipeline first, or drop context.require',
  [RUN_ERROR_CODES.CHECKPOINT]:
    'keep functions and task handles in step-local variables, not pipeline variables',
  [RUN_ERROR_CODES.GOTO]: 'goto names a step of this pipeline: check the name',
  [RUN_ERROR_CODES.CANCELLED]: 'the run was cancelled (a signal, a client); run it again',
  [RUN_ERROR_CODES.INTERNAL]: 'this is a bug in mhl: report it with the workflow that shows it',
};

/** Hints for `AGENT` errors by failure (`AgentError.failure`); others get the `AGENT` hint. */
export const AGENT_HINTS: Readonly<Partial<Record<AgentFailure, string>>> = {
  [AGENT_FAILURES.EXIT]:
    'the agent command exited with an error: run it by hand with the same prompt and read its stderr',
  [AGENT_FAILURES.PROCESS]:
    'the agent command could not be started: check that it is installed and on PATH (MHL_PASS_ENV passes variables it needs)',
  [AGENT_FAILURES.EMPTY]:
    'the agent printed nothing: check that its command writes the answer to stdout',
  [AGENT_FAILURES.TIMEOUT]:
    "the agent ran past its timeout: raise the agent's timeout, or its retry.max_attempts",
  [AGENT_FAILURES.CONFIG]:
    "fix the agent's declaration (command, args, schema) at the position shown",
  [AGENT_FAILURES.HTTP]:
    "the agent's HTTP endpoint failed: check its url, that the service is up, and its API key",
};

/**
 * Hints for `NATIVE` errors by namespace (the part of the op before the dot): what usually goes
 * wrong with that kind of operation. A namespace not listed gets the `NATIVE` hint.
 */
export const NATIVE_HINTS: Readonly<Record<string, string>> = {
  cmd: 'check that the program is installed and on PATH (commands run without a shell: use ["sh", "-c", "…"] for pipes), and its timeout',
  fs: "paths are relative to the run's working directory: check that the file exists and is readable there",
  dir: "paths are relative to the run's working directory: check that the folder exists there",
  git: 'check that git is installed and the working directory is inside a repository',
  http: "check the URL, that the service answers, and the request's headers and timeout",
  json: 'check that the text is valid JSON (log it to see it)',
  time: 'check the duration or date text against the formats in docs/language.md',
  html: 'check the HTML text and the selector',
};

/** The hint of a native error raised by `op` (`cmd.exec`). */
export function nativeHint(op: string): string {
  const namespace = op.slice(0, op.indexOf('.'));
  return NATIVE_HINTS[namespace] ?? (ERROR_HINTS['NATIVE'] as string);
}

/** The documented hint for `code` (an agent failure's own when it has one). */
export function hintFor(code: string, e?: LangError): string {
  if (e instanceof AgentError) {
    const specific = AGENT_HINTS[e.failure];
    if (specific !== undefined) return specific;
  }
  return ERROR_HINTS[code] ?? 'see docs/errors.md for this code';
}

/**
 * One attempt against one engine: the CLI subprocess (through the shared process-group runner)
 * or the Ollama HTTP call, each under the agent's per-attempt timeout. Errors come back as
 * `AgentError`s that tell a timeout from a cancellation; trimming, retries, caching and
 * redaction of messages belong to `agents.ts`.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { LangError } from '../../lang/index.js';
import { formatDuration } from '../natives/args.js';
import { type ProcessResult, runProcess } from '../natives/process-group.js';
import { deadline } from '../services/deadline.js';
import { AGENT_FAILURES, AgentError, cancelledError, internalError } from './agent-error.js';
import { callOllama } from './agent-ollama.js';
import type { AgentSpec } from './agent-spec.js';
import type { AgentContext } from './agents.js';

/**
 * Spawns the CLI (no shell, own process group, `ctx.childEnv`, stdin closed) under the attempt
 * timeout, appends its raw stdout to `log`, and returns stdout untrimmed. Honours `ctx.signal`.
 *
 * @throws AgentError EXIT (non-zero exit, with trimmed stderr), PROCESS (cannot start, output
 *   over the cap), TIMEOUT or CANCELLED. Messages are not yet redacted.
 */
export async function callCli(
  spec: AgentSpec,
  command: string,
  argv: readonly string[],
  ctx: AgentContext,
): Promise<string> {
  const name = spec.name;
  const limit = deadline(ctx.signal, spec.timeoutMs, `agent "${name}"`);
  const signal = limit.signal;
  let result: ProcessResult;
  try {
    result = await runProcess([command, ...argv], {
      op: `agent "${name}"`,
      cwd: ctx.cwd,
      env: ctx.childEnv,
      signal,
    });
  } catch (e) {
    throw stopped(spec, ctx, signal, e) ?? processFailure(spec, e);
  } finally {
    limit.dispose();
  }
  if (spec.logPath !== undefined) await appendLog(spec, ctx, result.stdout);
  if (result.exitCode !== 0) {
    const summary = `agent "${name}" failed (exit code ${result.exitCode})${detail(result.stderr)}`;
    throw new AgentError(name, AGENT_FAILURES.EXIT, summary, { exitCode: result.exitCode });
  }
  return result.stdout;
}

/**
 * Calls an HTTP engine under the attempt timeout and returns its text untrimmed. Honours
 * `ctx.signal`.
 *
 * @throws AgentError CONFIG, HTTP, TIMEOUT or CANCELLED. Messages are not yet redacted.
 */
export async function callHttp(
  spec: AgentSpec,
  model: string,
  prompt: string,
  ctx: AgentContext,
): Promise<string> {
  const limit = deadline(ctx.signal, spec.timeoutMs, `agent "${spec.name}"`);
  try {
    return await callOllama(spec, model, prompt, limit.signal);
  } catch (e) {
    throw stopped(spec, ctx, limit.signal, e) ?? e;
  } finally {
    limit.dispose();
  }
}

/** CANCELLED when the caller aborted, TIMEOUT when only the attempt's timer did, else undefined. */
function stopped(
  spec: AgentSpec,
  ctx: AgentContext,
  signal: AbortSignal,
  cause: unknown,
): AgentError | undefined {
  if (ctx.signal.aborted) return cancelledError(spec.name, ctx.signal, cause);
  if (!signal.aborted) return undefined;
  const after = formatDuration(spec.timeoutMs ?? 0);
  return new AgentError(
    spec.name,
    AGENT_FAILURES.TIMEOUT,
    `agent "${spec.name}" failed: timeout after ${after}`,
  );
}

/** A process runner error (cannot start, output over the cap) as a PROCESS failure. */
function processFailure(spec: AgentSpec, e: unknown): AgentError {
  if (!(e instanceof LangError)) return internalError(spec.name, e);
  return new AgentError(spec.name, AGENT_FAILURES.PROCESS, e.summary);
}

/** Appends redacted raw stdout to the agent's log; a failed write is reported, not raised. */
async function appendLog(spec: AgentSpec, ctx: AgentContext, stdout: string): Promise<void> {
  const path = resolve(ctx.cwd, spec.logPath ?? '');
  try {
    await mkdir(dirname(path), { recursive: true });
    await appendFile(path, ctx.redactor.redact(stdout), 'utf8');
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    ctx.output(ctx.redactor.redact(`agent "${spec.name}": cannot write log ${path}: ${reason}`));
  }
}

/** `: <stderr>` when there is any, trimmed. */
function detail(stderr: string): string {
  const text = stderr.trim();
  return text === '' ? '' : `: ${text}`;
}

/**
 * Runs one agent call (spec §5.1): cache lookup → retry loop { rate-limit acquire → subprocess or
 * HTTP call } → fallbacks in order, each leg with its own cache, retry and limits. The result is
 * stdout trimmed, verbatim. Every error is a span-less `AgentError` (code `AGENT`) whose message
 * is redacted (§10). Hooks (`before`/`after`), prompt resolution and `skills` belong to the
 * interpreter; this module knows nothing of MHL scopes or values.
 */
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { wrapMessage } from '../interpreter/wrap-message.js';
import type { Redactor } from '../services/redact.js';
import { buildArgv } from './agent-argv.js';
import { agentCacheKey, MemoryCache, readDiskCache, writeDiskCache } from './agent-cache.js';
import { callCli, callHttp } from './agent-engines.js';
import { AGENT_FAILURES, AgentError, cancelledError, internalError } from './agent-error.js';
import { AgentLimiters } from './agent-rate-limit.js';
import type { AgentRequest, AgentSpec } from './agent-spec.js';

/** No single backoff wait is longer than this (spec §5.1 `retry`). */
export const MAX_RETRY_WAIT_MS = 30_000;

/**
 * The agent state calls share: the in-memory response cache (one run's: an answer computed in
 * one caller's working directory must never be served to another) and the per-agent rate
 * limiters (shared per agent for the process, spec §5.1: the server owns one and passes it).
 */
export interface AgentState {
  readonly memoryCache: MemoryCache;
  readonly limiters: AgentLimiters;
}

/** A fresh, empty `AgentState`, with `limiters` shared with other runs or its own. */
export function createAgentState(limiters: AgentLimiters = new AgentLimiters()): AgentState {
  return { memoryCache: new MemoryCache(), limiters };
}

/** What a call needs from the run. */
export interface AgentContext {
  /** Aborted when the run is cancelled or the step's deadline passes; never retried. */
  readonly signal: AbortSignal;
  /** The run's working directory: the child's cwd, and the base of `log` paths. */
  readonly cwd: string;
  /** The child's complete environment, passed as is (already allow-listed). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** Redacts error messages, trace lines and the `log` file. */
  readonly redactor: Redactor;
  /** Trace lines (`trace: true`) and log-write warnings, one line per call. */
  readonly output: (line: string) => void;
  /** Where `storage: "disk"` entries live (relative paths resolve against `cwd`). */
  readonly cacheDir: string;
  /** Clock for cache expiry and rate windows; default `Date.now`. */
  readonly now?: () => number;
  /** The run's cache and the limiters it shares (see `AgentState`). */
  readonly state: AgentState;
  /** Uniform [0, 1) source for backoff jitter; default `Math.random`. */
  readonly random?: () => number;
}

type Engine =
  | { readonly kind: 'cli'; readonly command: string }
  | { readonly kind: 'ollama'; readonly model: string };

/**
 * Calls `spec` with `request` and returns the response (stdout trimmed). On failure tries each of
 * `spec.fallback` in order; if every leg fails, throws the last leg's error. Honours
 * `ctx.signal`: cancellation kills the agent's whole process group and is never retried.
 *
 * @throws AgentError (code `AGENT`) with `failure` CONFIG, UNSUPPORTED, PROCESS, EXIT, EMPTY,
 *   TIMEOUT, HTTP, CANCELLED or INTERNAL.
 */
export async function runAgent(
  spec: AgentSpec,
  request: AgentRequest,
  ctx: AgentContext,
): Promise<string> {
  const legs = [spec, ...spec.fallback];
  let last: AgentError | undefined;
  for (const [i, leg] of legs.entries()) {
    try {
      return await runLeg(leg, request, ctx);
    } catch (e) {
      last = toAgentError(e, leg, ctx);
      if (last.failure === AGENT_FAILURES.CANCELLED) throw last;
      const next = legs[i + 1];
      if (next !== undefined && leg.trace) {
        const failed = wrapMessage(`${leg.name} failed: `, `agent "${leg.name}"`, last.summary);
        trace(ctx, `${failed}; trying fallback ${next.name}`);
      }
    }
  }
  throw last ?? new AgentError(spec.name, AGENT_FAILURES.CONFIG, 'no agent to call');
}

/**
 * One leg: cache lookup, the retry loop, cache store. Disk entries hold the redacted response
 * (§10: nothing persisted keeps a registered secret); memory entries hold it as returned.
 */
async function runLeg(spec: AgentSpec, request: AgentRequest, ctx: AgentContext): Promise<string> {
  if (request.prompt === '') {
    throw new AgentError(
      spec.name,
      AGENT_FAILURES.CONFIG,
      `${spec.name}.run requires a non-empty prompt`,
    );
  }
  const engine = resolveEngine(spec);
  const argv = engine.kind === 'cli' ? buildArgv(spec.name, spec.args, request) : [];
  const now = ctx.now ?? Date.now;
  const { state } = ctx;
  const cache = spec.cache;
  const key = cache ? agentCacheKey(spec, request) : '';
  const cacheDir = resolve(ctx.cwd, ctx.cacheDir);
  if (cache) {
    const hit =
      cache.storage === 'memory'
        ? state.memoryCache.get(key, now())
        : await readDiskCache(cacheDir, key, now(), ctx.signal);
    if (hit !== undefined) {
      if (spec.trace) trace(ctx, `${spec.name} response (cached): ${hit}`);
      return hit;
    }
  }
  const response = await withRetry(spec, ctx, (attempt) => {
    if (spec.trace)
      trace(ctx, `calling ${spec.name}…${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
    return attemptOnce(spec, engine, argv, request, ctx, state);
  });
  if (cache) {
    const expiresAt = now() + cache.ttlMs;
    if (cache.storage === 'memory') state.memoryCache.set(key, response, expiresAt);
    else {
      const stored = ctx.redactor.redact(response);
      await writeDiskCache(cacheDir, key, stored, expiresAt, ctx.signal);
    }
  }
  if (spec.trace) trace(ctx, `${spec.name} response: ${response}`);
  return response;
}

function resolveEngine(spec: AgentSpec): Engine {
  const engine = spec.engine;
  if (engine === undefined || engine === '' || engine.startsWith('cli/')) {
    if (spec.command === undefined || spec.command === '') {
      throw new AgentError(spec.name, AGENT_FAILURES.CONFIG, `agent "${spec.name}" has no command`);
    }
    return { kind: 'cli', command: spec.command };
  }
  if (engine.startsWith('ollama/') && engine.length > 'ollama/'.length) {
    return { kind: 'ollama', model: engine.slice('ollama/'.length) };
  }
  throw new AgentError(
    spec.name,
    AGENT_FAILURES.UNSUPPORTED,
    `agent "${spec.name}": engine "${engine}" is not supported yet`,
  );
}

/**
 * Runs `attempt` up to `retry.maxAttempts` times, waiting `random · min(30 s, delay · 2^n)`
 * between tries. Retries only errors whose message contains a `retryOn` entry (all, when unset);
 * never cancellation, configuration or unsupported-engine errors.
 */
async function withRetry(
  spec: AgentSpec,
  ctx: AgentContext,
  attempt: (n: number) => Promise<string>,
): Promise<string> {
  const max = Math.max(1, Math.floor(spec.retry.maxAttempts));
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      const error = toAgentError(e, spec, ctx);
      if (n >= max || !retryable(error, spec.retry.retryOn)) throw error;
      const cap = Math.min(MAX_RETRY_WAIT_MS, Math.max(0, spec.retry.delayMs) * 2 ** (n - 1));
      const wait = Math.floor((ctx.random ?? Math.random)() * cap);
      if (spec.trace) {
        const failed = wrapMessage(`${spec.name} failed: `, `agent "${spec.name}"`, error.summary);
        trace(ctx, `${failed}; retrying in ${wait}ms`);
      }
      try {
        await sleep(wait, undefined, { signal: ctx.signal });
      } catch (cause) {
        throw cancelledError(spec.name, ctx.signal, cause);
      }
    }
  }
}

function retryable(error: AgentError, retryOn: readonly string[] | undefined): boolean {
  const never: string[] = [
    AGENT_FAILURES.CANCELLED,
    AGENT_FAILURES.CONFIG,
    AGENT_FAILURES.UNSUPPORTED,
  ];
  if (never.includes(error.failure)) return false;
  return retryOn === undefined || retryOn.some((s) => error.summary.includes(s));
}

/** One try: take a rate-limit slot, call the engine, require a non-empty response. */
async function attemptOnce(
  spec: AgentSpec,
  engine: Engine,
  argv: readonly string[],
  request: AgentRequest,
  ctx: AgentContext,
  state: AgentState,
): Promise<string> {
  const limiter = state.limiters.for(spec, ctx.now ?? Date.now);
  let release: (() => void) | undefined;
  try {
    release = await limiter?.acquire(ctx.signal);
  } catch (cause) {
    throw cancelledError(spec.name, ctx.signal, cause);
  }
  try {
    const raw =
      engine.kind === 'cli'
        ? await callCli(spec, engine.command, argv, ctx)
        : await callHttp(spec, engine.model, request.prompt, ctx);
    const response = raw.trim();
    if (response === '') {
      throw new AgentError(
        spec.name,
        AGENT_FAILURES.EMPTY,
        `agent "${spec.name}" returned an empty response`,
      );
    }
    return response;
  } finally {
    release?.();
  }
}

/**
 * Any error from a leg as a redacted `AgentError`; an aborted signal always means CANCELLED.
 * When redaction changes the message, the cause is dropped: it may carry the secret.
 */
function toAgentError(e: unknown, spec: AgentSpec, ctx: AgentContext): AgentError {
  if (ctx.signal.aborted && !(e instanceof AgentError && e.failure === AGENT_FAILURES.CANCELLED)) {
    return cancelledError(spec.name, ctx.signal, e);
  }
  const error = e instanceof AgentError ? e : internalError(spec.name, e);
  const summary = ctx.redactor.redact(error.summary);
  if (summary === error.summary) return error;
  return new AgentError(error.agent, error.failure, summary, { exitCode: error.exitCode });
}

function trace(ctx: AgentContext, line: string): void {
  ctx.output(ctx.redactor.redact(line));
}

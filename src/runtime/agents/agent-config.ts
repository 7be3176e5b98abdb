/**
 * Turns an `agent X { … }` declaration into an `AgentSpec` by evaluating its properties. String
 * literals in `command`/`args` are taken verbatim from the source (no interpolation), so the
 * `${prompt}` and `${schema}` placeholders survive, as the language specifies.
 */
import type { Expr, ExprOf, Property } from '../../lang/index.js';
import { LangError } from '../../lang/index.js';
import {
  DurationValue,
  formatValue,
  isObject,
  type MhlObject,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import type {
  AgentArg,
  AgentSpec,
  CachePolicy,
  RateLimitPolicy,
  RetryPolicy,
} from './agent-spec.js';

const DAY_MS = 86_400_000;

export interface AgentConfigContext {
  /** Evaluates a property value in the agent's module scope. */
  readonly evaluate: (e: Expr) => Promise<Value>;
  /** The source text of a file, for verbatim string literals. */
  readonly sourceOf: (file: string) => string | undefined;
  /** Resolves a fallback named by identifier to its declaration's properties. */
  readonly agentProps: (name: string) => { name: string; props: readonly Property[] } | undefined;
}

/** Builds the spec for one agent declaration (or inline `agent { … }` fallback). */
export async function buildAgentSpec(
  name: string,
  props: readonly Property[],
  ctx: AgentConfigContext,
  allowFallback = true,
): Promise<AgentSpec> {
  const prop = (key: string) => props.find((p) => p.name === key)?.value;
  const value = async (key: string) => {
    const e = prop(key);
    return e === undefined
      ? undefined
      : e.kind === 'Duration'
        ? new DurationValue(e.ms)
        : ctx.evaluate(e);
  };
  const command = prop('command');
  const fallback: AgentSpec[] = [];
  const fallbackList = prop('fallback');
  if (allowFallback && fallbackList?.kind === 'Array') {
    for (const item of fallbackList.items) fallback.push(await fallbackSpec(item, ctx));
  }
  return {
    name,
    engine: optionalString(await value('engine'), `${name}.engine`),
    command: command
      ? (verbatim(command, ctx) ?? formatValue(await ctx.evaluate(command)))
      : undefined,
    args: await agentArgs(prop('args'), ctx),
    endpoint: optionalString(await value('endpoint'), `${name}.endpoint`),
    temperature: optionalNumber(await value('temperature'), `${name}.temperature`),
    timeoutMs: durationMs(await value('timeout'), `${name}.timeout`),
    retry: retryPolicy(await value('retry'), name),
    cache: cachePolicy(await value('cache'), name),
    rateLimit: rateLimit(await value('rate_limit'), name),
    logPath: optionalString(await value('log'), `${name}.log`),
    trace: (await value('trace')) === true,
    fallback,
  };
}

async function fallbackSpec(item: Expr, ctx: AgentConfigContext): Promise<AgentSpec> {
  if (item.kind === 'InlineAgent') return buildAgentSpec('<inline>', item.props, ctx, false);
  if (item.kind === 'Ident') {
    const decl = ctx.agentProps(item.name);
    if (decl) return buildAgentSpec(decl.name, decl.props, ctx, false);
  }
  throw new LangError(
    'AGENT',
    'fallback entries must be declared agents or inline agent { … } literals',
    item.span,
  );
}

/** The text of a plain string literal as written in the source; undefined for other expressions. */
function verbatim(e: Expr, ctx: AgentConfigContext): string | undefined {
  if (e.kind !== 'String') return undefined;
  if (e.segments.length === 1 && typeof e.segments[0] === 'string') return e.segments[0];
  const source = ctx.sourceOf(e.span.file);
  if (source === undefined) return undefined;
  return e.triple
    ? source.slice(e.span.start + 3, e.span.end - 3).trim()
    : source.slice(e.span.start + 1, e.span.end - 1);
}

async function agentArgs(e: Expr | undefined, ctx: AgentConfigContext): Promise<AgentArg[]> {
  if (!e) return [];
  const items: (string | undefined)[] = [];
  if (e.kind === 'Array') {
    for (const item of e.items)
      items.push(verbatim(item, ctx) ?? formatValue(await ctx.evaluate(item)));
  } else {
    const v = await ctx.evaluate(e);
    if (!Array.isArray(v))
      throw new LangError('AGENT', `args must be an array, got ${typeOf(v)}`, e.span);
    items.push(...v.map(formatValue));
  }
  return items.map((text): AgentArg => {
    if (text === '${prompt}') return { kind: 'prompt' };
    if (text === '${schema}') return { kind: 'schema' };
    return { kind: 'text', value: text ?? '' };
  });
}

function optionalString(v: Value | undefined, what: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new LangError('AGENT', `${what} must be a string, got ${typeOf(v)}`);
  return v;
}

function optionalNumber(v: Value | undefined, what: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number')
    throw new LangError('AGENT', `${what} must be a number, got ${typeOf(v)}`);
  return v;
}

function durationMs(v: Value | undefined, what: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (v instanceof DurationValue) return v.ms;
  throw new LangError('AGENT', `${what} must be a duration like 30s, got ${typeOf(v)}`);
}

function settings(v: Value | undefined, what: string): MhlObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new LangError('AGENT', `${what} must be an object, got ${typeOf(v)}`);
  return v;
}

function retryPolicy(v: Value | undefined, name: string): RetryPolicy {
  const o = settings(v, `${name}.retry`);
  const attempts = optionalNumber(o?.['max_attempts'], `${name}.retry.max_attempts`) ?? 1;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new LangError('AGENT', `${name}.retry.max_attempts must be a whole number ≥ 1`);
  const backoff = optionalString(o?.['backoff'], `${name}.retry.backoff`);
  if (backoff !== undefined && backoff !== 'exponential') {
    throw new LangError(
      'AGENT',
      `${name}.retry.backoff "${backoff}" is not supported; use "exponential"`,
    );
  }
  const retryOn = o?.['retry_on'];
  return {
    maxAttempts: attempts,
    delayMs: durationMs(o?.['delay'], `${name}.retry.delay`) ?? 1000,
    retryOn: Array.isArray(retryOn) ? retryOn.map(formatValue) : undefined,
  };
}

function cachePolicy(v: Value | undefined, name: string): CachePolicy | undefined {
  const o = settings(v, `${name}.cache`);
  if (!o) return undefined;
  const strategy = optionalString(o['strategy'], `${name}.cache.strategy`);
  if (strategy !== undefined && strategy !== 'exact') {
    throw new LangError(
      'AGENT',
      `${name}.cache.strategy "${strategy}" is not supported; use "exact"`,
    );
  }
  const storage = optionalString(o['storage'], `${name}.cache.storage`);
  return {
    ttlMs: durationMs(o['ttl'], `${name}.cache.ttl`) ?? DAY_MS,
    storage: storage === 'disk' ? 'disk' : 'memory',
  };
}

function rateLimit(v: Value | undefined, name: string): RateLimitPolicy | undefined {
  const o = settings(v, `${name}.rate_limit`);
  if (!o) return undefined;
  const onExceeded = optionalString(o['on_exceeded'], `${name}.rate_limit.on_exceeded`);
  if (onExceeded !== undefined && onExceeded !== 'queue') {
    throw new LangError(
      'AGENT',
      `${name}.rate_limit.on_exceeded "${onExceeded}" is not supported; use "queue"`,
    );
  }
  return {
    requestsPerMinute: optionalNumber(
      o['requests_per_minute'],
      `${name}.rate_limit.requests_per_minute`,
    ),
    concurrency: optionalNumber(o['concurrency'], `${name}.rate_limit.concurrency`),
  };
}

/** The hooks of an agent declaration, as lambda nodes (they run in the caller's scope). */
export function agentHooks(props: readonly Property[]) {
  const lambda = (key: string) => {
    const v = props.find((p) => p.name === key)?.value;
    return v?.kind === 'Lambda' ? (v as ExprOf<'Lambda'>) : undefined;
  };
  return {
    before: lambda('before'),
    after: lambda('after'),
    systemPrompt: lambda('system_prompt'),
  };
}

/**
 * An agent declaration after evaluation: what `agents.ts` needs to run one call. The interpreter
 * builds it from `agent X { … }` (evaluating every property except hooks) and runs hooks itself,
 * so the agent runner knows nothing of MHL scopes.
 */

/** One argv element: verbatim text, or the `${prompt}` / `${schema}` placeholder. */
export type AgentArg =
  | { readonly kind: 'text'; readonly value: string }
  | { readonly kind: 'prompt' }
  | { readonly kind: 'schema' };

export interface RetryPolicy {
  /** Total attempts, at least 1. */
  readonly maxAttempts: number;
  /** Base delay; exponential backoff with full jitter, each wait capped at 30 s. */
  readonly delayMs: number;
  /** Substrings (numbers as text) of error messages worth retrying; undefined: every error. */
  readonly retryOn: readonly string[] | undefined;
}

export interface CachePolicy {
  readonly ttlMs: number;
  readonly storage: 'memory' | 'disk';
}

export interface RateLimitPolicy {
  readonly requestsPerMinute: number | undefined;
  readonly concurrency: number | undefined;
}

export interface AgentSpec {
  /** The declared name (`Reviewer`), or `<inline>` for an inline fallback. */
  readonly name: string;
  /** `cli/…` or absent: a subprocess. `ollama/<model>`: HTTP. Anything else fails at call time. */
  readonly engine: string | undefined;
  readonly command: string | undefined;
  readonly args: readonly AgentArg[];
  readonly endpoint: string | undefined;
  readonly temperature: number | undefined;
  /** Per attempt. */
  readonly timeoutMs: number | undefined;
  readonly retry: RetryPolicy;
  readonly cache: CachePolicy | undefined;
  readonly rateLimit: RateLimitPolicy | undefined;
  /** Appends raw stdout of each call here (relative to the run's working directory). */
  readonly logPath: string | undefined;
  readonly trace: boolean;
  /** Tried in order after this agent (and its retries) fails; fallbacks have no fallbacks. */
  readonly fallback: readonly AgentSpec[];
}

export interface AgentRequest {
  /** Non-empty. */
  readonly prompt: string;
  readonly schema: string | undefined;
}

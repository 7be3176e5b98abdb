/**
 * The agent services one run or one rendered prompt gets: where agents with
 * `cache: {storage: "disk"}` keep entries, and the agent state (its own in-memory response
 * cache, the rate limiters it shares). `executeWorkflow` and `renderServedPrompt` both take them
 * from here, so a served call and a served prompt place and remove caches the same way. It
 * creates no folder itself (a disk cache makes its folder when it first writes).
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentLimiters } from './agent-rate-limit.js';
import { type AgentState, createAgentState } from './agents.js';

/**
 * Where agents with `cache: {storage: "disk"}` keep entries: a folder that outlives the run
 * (`mhl run`'s `.mhl-cache`), or a fresh folder under a root the server owns, removed when the
 * run ends (a served run must leave nothing behind; the server removes the root at shutdown).
 */
export type AgentCache = { readonly dir: string } | { readonly root: string };

/** What a run without agents is handed as its cache folder: nothing ever creates it. */
export const UNUSED_CACHE_DIR = join(tmpdir(), 'mhl-no-agent-cache');

/** One run's agent services; `dispose()` removes its temporary cache folder, if it had one. */
export interface RunAgents {
  readonly cacheDir: string;
  readonly agents: AgentState;
  /** Removes the run's temporary cache folder; undefined (nothing to wait for) without one. */
  readonly dispose: () => Promise<void> | undefined;
}

/**
 * The agent services of one run: under a `root`, a fresh folder of its own when the program
 * declares agents (nothing else could write there); `limiters` are the server's shared ones, or
 * the run's own without them.
 */
export function runAgents(
  cache: AgentCache,
  usesAgents: boolean,
  limiters: AgentLimiters = new AgentLimiters(),
): RunAgents {
  const temporary = 'root' in cache && usesAgents ? join(cache.root, randomUUID()) : undefined;
  const cacheDir = 'dir' in cache ? cache.dir : (temporary ?? UNUSED_CACHE_DIR);
  return {
    cacheDir,
    agents: createAgentState(limiters),
    dispose: () =>
      temporary === undefined ? undefined : rm(temporary, { recursive: true, force: true }),
  };
}

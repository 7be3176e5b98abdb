/**
 * `executeWorkflow()`: the one way a run is started, by `mhl run`, by a synchronous tool call
 * and by each leg of an async run. It builds the run's services (redactor, redacted output,
 * checkpoint store, agent cache folder, deadline) from one options object, so the callers
 * differ only in what they pass. It knows nothing of protocols, surfaces or run records.
 */
import { randomUUID } from 'node:crypto';
import {
  type LoadedProgram,
  type PipelineDecl,
  type PipelineDefinition,
  pipelineDefinition,
} from '../lang/index.js';
import { MemoryStore, type Store } from '../store/index.js';
import type { AgentLimiters } from './agents/agent-rate-limit.js';
import { type AgentCache, type RunAgents, runAgents } from './agents/run-agents.js';
import { CheckpointStore } from './checkpoints/checkpoints.js';
import type { VaultLookup } from './interpreter/builtins.js';
import type { Value } from './interpreter/values.js';
import {
  type RunEvent,
  type RunOptions,
  type RunOutcome,
  startPipeline,
} from './pipeline/runner.js';
import { type Cancellation, signalOf } from './services/cancellation.js';
import { type Deadline, deadline } from './services/deadline.js';
import { Redactor } from './services/redact.js';

/**
 * What a run writes: checkpoints and results in a store, or nothing that outlives it
 * (`'ephemeral'`). An ephemeral run given a store still writes a pause's checkpoint there, so
 * its caller can resume it from that point (a synchronous call answered with a question).
 * `latestPointer: false` keeps no `<Pipeline>.latest` (see `CheckpointStoreOptions`).
 */
export type WorkflowState =
  | { readonly store: Store; readonly ephemeral?: boolean; readonly latestPointer?: boolean }
  | 'ephemeral';

export interface ExecuteOptions {
  readonly program: LoadedProgram;
  readonly pipeline: PipelineDecl;
  /** Computed once by the catalog; `mhl run` leaves it out and it is computed here. */
  readonly definition?: PipelineDefinition;
  readonly inputs: Readonly<Record<string, Value>>;
  readonly cwd: string;
  /** The environment child processes get (an allow-list, see `childEnvironment`). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** What `env()` reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What `vault()` reads (src/secrets); without it `vault()` fails with `UNSUPPORTED`. */
  readonly vault?: VaultLookup | undefined;
  readonly state: WorkflowState;
  /** The session to start or resume; a fresh run without one gets a random id. */
  readonly session?: string;
  readonly resume?: boolean;
  readonly force?: boolean;
  /** The verified caller (`context.principal`). */
  readonly principal?: string;
  readonly signal: Cancellation;
  /** Bounds the whole run; `what` names it in the abort reason. */
  readonly timeout?: { readonly ms: number; readonly what: string };
  readonly onEvent?: (event: RunEvent) => void;
  /** Program output, one line at a time, already redacted. */
  readonly output: (line: string) => void;
  readonly agentCache: AgentCache;
  /**
   * Agents' rate limits, shared per agent by every run a server makes (spec §5.1): the server
   * owns one. Without it the run has its own (right for `mhl run`: one run per process).
   */
  readonly agentLimiters?: AgentLimiters;
  /** The run's secret registry, when the caller must redact with it even if the run throws. */
  readonly redactor?: Redactor;
}

export interface Execution {
  readonly outcome: RunOutcome;
  /** Whether `timeout` (not the caller's signal) stopped the run. */
  readonly timedOut: boolean;
  /** The run's secret registry: redact anything of the run shown after it ended. */
  readonly redactor: Redactor;
}

/**
 * Session ids of throwaway runs: a random prefix drawn once per process and a counter, 32 hex
 * digits like a persisted run's. Unique within the process (and, by the prefix, across
 * restarts), which is all a run that is never persisted needs; a UUID per call was 1% of a
 * trivial synchronous call's CPU.
 */
const EPHEMERAL_PREFIX = randomUUID().replaceAll('-', '').slice(0, 20);
let ephemeralCount = 0;
function ephemeralSession(): string {
  ephemeralCount += 1;
  return EPHEMERAL_PREFIX + ephemeralCount.toString(16).padStart(12, '0');
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Runs one pipeline or workflow to its outcome. Never throws for program errors. */
export async function executeWorkflow(options: ExecuteOptions): Promise<Execution> {
  return await startWorkflow(options);
}

/**
 * `executeWorkflow` for callers that await only a promise: a run with nothing to wait for
 * (see `startPipeline`) answers its execution at once. A throw may be synchronous.
 */
export function startWorkflow(options: ExecuteOptions): Execution | Promise<Execution> {
  const definition = options.definition ?? pipelineDefinition(options.program, options.pipeline);
  const redactor = options.redactor ?? new Redactor();
  const ephemeral = options.state === 'ephemeral' || options.state.ephemeral === true;
  // A throwaway run writes no state at all: only an agent's disk cache touches the file system.
  const store = options.state === 'ephemeral' ? new MemoryStore() : options.state.store;
  // The response cache is the run's own, like its disk cache folder under a root.
  const agents = runAgents(options.agentCache, definition.usesAgents, options.agentLimiters);
  // Without a time limit the run takes the caller's cancellation as it is: a deferred one (a
  // server request's) makes no AbortSignal unless the run needs one.
  const { timeout } = options;
  const limit =
    timeout === undefined
      ? undefined
      : deadline(signalOf(options.signal), timeout.ms, timeout.what);
  const { output } = options;
  let started: RunOutcome | Promise<RunOutcome>;
  try {
    // Built by assignment, not conditional spreads: each spread is an object made and copied,
    // and this runs for every synchronous call.
    const run: Mutable<RunOptions> = {
      inputs: options.inputs,
      definition,
      signal: limit?.signal ?? options.signal,
      state: new CheckpointStore(
        store,
        redactor,
        options.state !== 'ephemeral' && options.state.latestPointer === false
          ? { latestPointer: false }
          : undefined,
      ),
      services: {
        cwd: options.cwd,
        childEnv: options.childEnv,
        env: options.env,
        vault: options.vault,
        redactor,
        output: (line) => output(redactor.redact(line)),
        cacheDir: agents.cacheDir,
        agents: agents.agents,
      },
    };
    if (options.resume !== undefined) run.resume = options.resume;
    if (options.force !== undefined) run.force = options.force;
    // Never persisted, so it need not be a random 128-bit id (see `ephemeralSession`).
    if (options.session !== undefined) run.session = options.session;
    else if (ephemeral) run.session = ephemeralSession();
    if (options.principal !== undefined) run.principal = options.principal;
    if (ephemeral) run.ephemeral = true;
    if (options.onEvent !== undefined) run.onEvent = options.onEvent;
    started = startPipeline(options.program, options.pipeline, run);
  } catch (error) {
    const removing = release(limit, agents);
    if (removing === undefined) throw error;
    return removing.then(() => Promise.reject(error));
  }
  if (started instanceof Promise) return settle(started, limit, agents, redactor);
  const execution: Execution = { outcome: started, timedOut: limit?.expired() ?? false, redactor };
  const removing = release(limit, agents);
  return removing === undefined ? execution : removing.then(() => execution);
}

/** The end of a run that had to wait: its execution once it settles, then `release`. */
async function settle(
  started: Promise<RunOutcome>,
  limit: Deadline | undefined,
  agents: RunAgents,
  redactor: Redactor,
): Promise<Execution> {
  try {
    const outcome = await started;
    return { outcome, timedOut: limit?.expired() ?? false, redactor };
  } finally {
    const removing = release(limit, agents);
    if (removing !== undefined) await removing;
  }
}

/** Stops the run's deadline and removes its agent folder; a promise only when there is one. */
function release(limit: Deadline | undefined, agents: RunAgents): Promise<void> | undefined {
  limit?.dispose();
  return agents.dispose();
}

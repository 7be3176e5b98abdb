/**
 * Rendering one prompt outside any run, for hosts that hand prompts to clients (MCP
 * `prompts/get`). It goes through `RunScope.renderPrompt`, the path a step's `Name(…)` takes, so
 * a prompt reads the same in both places; a fresh scope per call, so nothing is shared between
 * callers but what runs share too (the server's agent rate limits). What leaves it is shown as
 * a run's is: redacted, and (in a served program) with server paths made relative. Knows
 * nothing of MCP: arguments arrive as values, the text leaves as a string, a failure as a
 * `PromptFailure`.
 */
import { type DeclOf, LangError, type LoadedProgram, type Module } from '../../lang/index.js';
import type { AgentLimiters } from '../agents/agent-rate-limit.js';
import { type AgentCache, runAgents } from '../agents/run-agents.js';
import { clientPathsFor } from '../services/client-paths.js';
import { deadline } from '../services/deadline.js';
import { Redactor } from '../services/redact.js';
import { RunScope } from './declarations.js';
import { PauseSignal } from './signals.js';
import { SpawnLimiter } from './tasks.js';
import { newObject, type Value } from './values.js';

/** The prompt to render: its declaration, the module declaring it, the program around it. */
export interface PromptSource {
  readonly decl: DeclOf<'Prompt'>;
  readonly module: Module;
  readonly program: LoadedProgram;
}

/** What a rendering runs with: what a run's services are built from, less its state. */
export interface ServedPromptOptions {
  /** Where a body's natives run (files, commands, agents). */
  readonly cwd: string;
  /** The environment child processes get (an allow-list). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** What `env()` reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Output lines of the body (`log(…)`, agent traces), redacted and path-relativised. */
  readonly output: (line: string) => void;
  /** The verified caller (`context.principal`); empty without one. */
  readonly principal?: string;
  /** Agents' disk caches; under a `root`, each rendering gets a folder, removed after it. */
  readonly agentCache: AgentCache;
  /** Agents' rate limits, shared with the server's runs; without them the rendering's own. */
  readonly agentLimiters?: AgentLimiters;
  readonly signal: AbortSignal;
  /** Bounds the rendering; `what` names it in the message of a `timeout` failure. */
  readonly timeout?: { readonly ms: number; readonly what: string };
}

/** Why a rendering failed: the body raised, the time limit passed, or the caller gave up. */
export type PromptFailureKind = 'failed' | 'timeout' | 'canceled';

/** A rendering's own failure; its message is redacted and names no server path. */
export class PromptFailure extends Error {
  readonly kind: PromptFailureKind;
  constructor(kind: PromptFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PromptFailure';
    this.kind = kind;
  }
}

/**
 * The rendered text of `prompt` with `args` (names to values; defaults fill the rest, evaluated
 * in the declaring module's scope), redacted. `context` reads as an empty run's, its
 * `principal` the caller's.
 *
 * @throws PromptFailure when the body raises (`CALL` for a missing or unknown argument
 *   included), the time limit passes or `signal` aborts; anything else is a fault of mhl.
 */
export async function renderServedPrompt(
  prompt: PromptSource,
  args: ReadonlyMap<string, Value>,
  options: ServedPromptOptions,
): Promise<string> {
  const context = newObject([
    ['session_id', ''],
    ['started_at', new Date().toISOString()],
    ['resumed', false],
    ['principal', options.principal ?? ''],
    ['vars', newObject()],
  ]);
  const redactor = new Redactor();
  const root = prompt.program.displayRoot;
  const shown = clientPathsFor(root === undefined ? undefined : { root, cwd: options.cwd });
  const show = (text: string) => shown(redactor.redact(text));
  // Any file of the program may declare the agent a body calls: a folder per rendering under a
  // root costs nothing until an agent writes to it.
  const agents = runAgents(options.agentCache, true, options.agentLimiters);
  const limit = deadline(options.signal, options.timeout?.ms, options.timeout?.what);
  const services = {
    cwd: options.cwd,
    childEnv: options.childEnv,
    env: options.env,
    redactor,
    output: (line: string) => options.output(show(line)),
    cacheDir: agents.cacheDir,
    agents: agents.agents,
  };
  const scope = new RunScope(prompt.program, services, () => context, new SpawnLimiter(1));
  try {
    const at = { span: prompt.decl.span };
    return redactor.redact(
      await scope.renderPrompt(prompt.decl, prompt.module, args, at, limit.signal),
    );
  } catch (error) {
    if (limit.expired()) {
      const what = options.timeout?.what ?? 'the prompt';
      throw new PromptFailure('timeout', `${what} timed out after ${options.timeout?.ms} ms`);
    }
    if (options.signal.aborted) throw new PromptFailure('canceled', 'the request was cancelled');
    if (error instanceof LangError) throw new PromptFailure('failed', show(error.message));
    // A prompt has no run to suspend: pause() in its body is the prompt's own failure.
    if (error instanceof PauseSignal) {
      throw new PromptFailure('failed', 'pause() cannot be used in a prompt body');
    }
    throw error;
  } finally {
    limit.dispose();
    // Awaited only when there is a folder to remove (each await is a tick).
    const removing = agents.dispose();
    if (removing !== undefined) await removing;
  }
}

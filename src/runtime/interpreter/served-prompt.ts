/**
 * Rendering one prompt outside any run, for hosts that hand prompts to clients (MCP
 * `prompts/get`). It goes through `RunScope.renderPrompt`, the path a step's `Name(…)` takes, so
 * a prompt reads the same in both places; a fresh scope per call, so nothing is shared between
 * callers. Knows nothing of MCP: arguments arrive as values, the text leaves as a string.
 */
import type { DeclOf, LoadedProgram, Module } from '../../lang/index.js';
import { createAgentState } from '../agents/agents.js';
import { RunScope, type RunServices } from './declarations.js';
import { SpawnLimiter } from './tasks.js';
import { newObject, type Value } from './values.js';

/** The prompt to render: its declaration, the module declaring it, the program around it. */
export interface PromptSource {
  readonly decl: DeclOf<'Prompt'>;
  readonly module: Module;
  readonly program: LoadedProgram;
}

/**
 * The rendered text of `prompt` with `args` (names to values; defaults fill the rest, evaluated
 * in the declaring module's scope). `context` reads as an empty run's. Raises `CALL` for a
 * missing or unknown argument, whatever else the body raises; honours `signal`.
 */
export function renderServedPrompt(
  prompt: PromptSource,
  args: ReadonlyMap<string, Value>,
  services: Omit<RunServices, 'agents'>,
  signal: AbortSignal,
): Promise<string> {
  const context = newObject([
    ['session_id', ''],
    ['started_at', new Date().toISOString()],
    ['resumed', false],
    ['principal', ''],
    ['vars', newObject()],
  ]);
  // Its own agent state, like a run's: nothing cached is shared with another caller.
  const scoped = { ...services, agents: createAgentState() };
  const scope = new RunScope(prompt.program, scoped, () => context, new SpawnLimiter(1));
  return scope.renderPrompt(prompt.decl, prompt.module, args, { span: prompt.decl.span }, signal);
}

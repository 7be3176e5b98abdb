/**
 * Rendering one prompt outside any run, for hosts that hand prompts to clients (MCP
 * `prompts/get`). It goes through `RunScope.renderPrompt`, the path a step's `Name(…)` takes, so
 * a prompt reads the same in both places; a fresh scope per call, so nothing is shared between
 * callers. Knows nothing of MCP: arguments arrive as values, the text leaves as a string.
 */
import type { DeclOf } from '../lang/ast.js';
import type { Module } from '../lang/modules.js';
import { type LoadedProgram, RunScope, type RunServices } from './declarations.js';
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
  services: RunServices,
  signal: AbortSignal,
): Promise<string> {
  const context = newObject([
    ['session_id', ''],
    ['started_at', new Date().toISOString()],
    ['resumed', false],
    ['principal', ''],
    ['vars', newObject()],
  ]);
  const scope = new RunScope(prompt.program, services, () => context, new SpawnLimiter(1));
  return scope.renderPrompt(prompt.decl, prompt.module, args, { span: prompt.decl.span }, signal);
}

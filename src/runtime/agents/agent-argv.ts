/**
 * Builds a CLI agent's argv from its declared `args` and one request (spec §5.1, "Building
 * argv"). Pure: no I/O, no shell splitting, no interpolation — each element is one argv entry.
 */
import { AGENT_FAILURES, AgentError } from './agent-error.js';
import type { AgentArg, AgentRequest } from './agent-spec.js';

/**
 * The argv after the command. The prompt replaces the first `${prompt}` element (later ones stay
 * literal text) or is appended last when there is none; the schema replaces every `${schema}`
 * element, and is dropped when there is no such element.
 *
 * @throws AgentError `CONFIG` when a `${schema}` element exists but the request has no schema.
 */
export function buildArgv(
  agent: string,
  args: readonly AgentArg[],
  request: AgentRequest,
): string[] {
  const argv: string[] = [];
  let promptPlaced = false;
  for (const arg of args) {
    if (arg.kind === 'text') {
      argv.push(arg.value);
    } else if (arg.kind === 'prompt') {
      argv.push(promptPlaced ? '${prompt}' : request.prompt);
      promptPlaced = true;
    } else {
      if (request.schema === undefined) {
        throw new AgentError(
          agent,
          AGENT_FAILURES.CONFIG,
          `agent "${agent}" has a \${schema} argument but the call passed no schema`,
        );
      }
      argv.push(request.schema);
    }
  }
  if (!promptPlaced) argv.push(request.prompt);
  return argv;
}

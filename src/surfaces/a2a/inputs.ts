/**
 * Which workflow a message runs and with what inputs. The skill is `metadata.skill`, or the
 * only workflow when exactly one is served. The inputs are `metadata.input`, else the first
 * `data` part holding an object, else a lone text for the skill's single string input; a text
 * the skill cannot take is a -32602 that lists its inputs, so the caller can correct itself.
 * Inputs are then checked by the run layer as every run's are.
 */
import type { Catalog, Workflow } from '../../catalog/index.js';
import { isRecord } from '../../protocol/index.js';
import { shortKey } from '../../runs/index.js';
import { invalidParams } from './errors.js';
import type { IncomingMessage } from './message.js';

/** The workflow a new task runs. */
export function skillOf(catalog: Catalog, message: IncomingMessage): Workflow {
  const skills = [...catalog.workflows.keys()];
  if (message.skill === undefined) {
    const [only] = catalog.workflows.values();
    if (skills.length === 1 && only !== undefined) return only;
    throw invalidParams(
      'message.metadata.skill',
      `name the skill in message.metadata.skill; skills: ${skills.join(', ')}`,
      { skills },
    );
  }
  const workflow = catalog.workflows.get(message.skill);
  if (workflow === undefined) {
    throw invalidParams(
      'message.metadata.skill',
      `unknown skill ${JSON.stringify(shortKey(message.skill))}; skills: ${skills.join(', ')}`,
      { skills },
    );
  }
  return workflow;
}

/** The run arguments a message gives `workflow`. */
export function inputsOf(workflow: Workflow, message: IncomingMessage): Record<string, unknown> {
  if (message.input !== undefined) return { ...message.input };
  for (const part of message.parts) {
    if (part.kind === 'data' && isRecord(part.data)) return { ...part.data };
  }
  const texts = message.parts.flatMap((part) => (part.kind === 'text' ? [part.text] : []));
  if (texts.length === 0) return {};
  const inputs = inputNames(workflow);
  const strings = inputs.filter((input) => input.type === 'string');
  if (strings.length === 1 && strings[0] !== undefined) {
    return { [strings[0].name]: texts.join('\n') };
  }
  const listed = inputs.map((input) => `${input.name}: ${input.type}`).join(', ') || 'none';
  throw invalidParams(
    'message.parts',
    `a text part maps to a skill's single string input, and ${workflow.name} has ` +
      `${strings.length === 0 ? 'none' : 'several'}; send message.metadata.input or a data part ` +
      `with its inputs (${listed})`,
    { skill: workflow.name, inputs: inputs.map((input) => input.name) },
  );
}

/** The declared inputs and their JSON types, from the input schema. */
function inputNames(workflow: Workflow): { name: string; type: string }[] {
  const properties = workflow.inputSchema['properties'];
  if (!isRecord(properties)) return [];
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    type: isRecord(schema) && typeof schema['type'] === 'string' ? schema['type'] : 'any',
  }));
}

/**
 * The input schema a workflow is advertised with, wherever it is advertised (`tools/list`, the
 * A2A Agent Card): its projected schema plus the reserved per-call `context`, so what a client
 * reads is exactly what the run layer's `checkWorkflowCall` accepts. Pure data, no I/O.
 */
import type { Workflow } from '../catalog/index.js';
import { ABSOLUTE_PATH_PATTERN, credentialsSchema, takesCredentials } from '../runs/index.js';

/**
 * The reserved per-call `context` argument every workflow tool accepts (seed 002), exactly as
 * `parseCallContext` checks it. `limit` is not offered: nothing in the runtime caps by it.
 */
const CONTEXT_SCHEMA = {
  type: 'object',
  description: 'Per-call execution context: working directory and time limit',
  properties: {
    cwd: {
      type: 'string',
      pattern: ABSOLUTE_PATH_PATTERN,
      description: "Absolute working directory for the run (default: the server's --cwd)",
    },
    timeout_ms: {
      type: 'integer',
      minimum: 1,
      description:
        'Bounds the run, in milliseconds (a synchronous call never runs past --default-timeout-ms)',
    },
  },
  additionalProperties: false,
} as const;

/** With `--require-cwd`: the same, its `cwd` required. */
const REQUIRED_CWD_CONTEXT_SCHEMA = {
  ...CONTEXT_SCHEMA,
  properties: {
    ...CONTEXT_SCHEMA.properties,
    cwd: {
      ...CONTEXT_SCHEMA.properties.cwd,
      description: 'Absolute working directory for the run (this server requires it)',
    },
  },
  required: ['cwd'],
} as const;

/**
 * A workflow's `tools/list` inputSchema: its projected schema with `context`. The A2A card
 * advertises the same one per skill, since a send's input is checked exactly as a call's.
 */
export function listedSchema(
  workflow: Workflow,
  requireCwd: boolean,
): Readonly<Record<string, unknown>> {
  const projected = workflow.inputSchema as { properties?: Record<string, unknown> };
  // With --require-cwd the schema says what the server enforces: context and its cwd required.
  const context = requireCwd ? REQUIRED_CWD_CONTEXT_SCHEMA : CONTEXT_SCHEMA;
  const required = (workflow.inputSchema as { required?: string[] }).required ?? [];
  // Slot guidance only: which slots exist and how to find an id, never a record id.
  const credentials = takesCredentials(workflow)
    ? { credentials: credentialsSchema(workflow.credentialSlots) }
    : {};
  return {
    ...workflow.inputSchema,
    properties: { ...projected.properties, context, ...credentials },
    ...(requireCwd ? { required: [...required, 'context'] } : {}),
  };
}

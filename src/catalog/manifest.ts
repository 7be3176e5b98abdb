/**
 * What clients see of a workflow, projected from its loaded declaration so it cannot drift
 * from what runs: the description, the MCP `tools/list` entry and the manifest JSON served as
 * `mhl://workflow/<name>` (spec/mhl-serve.md §1 and §6, design.md §3). Pure projections: no
 * I/O, no evaluation; settings count only when written as literals, as the runner reads them.
 */
import { relative, sep } from 'node:path';
import type { Expr, NamedDecl, PipelineDecl } from '../lang/index.js';
import { projectTypeSchema, typeText } from './input-schema.js';
import type { JsonObject, JsonValue, ToolAnnotations, Workflow } from './types.js';

/** The control tool that starts a workflow asynchronously (the `_meta.mhl.run.tool` hint). */
export const RUN_START_TOOL = 'mhl_run_start';

/** An MCP `tools/list` entry for one workflow. */
export interface ToolEntry {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonObject;
  readonly annotations?: ToolAnnotations;
  readonly _meta: { readonly mhl: { readonly run: { readonly tool: typeof RUN_START_TOOL } } };
}

/** `pipeline`, `workflow`, `loop pipeline` or `loop workflow`. */
export function kindText(decl: PipelineDecl): string {
  return decl.loop ? `loop ${decl.flavor}` : decl.flavor;
}

/** The literal `description:` property, else `Runs the mhl <kind> "<Name>".` */
export function workflowDescription(decl: PipelineDecl): string {
  const declared = stringLiteral(property(decl, 'description'));
  return declared ? declared : `Runs the mhl ${kindText(decl)} "${decl.name}".`;
}

/** The workflow's `tools/list` entry, with the nested `_meta.mhl.run.tool` async hint. */
export function toolEntry(workflow: Workflow): ToolEntry {
  return {
    name: workflow.name,
    description: workflow.description,
    inputSchema: workflow.inputSchema,
    ...(workflow.annotations ? { annotations: workflow.annotations } : {}),
    _meta: { mhl: { run: { tool: RUN_START_TOOL } } },
  };
}

/** The URI of a workflow's manifest resource. */
export function manifestUri(name: string): string {
  return `mhl://workflow/${name}`;
}

/** The URI of a workflow's source resource. */
export function sourceUri(name: string): string {
  return `mhl://workflow/${name}/source`;
}

/**
 * The manifest served as `mhl://workflow/<name>`: name, kind, description, file (relative to
 * `root`, `/`-separated), source URI, async hint, inputSchema, inputs, steps in order (a
 * parallel group by its name), and, when they apply, parallelGroups, stepTimeouts (Go
 * duration text), checkpoint + resumable, loop, the typed signature, and `declared` names.
 */
export function workflowManifest(workflow: Workflow, root: string): JsonObject {
  const { decl } = workflow;
  const groups = decl.steps.flatMap((s) =>
    s.kind === 'Parallel' ? [{ name: s.name, steps: s.steps.map((x) => x.name) }] : [],
  );
  const timeouts = stepTimeouts(decl);
  const checkpoint = checkpointPolicy(decl);
  return {
    name: workflow.name,
    kind: kindText(decl),
    description: workflow.description,
    file: relative(root, workflow.file).split(sep).join('/'),
    source: sourceUri(workflow.name),
    async: { via: 'run/start', tool: RUN_START_TOOL },
    inputSchema: workflow.inputSchema,
    inputs: decl.inputs.map((i) => ({
      name: i.name,
      type: typeText(i.type),
      required: !i.default,
    })),
    steps: decl.steps.map((s) => s.name),
    ...(groups.length > 0 ? { parallelGroups: groups } : {}),
    ...(Object.keys(timeouts).length > 0 ? { stepTimeouts: timeouts } : {}),
    ...(checkpoint ? { checkpoint, resumable: true } : {}),
    ...(decl.loop ? { loop: loopPolicy(decl) } : {}),
    ...signature(workflow),
    declared: declaredNames(workflow),
  };
}

function stepTimeouts(decl: PipelineDecl): Record<string, string> {
  const out: [string, string][] = [];
  for (const s of decl.steps) {
    for (const step of s.kind === 'Parallel' ? [s, ...s.steps] : [s])
      if (step.timeoutMs !== undefined) out.push([step.name, goDuration(step.timeoutMs)]);
  }
  return Object.fromEntries(out);
}

/** Checkpointing is on unless `checkpoint: {enabled: false}`; strategy defaults to per_step. */
function checkpointPolicy(decl: PipelineDecl): JsonObject | undefined {
  const block = property(decl, 'checkpoint');
  const enabled = field(block, 'enabled');
  if (enabled?.kind === 'Bool' && !enabled.value) return undefined;
  const ttl = field(block, 'ttl');
  const storage = stringLiteral(field(block, 'storage'));
  return {
    strategy: stringLiteral(field(block, 'strategy')) ?? 'per_step',
    ...(ttl?.kind === 'Duration' ? { ttl: goDuration(ttl.ms) } : {}),
    ...(storage !== undefined ? { storage } : {}),
  };
}

function loopPolicy(decl: PipelineDecl): JsonObject {
  const repeat = property(decl, 'repeat');
  const maxField = field(repeat, 'max_iterations');
  const max = decl.maxIterations ?? (maxField?.kind === 'Number' ? maxField.value : undefined);
  return {
    stopWhen: field(repeat, 'stop_when') !== undefined,
    ...(max !== undefined ? { maxIterations: max } : {}),
  };
}

/**
 * `parameters`, `output` and `outputSchema` for a typed signature `pipeline P(x: T): R`. The
 * parameters are inputs too (listed in `inputs` and `inputSchema`); R types the run's result.
 */
function signature(workflow: Workflow): JsonObject {
  const sig = workflow.decl.signature;
  if (!sig) return {};
  const parameters = sig.params.map((p) => ({ name: p.name, type: typeText(p.type) }));
  if (!sig.returns) return { parameters };
  const outputSchema = projectTypeSchema(sig.returns, workflow.program.namespace);
  return { parameters, output: typeText(sig.returns), outputSchema };
}

const DECLARED_LISTS: Readonly<Partial<Record<NamedDecl['kind'], string>>> = {
  Agent: 'agents',
  Tool: 'tools',
  Memory: 'memory',
  Prompt: 'prompts',
  Schema: 'schemas',
  Extension: 'extensions',
  Extensible: 'extensions',
};

/** Sorted names of what the workflow's program declares, by kind. */
function declaredNames(workflow: Workflow): JsonObject {
  const lists = new Map<string, Set<string>>(
    ['agents', 'tools', 'memory', 'prompts', 'schemas', 'extensions'].map((k) => [k, new Set()]),
  );
  for (const binding of workflow.program.namespace.bindings.values()) {
    if (binding.kind !== 'decl') continue;
    const list = DECLARED_LISTS[binding.decl.kind];
    if (list) lists.get(list)?.add(binding.decl.name);
  }
  return Object.fromEntries(
    [...lists].map(([k, names]): [string, JsonValue] => [k, [...names].sort()]),
  );
}

/** Go's `time.Duration` text for whole milliseconds: `500ms`, `1.5s`, `1m30s`, `3m0s`, `1h0m0s`. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = `${(ms % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

function property(decl: PipelineDecl, name: string): Expr | undefined {
  return decl.props.find((p) => p.name === name)?.value;
}

function field(e: Expr | undefined, key: string): Expr | undefined {
  return e?.kind === 'Object' ? e.fields.find((f) => f.key === key)?.value : undefined;
}

function stringLiteral(e: Expr | undefined): string | undefined {
  if (e?.kind !== 'String' || !e.segments.every((s) => typeof s === 'string')) return undefined;
  return e.segments.join('');
}

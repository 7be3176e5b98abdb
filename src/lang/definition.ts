/**
 * What a checked program and one of its pipelines are, once, before any run: the program's
 * modules (`LoadedProgram`), the pipeline's definition digest (checkpoints record it; resume
 * compares it), whether it checkpoints, and whether any of its files declares an agent.
 * Computed by the catalog at load (or by `mhl run` for its one file), never per run.
 * Pure: no I/O, nothing evaluated.
 */
import type { Expr, PipelineDecl } from './ast.js';
import { definitionDigest } from './definition-digest.js';
import type { Module, Namespace } from './modules.js';

/** A checked program: its root file and everything that file reaches. */
export interface LoadedProgram {
  readonly root: Module;
  readonly namespace: Namespace;
  /** Source and asset texts by absolute path. */
  readonly texts: ReadonlyMap<string, string>;
  /**
   * The served folder, when the program is served to clients: the files and folders its run
   * errors and log lines name are shown relative to it (see `clientPaths`).
   */
  readonly displayRoot?: string;
}

/** The run-independent facts of one pipeline of a loaded program. */
export interface PipelineDefinition {
  /** The definition digest a checkpoint records (the pipeline and the other declarations of its file). */
  readonly digest: string;
  /** Whether it checkpoints after each step (on unless `checkpoint: {enabled: false}`). */
  readonly checkpoints: boolean;
  /** Whether any file of the program declares an agent (and so may cache to disk). */
  readonly usesAgents: boolean;
}

/** Computes a pipeline's definition; callers keep the result (it costs a hash of the file). */
export function pipelineDefinition(
  program: LoadedProgram,
  pipeline: PipelineDecl,
): PipelineDefinition {
  return {
    digest: definitionDigest(
      // Tests never run in a run: editing one must not refuse a resume.
      program.root.program.decls.filter(
        (d) => (d.kind !== 'Pipeline' || d === pipeline) && d.kind !== 'Test',
      ),
    ),
    checkpoints: checkpointsEnabled(pipeline),
    usesAgents: program.namespace.modules.some((m) =>
      m.program.decls.some((d) => d.kind === 'Agent'),
    ),
  };
}

/**
 * `checkpoint: {enabled: false}` as a literal turns checkpoints off; anything else (absent, not
 * an object literal, `enabled` not the literal `false`) leaves them on. A later literal
 * `enabled` field wins over an earlier one; a non-literal one is ignored, as settings are
 * read without evaluating anything.
 */
function checkpointsEnabled(pipeline: PipelineDecl): boolean {
  const value = pipeline.props.find((p) => p.name === 'checkpoint')?.value;
  if (value?.kind !== 'Object') return true;
  let enabled: Expr | undefined;
  for (const field of value.fields)
    if (field.key === 'enabled' && isLiteral(field.value)) enabled = field.value;
  return !(enabled?.kind === 'Bool' && enabled.value === false);
}

function isLiteral(e: Expr): boolean {
  switch (e.kind) {
    case 'Null':
    case 'Bool':
    case 'Number':
    case 'Duration':
    case 'Object':
      return true;
    case 'String':
      return e.segments.every((s) => typeof s === 'string');
    default:
      return false;
  }
}

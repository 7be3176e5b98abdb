/**
 * Loads a `.mh` file for running: checks it (and everything it imports) exactly as `mhl lint`
 * does, refuses to run a program with errors, and picks the pipeline to run.
 */
import type { PipelineDecl } from '../../lang/index.js';
import {
  buildNamespace,
  checkFiles,
  type Diagnostic,
  type LoadedProgram,
  type SourceHost,
} from '../../lang/index.js';

export type LoadResult =
  | {
      readonly ok: true;
      readonly program: LoadedProgram;
      readonly pipelines: readonly PipelineDecl[];
      /** Names of the `partial` pipelines the file declares: fragments, never run. */
      readonly partials: readonly string[];
      readonly warnings: readonly Diagnostic[];
    }
  | {
      readonly ok: false;
      readonly diagnostics: readonly Diagnostic[];
      readonly texts: ReadonlyMap<string, string>;
    };

/** Checks and loads `file`; the result lists the pipelines it declares, in order. */
export function loadProgram(file: string, host: SourceHost): LoadResult {
  const checked = checkFiles([file], host);
  const root = checked.graph.get(file);
  const errors = checked.diagnostics.filter((d) => d.severity === 'error');
  if (!root || errors.length > 0 || checked.unreadable.length > 0) {
    const unreadable = checked.unreadable.map(
      (u): Diagnostic => ({
        severity: 'error',
        code: 'IMPORT',
        message: `cannot read file: ${u.reason}`,
        span: { file: u.path, start: 0, end: 1, line: 1, col: 1 },
      }),
    );
    return { ok: false, diagnostics: [...unreadable, ...errors], texts: checked.graph.texts };
  }
  const declared = root.program.decls.filter((d): d is PipelineDecl => d.kind === 'Pipeline');
  const pipelines = declared.filter((d) => !d.partial);
  const partials = declared.filter((d) => d.partial).map((d) => d.name);
  const program: LoadedProgram = {
    root,
    namespace: buildNamespace(root),
    texts: checked.graph.texts,
  };
  return {
    ok: true,
    program,
    pipelines,
    partials,
    warnings: checked.diagnostics.filter((d) => d.severity === 'warning'),
  };
}

/** The pipeline to run: the one named, or the file's only one (never a `partial` fragment). */
export function selectPipeline(
  pipelines: readonly PipelineDecl[],
  name: string | undefined,
  partials: readonly string[] = [],
): PipelineDecl | string {
  const fragment = name !== undefined ? partials.includes(name) : pipelines.length === 0;
  if (fragment && partials.length > 0) {
    return `'${name ?? partials[0]}' is a partial pipeline: a fragment that does not run by itself; remove 'partial' to run it`;
  }
  if (name !== undefined) {
    return (
      pipelines.find((p) => p.name === name) ??
      `no pipeline or workflow named '${name}' in this file (it declares ${pipelines.map((p) => p.name).join(', ') || 'none'})`
    );
  }
  if (pipelines.length === 1) return pipelines[0] as PipelineDecl;
  if (pipelines.length === 0) return 'no pipeline declared in this file';
  return `this file declares ${pipelines.length} pipelines (${pipelines.map((p) => p.name).join(', ')}); choose one with --pipeline NAME`;
}

/**
 * Builds the catalog a server serves: every `.mh` file of a folder (or of a pack, through its
 * own `SourceHost`) checked together exactly as `mhl lint` checks them, then one `Workflow` per
 * `pipeline`/`workflow` declared in a file itself (spec/mhl-serve.md §1). Problems are
 * collected and returned, never thrown; nothing here runs a workflow or touches a socket.
 */
import { relative, resolve } from 'node:path';
import {
  buildNamespace,
  type CheckResult,
  checkFiles,
  type Diagnostic,
  diskHost,
  formatDiagnostic,
  type LoadedProgram,
  type Module,
  type PipelineDecl,
  type PipelineDefinition,
  pipelineDefinition,
  type SourceHost,
} from '../lang/index.js';
import { type CredentialSlot, workflowSlots } from './effects.js';
import { projectInputSchema } from './input-schema.js';
import { workflowDescription } from './manifest.js';
import { collectPrompts } from './prompts.js';
import { listMhFiles } from './sources.js';
import type { Catalog, Workflow } from './types.js';
import { createValidatorCompiler, type ValidatorCompiler } from './validate.js';

/** Stable codes of the start-up problems a catalog load reports. */
export const CATALOG_ERROR_CODES = {
  /** The folder does not exist or is not a folder. */
  NOT_FOUND: 'NOT_FOUND',
  /** The folder or a file in it could not be read. */
  UNREADABLE: 'UNREADABLE',
  /** `mhl lint` reports an error; `diagnostic` holds it. */
  INVALID_SOURCE: 'INVALID_SOURCE',
  /** Two files declare a workflow of the same name. */
  DUPLICATE_WORKFLOW: 'DUPLICATE_WORKFLOW',
  /** Two files declare a prompt of the same name (prompt names become MCP prompt names). */
  DUPLICATE_PROMPT: 'DUPLICATE_PROMPT',
  /** Nothing to serve: no pipeline or workflow is declared under the folder. */
  NO_WORKFLOWS: 'NO_WORKFLOWS',
} as const;
export type CatalogErrorCode = (typeof CATALOG_ERROR_CODES)[keyof typeof CATALOG_ERROR_CODES];

/** One start-up problem, printed as one line. */
export interface CatalogProblem {
  readonly code: CatalogErrorCode;
  readonly message: string;
  /** Absolute paths of the files involved (empty when none is). */
  readonly files: readonly string[];
  readonly diagnostic?: Diagnostic;
}

export type CatalogResult =
  | { readonly ok: true; readonly catalog: Catalog; readonly warnings: readonly Diagnostic[] }
  | {
      readonly ok: false;
      readonly problems: readonly CatalogProblem[];
      readonly warnings: readonly Diagnostic[];
      /** Source texts by absolute path, for excerpts under diagnostics. */
      readonly texts: ReadonlyMap<string, string>;
    };

/** The files a catalog is built from: a folder's listing, or a pack's entries. */
export interface CatalogSources {
  /** The folder (or the pack's root); relative `files` resolve against it. */
  readonly root: string;
  readonly files: readonly string[];
  readonly host: SourceHost;
  readonly source: 'dir' | 'pack';
  /**
   * Compiles the input validators; a new one per catalog by default. The catalog cache passes
   * the one its hit already uses, so the programs it loads later compile nothing twice.
   */
  readonly compile?: ValidatorCompiler;
}

/**
 * Loads every `.mh` file under `dir` (recursive, hidden entries and node_modules skipped),
 * reading through `host`. Never throws for bad input: problems come back in the result.
 */
export function loadCatalog(dir: string, host: SourceHost = diskHost): CatalogResult {
  let files: string[];
  try {
    files = listMhFiles(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const missing = code === 'ENOENT' || code === 'ENOTDIR';
    const problem: CatalogProblem = missing
      ? { code: 'NOT_FOUND', message: `no such directory: ${dir}`, files: [] }
      : { code: 'UNREADABLE', message: `cannot read ${dir}: ${(e as Error).message}`, files: [] };
    return { ok: false, problems: [problem], warnings: [], texts: new Map() };
  }
  return buildCatalog({ root: dir, files, host, source: 'dir' });
}

/**
 * Checks `files` together (one module graph for all of them) and registers their workflows.
 * Fails on any lint error, unreadable file, duplicate name, or when there is no workflow.
 */
export function buildCatalog(sources: CatalogSources): CatalogResult {
  const root = resolve(sources.root);
  const files = [...new Set(sources.files.map((f) => resolve(root, f)))].sort();
  const checked = checkFiles(files, sources.host);
  const warnings = checked.diagnostics.filter((d) => d.severity === 'warning');
  const fail = (problems: readonly CatalogProblem[]): CatalogResult => ({
    ok: false,
    problems,
    warnings,
    texts: checked.graph.texts,
  });
  const problems = sourceProblems(checked);
  if (problems.length > 0) return fail(problems);
  const compile = sources.compile ?? createValidatorCompiler();
  const registered = register(files, checked.graph, root, compile);
  const { prompts, clashes } = collectPrompts(registered.programs, root);
  registered.problems.push(
    ...clashes.map(
      (c): CatalogProblem => ({ code: 'DUPLICATE_PROMPT', message: c.message, files: c.files }),
    ),
  );
  if (registered.problems.length > 0) return fail(registered.problems);
  if (registered.workflows.length === 0) {
    const message = `no pipeline or workflow declared under ${sources.root}`;
    return fail([{ code: 'NO_WORKFLOWS', message, files: [] }]);
  }
  const sorted = registered.workflows.sort((a, b) => (a.name < b.name ? -1 : 1));
  const workflows: ReadonlyMap<string, Workflow> = new Map(sorted.map((w) => [w.name, w]));
  const catalog: Catalog = Object.freeze({ workflows, prompts, root, source: sources.source });
  return { ok: true, catalog, warnings };
}

/** Files the host could not read, then every lint error, one problem each. */
function sourceProblems(checked: CheckResult): CatalogProblem[] {
  const unreadable = checked.unreadable.map(
    (u): CatalogProblem => ({
      code: 'UNREADABLE',
      message: `cannot read ${u.path}: ${u.reason}`,
      files: [u.path],
    }),
  );
  const invalid = checked.diagnostics
    .filter((d) => d.severity === 'error')
    .map(
      (d): CatalogProblem => ({
        code: 'INVALID_SOURCE',
        message: formatDiagnostic(d),
        files: [d.span.file],
        diagnostic: d,
      }),
    );
  return [...unreadable, ...invalid];
}

interface Registered {
  readonly workflows: Workflow[];
  /** One program per file, rooted at it, in file order. */
  readonly programs: LoadedProgram[];
  readonly problems: CatalogProblem[];
}

/** One workflow per non-partial pipeline declared in each file itself, names unique. */
function register(
  files: readonly string[],
  graph: CheckResult['graph'],
  root: string,
  compile: ValidatorCompiler,
): Registered {
  const texts = graph.texts;
  const moduleOf = (file: string): Module | undefined => graph.get(file);
  const byName = new Map<string, Workflow>();
  const problems: CatalogProblem[] = [];
  const programs: LoadedProgram[] = [];
  for (const file of files) {
    const module = moduleOf(file);
    if (!module) continue;
    const program: LoadedProgram = {
      root: module,
      namespace: buildNamespace(module),
      texts,
      displayRoot: root,
    };
    programs.push(program);
    for (const decl of module.program.decls) {
      if (decl.kind !== 'Pipeline' || decl.partial) continue;
      const earlier = byName.get(decl.name);
      if (earlier) {
        problems.push(duplicate(decl.name, earlier.file, file, root));
        continue;
      }
      byName.set(decl.name, makeWorkflow(decl, program, compile));
    }
  }
  return { workflows: [...byName.values()], programs, problems };
}

function makeWorkflow(
  decl: PipelineDecl,
  program: LoadedProgram,
  compile: ValidatorCompiler,
): Workflow {
  const inputSchema = deepFreeze(projectInputSchema(decl, program.namespace));
  // Once per workflow for the catalog's life, on first use: hashing every file at start-up
  // would cost a served folder's start-up time for workflows that may never run.
  let definition: PipelineDefinition | undefined;
  let slots: readonly CredentialSlot[] | undefined;
  return Object.freeze({
    name: decl.name,
    kind: decl.flavor,
    loop: decl.loop,
    description: workflowDescription(decl),
    decl,
    program,
    file: program.root.path,
    source: program.root.text,
    inputSchema,
    get credentialSlots(): readonly CredentialSlot[] {
      slots ??= deepFreeze(workflowSlots({ decl, program }));
      return slots;
    },
    validate: compile(decl.name, inputSchema),
    get definition(): PipelineDefinition {
      definition ??= pipelineDefinition(program, decl);
      return definition;
    },
  });
}

function duplicate(name: string, first: string, second: string, root: string): CatalogProblem {
  const where = (f: string) => relative(root, f);
  return {
    code: 'DUPLICATE_WORKFLOW',
    message: `workflow "${name}" is declared in both ${where(first)} and ${where(second)}; names become tool names and must be unique`,
    files: [first, second],
  };
}

/** Freezes `value` and everything in it (projected schemas are shared with every caller). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

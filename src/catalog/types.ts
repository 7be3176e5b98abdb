/**
 * The shapes a loaded catalog is made of: the catalog itself, one `Workflow` per served
 * pipeline or workflow, and the JSON values its projections produce. Types only; building
 * them is `load.ts`'s job, projecting them `manifest.ts`'s and `resources.ts`'s.
 */
import type { LoadedProgram, PipelineDecl, PipelineDefinition } from '../lang/index.js';
import type { CredentialSlot } from './effects.js';
import type { CatalogPrompt } from './prompts.js';

/** Any JSON value, as projections hand it to a serialiser. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A JSON object (a JSON Schema, a manifest). */
export type JsonObject = { readonly [key: string]: JsonValue };

/** MCP tool annotations (2025-11-25 shapes); every hint is optional. */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** One input that failed its declared type, by field path (`tags[1]`, `cfg.id`). */
export interface InputProblem {
  /** The field path; `''` when the arguments as a whole are not an object. */
  readonly field: string;
  readonly problem: string;
}

/** Why a call's arguments were refused; every list is sorted or in schema order. */
export interface InvalidInputs {
  readonly code: 'INVALID_ARGUMENT';
  readonly workflow: string;
  /** One line: `invalid inputs for "P": missing required input "x"; undeclared input "y" (declared: x)`;
   * several names group as `missing required inputs "x", "z"`. */
  readonly message: string;
  readonly missing: readonly string[];
  /** The first ten, sorted, each cut to 40 characters: they come from the caller. */
  readonly undeclared: readonly string[];
  /** The first ten (one bad array item each could be thousands). */
  readonly invalid: readonly InputProblem[];
}

/** The outcome of checking a call's arguments against a workflow's `inputSchema`. */
export type InputCheck =
  | { readonly ok: true; readonly inputs: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly error: InvalidInputs };

/** A compiled argument check for one workflow, made once when the catalog loads. */
export type InputValidator = (args: unknown) => InputCheck;

/** One served pipeline or workflow: its declaration, its program, and what clients see of it. */
export interface Workflow {
  /** The declared name, used verbatim as the tool name. */
  readonly name: string;
  readonly kind: 'pipeline' | 'workflow';
  readonly loop: boolean;
  /** The `description:` property, else `Runs the mhl <kind> "<Name>".` */
  readonly description: string;
  readonly decl: PipelineDecl;
  /** The checked program rooted at the file that declares this workflow. */
  readonly program: LoadedProgram;
  /** Its digest, checkpoint policy and agent use, computed once at load (never per run). */
  readonly definition: PipelineDefinition;
  /** Absolute path of the declaring `.mh` file. */
  readonly file: string;
  /** The declaring file's text. */
  readonly source: string;
  /** Projected from the `input` members; deeply frozen. */
  readonly inputSchema: JsonObject;
  /**
   * Its credential slots (`workflowSlots`), walked once. A cached catalog holds them too, so
   * `tools/list` shows them without loading a program.
   */
  readonly credentialSlots: readonly CredentialSlot[];
  /** The Ajv 2020 validator for `inputSchema`, compiled once at load. */
  readonly validate: InputValidator;
  readonly annotations?: ToolAnnotations;
}

/** Every workflow served from one folder or pack; built once at start-up, never changed. */
export interface Catalog {
  /** Keyed and ordered by name. */
  readonly workflows: ReadonlyMap<string, Workflow>;
  /** Every prompt declared in a served file, keyed by its (unique) name. */
  readonly prompts: ReadonlyMap<string, CatalogPrompt>;
  /** Absolute path of the folder (or the pack's root). */
  readonly root: string;
  readonly source: 'dir' | 'pack';
}

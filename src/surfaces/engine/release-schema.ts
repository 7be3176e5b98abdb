/**
 * The authoring formats of a release (docs/engine.md, "Release layout"), as strict zod schemas:
 * `release.yaml`, `workflows/<id>/<version>.yaml` and `adapters/<id>.yaml`. A typo in a key is
 * an error naming the file and the field; what the shapes cannot say (targets exist, aliases
 * unique, assets present) is `release-check.ts`'s job.
 */
import { z } from 'zod';
import { predicateSchema } from './predicates.js';
import { isSemVer } from './semver.js';

/**
 * The schemas, built on first use rather than at import: a server on another profile (the
 * default `--profile pipelines`) never loads a release, so it never pays for them (about 1.6 ms
 * of start-up, measured with initprof).
 */
function buildReleaseSchemas() {
  const ID = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, . _ -');
  const VERSION = z.string().refine(isSemVer, 'a semantic version such as 1.2.0');
  const ASSET = z.string().min(1).describe('a path inside the release');
  const NAME = z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, _ -');

  const ReleaseManifestSchema = z
    .object({
      id: ID,
      version: VERSION,
      workflows: z.array(ASSET).min(1),
      host_adapters: z.array(ASSET).min(1),
    })
    .strict();

  const OutputSchema = z
    .object({
      id: ID,
      path: z.string().min(1).describe('project-relative, no .., not absolute'),
      media_type: z.enum(['application/json', 'text/markdown']),
      schema: ASSET.optional(),
      max_bytes: z.number().int().positive(),
      write_policy: z.enum(['create', 'replace']),
    })
    .strict();

  const ValidatorSchema = z
    .object({
      id: ID,
      version: VERSION,
      instruction: ASSET,
      report_required: z.boolean(),
      requires_capabilities: z.array(z.string().min(1)).default([]),
      inputs: z.array(ID).default([]),
    })
    .strict();

  const QuestionSchema = z
    .object({
      field: z.string().min(1),
      prompt: z.string().min(1),
      options: z.array(z.string()).min(1).optional(),
    })
    .strict();

  const StepSchema = z
    .object({
      id: ID,
      instruction: ASSET,
      host_assets: z
        .object({
          prompts: z.array(NAME).default([]),
          skills: z.array(NAME).default([]),
          subagents: z.array(NAME).default([]),
        })
        .strict()
        .default({ prompts: [], skills: [], subagents: [] }),
      inputs: z.array(ID).default([]),
      outputs: z.array(OutputSchema).default([]),
      max_total_bytes: z.number().int().positive().optional(),
      max_artifacts: z.number().int().positive().optional(),
      validators: z.array(ValidatorSchema).default([]),
      next: ID.optional(),
      branches: z
        .array(z.object({ when: predicateSchema(), to: ID }).strict())
        .min(1)
        .optional(),
      questions: z.array(QuestionSchema).default([]),
    })
    .strict();

  const WorkflowSchema = z
    .object({
      id: ID,
      version: VERSION,
      owner: z.string().min(1),
      entry_aliases: z.array(z.string().min(1)).default([]),
      title: z.string().min(1),
      objective: z.string().optional().describe('never put in a token'),
      confirmed_state_schema: ASSET,
      required_capabilities: z.array(z.string().min(1)).default([]),
      steps: z.array(StepSchema).min(1),
    })
    .strict();

  const AdapterSchema = z
    .object({
      id: ID,
      version: VERSION,
      harness: z.string().min(1),
      capabilities: z.array(z.string().min(1)).default([]),
      delivery: z
        .object({
          prompts: z.string().includes('{name}'),
          skills: z.string().includes('{name}'),
          subagents: z.string().includes('{name}'),
        })
        .strict()
        .describe('project-relative install path templates, {name} replaced'),
    })
    .strict();

  return {
    manifest: ReleaseManifestSchema,
    workflow: WorkflowSchema,
    step: StepSchema,
    output: OutputSchema,
    validator: ValidatorSchema,
    question: QuestionSchema,
    adapter: AdapterSchema,
  };
}

let built: ReturnType<typeof buildReleaseSchemas> | undefined;

/** The release-format schemas (`manifest`, `workflow`, `adapter` and their parts), built once. */
export function releaseSchemas(): ReturnType<typeof buildReleaseSchemas> {
  built ??= buildReleaseSchemas();
  return built;
}

type Schemas = ReturnType<typeof releaseSchemas>;

export type ReleaseManifest = z.infer<Schemas['manifest']>;
export type WorkflowDef = z.infer<Schemas['workflow']>;
export type StepDef = z.infer<Schemas['step']>;
export type OutputDef = z.infer<Schemas['output']>;
export type ValidatorDef = z.infer<Schemas['validator']>;
export type AdapterDef = z.infer<Schemas['adapter']>;

/** The release-relative path of a host asset by kind and name. */
export function hostAssetPath(kind: 'prompts' | 'skills' | 'subagents', name: string): string {
  if (kind === 'skills') return `assets/skills/${name}/SKILL.md`;
  return `assets/${kind}/${name}.md`;
}

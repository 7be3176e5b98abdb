/**
 * Zod schemas of the workflow-server authoring format (spec session-profile §1.2–§1.7): the
 * manifest (loose: unknown keys are dropped), activities, steps and checkpoint bodies (strict:
 * a typo excludes the activity, as in the public server). Built once, on first use
 * (`definitionSchemas()`).
 */
import { z } from 'zod';
import type { Condition } from './condition.js';
import { isVariableName } from './identifiers.js';

const SEMVER = /^\d+\.\d+\.\d+$/;

/**
 * The schemas, built on first use rather than at import: a server on another profile (the
 * default `--profile pipelines`) never loads a workflow-server folder, so it never pays for them
 * (about 0.7 ms of start-up, measured with initprof). In two builders: `Step` names the action
 * and checkpoint-body types, so these come from a builder whose type does not depend on `Step`.
 */
function buildBodySchemas() {
  const ConditionSchema: z.ZodType<Condition> = z.lazy(() =>
    z.union([
      z
        .object({
          type: z.literal('simple'),
          variable: z.string().describe('dotted path into the variable bag'),
          operator: z.enum(['==', '!=', '>', '<', '>=', '<=', 'exists', 'notExists']),
          value: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
        })
        .strict(),
      z
        .object({
          type: z.enum(['and', 'or']),
          conditions: z.array(ConditionSchema).min(2),
        })
        .strict(),
      z.object({ type: z.literal('not'), condition: ConditionSchema }).strict(),
    ]),
  ) as z.ZodType<Condition>;

  const OptionSchema = z
    .object({
      id: z.string(),
      label: z.string(),
      description: z.string().optional(),
      effect: z
        .object({
          setVariable: z.record(z.string(), z.unknown()).optional(),
          transitionTo: z.string().optional(),
          skipActivities: z.array(z.string()).optional(),
        })
        .strict()
        .optional(),
    })
    .strict();

  const CheckpointBodySchema = z
    .object({
      message: z.string(),
      options: z.array(OptionSchema).min(1),
      defaultOption: z.string().optional(),
      autoAdvanceMs: z.number().int().positive().optional(),
      blocking: z.boolean().optional(),
      condition: ConditionSchema.optional(),
    })
    .strict();

  const ActionSchema = z
    .object({
      action: z.enum(['log', 'validate', 'set', 'emit', 'message']),
      target: z.string().optional(),
      message: z.string().optional(),
      value: z.unknown().optional(),
      description: z.string().optional(),
      condition: ConditionSchema.optional(),
    })
    .strict();

  return { condition: ConditionSchema, checkpointBody: CheckpointBodySchema, action: ActionSchema };
}

let builtBodies: ReturnType<typeof buildBodySchemas> | undefined;

function bodySchemas(): ReturnType<typeof buildBodySchemas> {
  builtBodies ??= buildBodySchemas();
  return builtBodies;
}

type Bodies = ReturnType<typeof bodySchemas>;

/** The rest of the format, over the bodies. */
function buildDefinitionSchemas() {
  const {
    condition: ConditionSchema,
    checkpointBody: CheckpointBodySchema,
    action: ActionSchema,
  } = bodySchemas();
  const RuleEntrySchema = z.union([z.string(), z.object({ ref: z.string() }).strict()]);

  const gates = {
    when: z.string().optional(),
    condition: ConditionSchema.optional(),
    required: z.literal(false).optional(),
  };

  const TechniqueBindingSchema = z.union([
    z.string(),
    z
      .object({
        name: z.string(),
        inputs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
        outputs: z.record(z.string(), z.string()).optional(),
      })
      .strict(),
  ]);

  const StepSchema: z.ZodType<Step> = z.lazy(() =>
    z.discriminatedUnion('kind', [
      z
        .object({
          kind: z.literal('technique'),
          id: z.string().optional(),
          technique: TechniqueBindingSchema,
          actions: z.array(ActionSchema).optional(),
          ...gates,
        })
        .strict(),
      z
        .object({
          kind: z.literal('action'),
          id: z.string(),
          actions: z.array(ActionSchema).optional(),
          ...gates,
        })
        .strict(),
      z
        .object({
          kind: z.literal('checkpoint'),
          id: z.string(),
          ref: z.string().optional(),
          ...CheckpointBodySchema.partial().shape,
          ...gates,
        })
        .strict(),
      z
        .object({
          kind: z.literal('loop'),
          id: z.string(),
          name: z.string().optional(),
          loopType: z.enum(['forEach', 'while', 'doWhile']),
          variable: z.string().optional(),
          over: z.string().optional(),
          breakCondition: ConditionSchema.optional(),
          maxIterations: z.number().int().positive().optional(),
          steps: z.array(StepSchema),
          ...gates,
        })
        .strict(),
    ]),
  ) as z.ZodType<Step>;

  const TransitionSchema = z
    .object({
      to: z.string(),
      condition: ConditionSchema.optional(),
      isDefault: z.boolean().default(false),
    })
    .strict();

  const DecisionSchema = z
    .object({
      id: z.string(),
      name: z.string(),
      description: z.string().optional(),
      branches: z
        .array(
          z
            .object({
              id: z.string(),
              label: z.string(),
              condition: ConditionSchema.optional(),
              transitionTo: z.string().optional(),
              isDefault: z.boolean().default(false),
            })
            .strict(),
        )
        .min(2),
    })
    .strict();

  const ActivitySchema = z
    .object({
      id: z.string(),
      version: z.string().regex(SEMVER),
      name: z.string(),
      description: z.string().optional(),
      techniques: z.array(z.string()).optional(),
      bundleTechniques: z
        .object({ maxChars: z.number().int().min(0) })
        .strict()
        .optional(),
      steps: z.array(StepSchema).optional(),
      decisions: z.array(DecisionSchema).optional(),
      transitions: z.array(TransitionSchema).optional(),
      triggers: z
        .array(
          z
            .object({
              workflow: z.string(),
              description: z.string().optional(),
              passContext: z.array(z.string()).optional(),
            })
            .strict(),
        )
        .optional(),
      outcome: z.array(z.string()).optional(),
      required: z.boolean().default(true),
      rules: z.array(z.string()).optional(),
      artifactPrefix: z.string().optional(),
    })
    .strict();

  const VariableSchema = z
    .object({
      name: z.string().refine(isVariableName, {
        message: 'a variable name is snake_case of at least two words (or an exempt single word)',
      }),
      type: z.enum(['string', 'number', 'boolean', 'array', 'object']),
      description: z.string().optional(),
      defaultValue: z.unknown().optional(),
      required: z.boolean().default(false),
    })
    .loose();

  const ManifestSchema = z.object({
    id: z.string(),
    version: z.string().regex(SEMVER),
    title: z.string(),
    description: z.string().optional(),
    author: z.string().optional(),
    tags: z.array(z.string()).optional(),
    rules: z
      .object({
        workflow: z.array(RuleEntrySchema).optional(),
        activity: z.array(RuleEntrySchema).optional(),
        universal: z.array(RuleEntrySchema).optional(),
      })
      .optional(),
    fragments: z
      .object({
        rules: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
        checkpoints: z.record(z.string(), CheckpointBodySchema).optional(),
      })
      .strict()
      .optional(),
    variables: z.array(VariableSchema).optional(),
    techniques: z
      .object({
        workflow: z.array(z.string()).optional(),
        activity: z.array(z.string()).optional(),
      })
      .optional(),
    initialActivity: z.string().optional(),
    activities: z
      .array(z.union([z.string(), z.unknown()]))
      .min(1)
      .optional(),
  });

  return {
    ...bodySchemas(),
    step: StepSchema,
    transition: TransitionSchema,
    decision: DecisionSchema,
    activity: ActivitySchema,
    variable: VariableSchema,
    manifest: ManifestSchema,
  };
}

let built: ReturnType<typeof buildDefinitionSchemas> | undefined;

/** The authoring-format schemas (`manifest`, `activity` and their parts), built once. */
export function definitionSchemas(): ReturnType<typeof buildDefinitionSchemas> {
  built ??= buildDefinitionSchemas();
  return built;
}

type Schemas = ReturnType<typeof definitionSchemas>;

export type Step =
  | {
      kind: 'technique';
      id?: string | undefined;
      technique:
        | string
        | { name: string; inputs?: Record<string, unknown>; outputs?: Record<string, string> };
      actions?: z.infer<Bodies['action']>[] | undefined;
      when?: string | undefined;
      condition?: Condition | undefined;
      required?: false | undefined;
    }
  | {
      kind: 'action';
      id: string;
      actions?: z.infer<Bodies['action']>[] | undefined;
      when?: string | undefined;
      condition?: Condition | undefined;
      required?: false | undefined;
    }
  | ({
      kind: 'checkpoint';
      id: string;
      ref?: string | undefined;
      when?: string | undefined;
      required?: false | undefined;
    } & Partial<z.infer<Bodies['checkpointBody']>>)
  | {
      kind: 'loop';
      id: string;
      name?: string | undefined;
      loopType: 'forEach' | 'while' | 'doWhile';
      variable?: string | undefined;
      over?: string | undefined;
      breakCondition?: Condition | undefined;
      maxIterations?: number | undefined;
      steps: Step[];
      when?: string | undefined;
      condition?: Condition | undefined;
      required?: false | undefined;
    };

export type Activity = z.infer<Schemas['activity']> & {
  /** The workflow the activity file lives in (differs from the loader's for borrowed files). */
  sourceWorkflow: string;
  /** Path of the activity file, relative to the workflows root. */
  file: string;
};

export type Manifest = z.infer<Schemas['manifest']>;
export type Variable = z.infer<Schemas['variable']>;
export type CheckpointBody = z.infer<Bodies['checkpointBody']>;

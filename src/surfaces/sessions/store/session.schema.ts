/**
 * The session file (`session.json`, `schemaVersion: 1`; spec session-profile §2.4, §2.6). Read
 * back only after its seal verified; a file that fails this schema is refused as SEAL_MISMATCH.
 * `history[].type` is a closed list, as the public server's is, so each server reads the
 * other's files. Unknown top-level keys are kept (loose), so nothing is lost on a rewrite.
 */
import { z } from 'zod';

export const HISTORY_TYPES = [
  'workflow_started',
  'variables_seeded',
  'activity_entered',
  'activity_exited',
  'activity_outcome',
  'progress_published',
  'workflow_completed',
  'variable_set',
  'step_completed',
  'step_started',
  'checkpoint_reached',
  'checkpoint_response',
  'checkpoint_replayed',
  'activity_skipped',
  'workflow_triggered',
  'workflow_returned',
  'technique_fetched',
  'technique_bundled',
  'resource_fetched',
  'activity_usage',
  'activity_dispatched',
  'activity_redelivered',
  'batch_refused',
  'workflow_aborted',
  'workflow_suspended',
  'decision_reached',
  'decision_branch_taken',
  'loop_started',
  'loop_iteration',
  'loop_completed',
  'loop_break',
  'error',
] as const;

export type HistoryType = (typeof HISTORY_TYPES)[number];

/**
 * The schemas, built on first use rather than at import: a server on another profile (the
 * default `--profile pipelines`) never reads a session file, so it never pays for them (about
 * 0.25 ms of start-up, measured with initprof).
 */
function buildSessionSchemas() {
  const HistoryEntrySchema = z
    .object({
      timestamp: z.string(),
      type: z.enum(HISTORY_TYPES),
      activity: z.string().optional(),
      step: z.number().int().min(1).optional(),
      checkpoint: z.string().optional(),
      decision: z.string().optional(),
      loop: z.string().optional(),
      data: z.record(z.string(), z.unknown()).optional(),
      error: z.object({ message: z.string(), code: z.string().optional() }).optional(),
    })
    .strict();

  const ActiveCheckpointSchema = z.object({
    checkpointId: z.string(),
    activityId: z.string(),
    yieldedAt: z.string(),
    adhoc: z
      .object({
        message: z.string(),
        options: z
          .array(
            z.object({ id: z.string(), label: z.string(), description: z.string().optional() }),
          )
          .min(2),
      })
      .optional(),
  });

  const ResponseSchema = z.object({
    optionId: z.string(),
    respondedAt: z.string(),
    effects: z
      .object({
        variablesSet: z.record(z.string(), z.unknown()).optional(),
        transitionedTo: z.string().optional(),
        activitiesSkipped: z.array(z.string()).optional(),
      })
      .optional(),
  });

  const SessionFileSchema: z.ZodType<SessionFile> = z.lazy(() =>
    z
      .object({
        schemaVersion: z.literal(1),
        sessionIndex: z.string().regex(/^[A-Z2-7]{6}$/),
        workflowId: z.string(),
        workflowVersion: z.string(),
        agentId: z.string().default('orchestrator'),
        seq: z.number().int().min(0),
        ts: z.number().int(),
        startedAt: z.string(),
        currentActivity: z.string().default(''),
        currentTechnique: z.string().default(''),
        condition: z.string().default(''),
        activeCheckpoint: ActiveCheckpointSchema.optional(),
        variables: z.record(z.string(), z.unknown()).default({}),
        completedActivities: z.array(z.string()).default([]),
        skippedActivities: z.array(z.string()).default([]),
        checkpointResponses: z.record(z.string(), ResponseSchema).default({}),
        history: z.array(HistoryEntrySchema).default([]),
        status: z.enum(['running', 'completed', 'aborted']).default('running'),
        triggeredWorkflows: z
          .array(
            z.object({
              workflowId: z.string(),
              sessionIndex: z.string(),
              triggeredAt: z.string(),
              triggeredFrom: z.object({
                activityId: z.string(),
                stepIndex: z.number().int().optional(),
              }),
              status: z.enum(['running', 'completed', 'aborted', 'error']),
              completedAt: z.string().optional(),
              returnedContext: z.record(z.string(), z.unknown()).optional(),
              state: SessionFileSchema.optional(),
            }),
          )
          .default([]),
        parentSession: SessionFileSchema.optional(),
        planningFolderPath: z.string().optional(),
        repo: z.string().optional(),
        contextMode: z.enum(['persistent', 'fresh']).optional(),
        deliveredContent: z.record(z.string(), z.record(z.string(), z.string())).optional(),
        declaredArtifacts: z
          .array(z.object({ id: z.string(), name: z.string(), path: z.string().optional() }))
          .optional(),
      })
      .loose(),
  ) as unknown as z.ZodType<SessionFile>;

  return {
    historyEntry: HistoryEntrySchema,
    activeCheckpoint: ActiveCheckpointSchema,
    response: ResponseSchema,
    sessionFile: SessionFileSchema,
  };
}

let built: ReturnType<typeof buildSessionSchemas> | undefined;

/** The session-file schemas (`sessionFile` and its parts), built once. */
export function sessionSchemas(): ReturnType<typeof buildSessionSchemas> {
  built ??= buildSessionSchemas();
  return built;
}

type Schemas = ReturnType<typeof sessionSchemas>;

export type HistoryEntry = z.infer<Schemas['historyEntry']>;

export interface SessionFile {
  schemaVersion: 1;
  sessionIndex: string;
  workflowId: string;
  workflowVersion: string;
  agentId: string;
  seq: number;
  ts: number;
  startedAt: string;
  currentActivity: string;
  currentTechnique: string;
  condition: string;
  activeCheckpoint?: z.infer<Schemas['activeCheckpoint']> | undefined;
  variables: Record<string, unknown>;
  completedActivities: string[];
  skippedActivities: string[];
  checkpointResponses: Record<string, z.infer<Schemas['response']>>;
  history: HistoryEntry[];
  status: 'running' | 'completed' | 'aborted';
  triggeredWorkflows: TriggeredWorkflow[];
  parentSession?: SessionFile | undefined;
  planningFolderPath?: string | undefined;
  repo?: string | undefined;
  contextMode?: 'persistent' | 'fresh' | undefined;
  deliveredContent?: Record<string, Record<string, string>> | undefined;
  declaredArtifacts?: { id: string; name: string; path?: string | undefined }[] | undefined;
  [extra: string]: unknown;
}

export interface TriggeredWorkflow {
  workflowId: string;
  sessionIndex: string;
  triggeredAt: string;
  triggeredFrom: { activityId: string; stepIndex?: number | undefined };
  status: 'running' | 'completed' | 'aborted' | 'error';
  completedAt?: string | undefined;
  returnedContext?: Record<string, unknown> | undefined;
  state?: SessionFile | undefined;
}

/**
 * `get_workflow` (the orchestrator's bundle and the workflow summary) and `next_activity` (the
 * move to the next activity, seed 004's example call): seal, gate, fresh definition, the
 * fidelity checks (only an unknown activity blocks), `advanceSession`, reseal, and a signed
 * trace token for the leg. The response stays minimal: the worker fetches the activity itself.
 */
import { z } from 'zod';
import { checkArtifacts } from '../artifact-warnings.js';
import type { SessionTool } from '../audit.js';
import { ToolFailure } from '../context.js';
import { findActivity, TERMINAL } from '../definition/loader.js';
import { buildBundle, ORCHESTRATOR_CORE } from '../delivery/bundle.js';
import { contentHash, delivered, record, referenceMode } from '../delivery/ledger.js';
import { advanceSession, historyEvent, writeVariables } from '../store/advance.js';
import { safeKeySchema } from '../store/safe-keys.js';
import { signTrace } from '../trace.js';
import {
  checkActivityManifest,
  checkCondition,
  checkStepManifest,
  checkTechniqueFetches,
  checkTransition,
} from '../validators.js';
import { batchReading } from './batch.js';
import {
  inGatedSession,
  inSession,
  jsonResult,
  noteWarnings,
  sessionMeta,
  sessionParams,
  sessionWorkflow,
  TOOL_CODES,
  textResult,
  toYaml,
} from './common.js';

const SEPARATOR = '\n\n---\n\n';

/**
 * The argument schemas, built on first use rather than at import: only the sessions surface
 * builds them (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for them (about 0.2 ms of start-up, measured with initprof).
 */
function buildNavigationSchemas() {
  const params = sessionParams();
  const GetWorkflowInput = z.object({
    session_index: params.sessionIndex,
    agent_id: params.agentId,
  });

  const NextInput = z.object({
    session_index: params.sessionIndex,
    activity_id: z
      .string()
      .min(1)
      .describe('Target activity id (initialActivity first, then a transition target).'),
    transition_condition: z
      .string()
      .optional()
      .describe('The condition text of the transition taken (checked, advice only).'),
    step_manifest: z
      .array(
        z.object({
          step_id: z.string().describe('A step of the activity being left.'),
          output: z.string().describe('What the step produced (empty: not done).'),
        }),
      )
      .optional()
      .describe('Steps done in the activity being left, in order.'),
    activity_manifest: z
      .array(
        z.object({
          activity_id: z.string().describe('An activity completed.'),
          outcome: z.string().describe('Its outcome.'),
          transition_condition: z.string().optional().describe('The condition it left by.'),
        }),
      )
      .optional()
      .describe('Activities completed since the last call (for workers that ran several).'),
    variables_changed: z
      .record(safeKeySchema('variables_changed key'), z.unknown())
      .optional()
      .describe('Variables to set, name to value, before moving.'),
    artifacts_produced: z
      .array(
        z.object({
          id: z.string().describe('Artifact id.'),
          name: z.string().describe('Artifact name.'),
          path: z.string().optional().describe('Path, relative to the planning folder.'),
        }),
      )
      .optional()
      .describe('Artifacts written so far; merged by id into the session.'),
    agent_id: params.agentId,
    context_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The worker's context window in tokens; with agent_id, returns the batch reading."),
    progress_published: z
      .boolean()
      .optional()
      .describe('Whether progress was published to the user for this move.'),
  });

  return {
    getWorkflowInput: GetWorkflowInput,
    nextInput: NextInput,
  };
}

let built: ReturnType<typeof buildNavigationSchemas> | undefined;

function navigationSchemas(): ReturnType<typeof buildNavigationSchemas> {
  built ??= buildNavigationSchemas();
  return built;
}

type Schemas = ReturnType<typeof navigationSchemas>;

export const getWorkflow: SessionTool<Schemas['getWorkflowInput']> = {
  name: 'get_workflow',
  description:
    'Orchestrator tool: the orchestrator technique bundle, then ---, then the workflow summary (initialActivity, activities).',
  input: () => navigationSchemas().getWorkflowInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inGatedSession(ctx, args, note, async (handle, wf, drift) => {
      const { state } = handle;
      const bundle = buildBundle(ctx.root, wf.id, [
        ...wf.techniques.workflow,
        ...ORCHESTRATOR_CORE,
      ]);
      const bundleText = toYaml({
        techniques: bundle.techniques,
        rules: bundle.rules,
        ...(bundle.unresolved.length ? { unresolved: bundle.unresolved } : {}),
      });
      const scope = args.agent_id ?? state.agentId;
      const hash = contentHash(bundleText);
      const key = `workflow_bundle:${hash}`;
      const collapse = referenceMode(state, undefined) && delivered(state, scope, key, hash);
      const head = collapse
        ? toYaml({
            delivery: 'unchanged',
            content_hash: hash,
            note: 'The orchestrator bundle is unchanged since it was last delivered to this agent.',
          })
        : bundleText;
      const summary: Record<string, unknown> = {
        id: wf.id,
        version: wf.version,
        title: wf.title,
        description: wf.description,
        rules: [...wf.rules.workflow, ...wf.rules.universal],
        variables: wf.variables,
        initialActivity: wf.initialActivity,
        activities: wf.activities.map((a) => ({
          id: a.id,
          name: a.name,
          required: a.required,
          artifactPrefix: a.artifactPrefix,
        })),
        ...(wf.activityLoadErrors.length ? { activity_load_errors: wf.activityLoadErrors } : {}),
        session_index: state.sessionIndex,
        planning_folder_path: state.planningFolderPath ?? handle.folder,
      };
      await advanceSession(ctx.store, handle, ctx.clock, (s) => record(s, scope, key, hash));
      const warnings = noteWarnings(note, [drift]);
      // The bundle keeps its final newline before the separator, as the public server's does.
      return textResult(
        `${head}${SEPARATOR}${toYaml(summary)}`,
        sessionMeta(state.sessionIndex, warnings),
      );
    });
  },
};

export const nextActivity: SessionTool<Schemas['nextInput']> = {
  name: 'next_activity',
  description:
    'Orchestrator tool: move the session to activity_id (use __terminal__ to end). Manifests enable advisory validation.',
  input: () => navigationSchemas().nextInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, args.agent_id, async (handle) => {
      const { state } = handle;
      const { wf, drift } = sessionWorkflow(ctx, state);
      const cp = state.activeCheckpoint;
      if (cp !== undefined) {
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_ACTIVE,
          `Cannot transition to '${args.activity_id}': Active checkpoint '${cp.checkpointId}' on activity '${cp.activityId}'. The orchestrator must resolve it by calling respond_checkpoint.`,
        );
      }
      const target = findActivity(wf, args.activity_id);
      const terminal = args.activity_id === TERMINAL;
      if (target === undefined && !terminal) {
        throw new ToolFailure(
          TOOL_CODES.ACTIVITY_NOT_FOUND,
          `Activity not found: ${args.activity_id}`,
        );
      }
      const exiting = state.currentActivity;
      const warnings: (string | null)[] = [drift, checkTransition(state, wf, args.activity_id)];
      if (args.step_manifest && exiting) {
        warnings.push(...checkStepManifest(args.step_manifest, wf, exiting));
        warnings.push(
          ...checkTechniqueFetches(args.step_manifest, wf, exiting, state.history, args.agent_id),
        );
      } else if (!args.step_manifest && exiting) {
        warnings.push(
          `No step_manifest provided for previous activity '${exiting}'. Include a manifest to enable step completion validation.`,
        );
      }
      if (args.transition_condition !== undefined && exiting) {
        warnings.push(checkCondition(state, wf, args.activity_id, args.transition_condition));
      }
      if (args.activity_manifest) {
        warnings.push(
          ...(args.activity_manifest.length === 0
            ? [
                'Empty activity_manifest provided. Omit the parameter if no activities have been completed.',
              ]
            : checkActivityManifest(args.activity_manifest, wf)),
        );
      }
      const declared = new Map(wf.variables.map((v) => [v.name, v.type]));
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        const ev = (
          type: Parameters<typeof historyEvent>[1],
          fields: Parameters<typeof historyEvent>[2] = {},
        ) => s.history.push(historyEvent(ctx.clock, type, fields));
        if (exiting) {
          ev('activity_exited', { activity: exiting });
          if (!s.completedActivities.includes(exiting)) s.completedActivities.push(exiting);
        }
        for (const m of args.activity_manifest ?? []) {
          ev('activity_outcome', {
            activity: m.activity_id,
            data: {
              outcome: m.outcome,
              ...(m.transition_condition ? { transitionCondition: m.transition_condition } : {}),
            },
          });
        }
        if (args.variables_changed) {
          warnings.push(
            ...writeVariables(
              s,
              args.variables_changed,
              declared,
              'variables_changed',
              ctx.clock,
              exiting,
            ),
          );
        }
        for (const m of args.step_manifest ?? []) {
          if (m.output.trim() === '' || !exiting) continue;
          ev('step_completed', {
            activity: exiting,
            data: { stepId: m.step_id, ...(args.agent_id ? { agentId: args.agent_id } : {}) },
          });
        }
        if (args.artifacts_produced) {
          const byId = new Map((s.declaredArtifacts ?? []).map((a) => [a.id, a]));
          for (const a of args.artifacts_produced) byId.set(a.id, a);
          s.declaredArtifacts = [...byId.values()];
          // Checked when the caller reports artifacts, and only in a durable planning folder.
          if (!handle.transient)
            warnings.push(...checkArtifacts(handle.folder, s.declaredArtifacts));
        }
        s.currentActivity = args.activity_id;
        s.condition = args.transition_condition ?? '';
        ev('activity_entered', { activity: args.activity_id });
        if (args.progress_published !== undefined)
          ev('progress_published', {
            activity: args.activity_id,
            data: { published: args.progress_published },
          });
        if (terminal || args.activity_id === 'complete') {
          // No activity: completion belongs to the run, not to the sentinel it ended on.
          ev('workflow_completed');
          s.status = 'completed';
        }
      });
      const list = noteWarnings(note, warnings);
      note.act = args.activity_id;
      const meta = sessionMeta(state.sessionIndex, list);
      if (args.agent_id !== undefined && args.context_tokens !== undefined) {
        Object.assign(meta, {
          batch: batchReading(
            state,
            args.agent_id,
            args.activity_id,
            args.context_tokens,
            ctx.settings,
          ),
        });
      }
      const leg = ctx.traces.takeSince(state.sessionIndex);
      if (leg.events.length > 0) {
        const now = Math.floor(ctx.clock.now().getTime() / 1000);
        Object.assign(meta, {
          trace_token: signTrace(
            ctx.store.key,
            { sid: state.sessionIndex, act: args.activity_id, ...leg },
            now,
          ),
        });
      }
      return jsonResult(
        {
          activity_id: args.activity_id,
          name: target?.name ?? 'Workflow Complete',
          session_index: state.sessionIndex,
        },
        meta,
      );
    });
  },
};

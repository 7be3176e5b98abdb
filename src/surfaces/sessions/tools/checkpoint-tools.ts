/**
 * The checkpoint lifecycle (spec session-profile §1.7, §3.7): a worker yields a declared (or
 * ad-hoc) checkpoint, which gates the session; the user-facing agent presents it and responds
 * (an option after the minimum time, the default once the auto-advance timer ran out, or a
 * dismissal when its structured condition is not met); the worker resumes. An answered
 * checkpoint yielded again is replayed from its recorded answer, the bag untouched.
 */
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { ToolFailure } from '../context.js';
import type { Activity } from '../definition/definition.schema.js';
import { checkpointSteps, findActivity } from '../definition/loader.js';
import { advanceSession, historyEvent, writeVariables } from '../store/advance.js';
import type { SessionFile } from '../store/session.schema.js';
import {
  inSession,
  jsonResult,
  noteWarnings,
  openSession,
  sessionMeta,
  sessionParams,
  sessionWorkflow,
  TOOL_CODES,
  textResult,
  toYaml,
} from './common.js';

const base = (id: string) => id.split('#')[0] as string;

/** The declared checkpoint for `id` (exact match, else by base id before `#`). */
export function findCheckpoint(activity: Activity | undefined, id: string) {
  if (activity === undefined) return undefined;
  const defs = checkpointSteps(activity);
  return defs.find((c) => c.id === id) ?? defs.find((c) => base(c.id) === base(id));
}

/**
 * The argument schemas, built on first use rather than at import: only the sessions surface
 * builds them (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for them (about 0.4 ms of start-up, measured with initprof).
 */
function buildCheckpointSchemas() {
  const params = sessionParams();
  const AdhocOption = z.object({
    id: z.string().min(1).describe('Option id the answer will name.'),
    label: z.string().describe('Short text shown for the option.'),
    description: z.string().optional().describe('Longer explanation of the option.'),
  });

  const YieldInput = z.object({
    session_index: params.sessionIndex,
    checkpoint_id: z
      .string()
      .min(1)
      .describe('The checkpoint of the current activity to raise (or a new id with options).'),
    message: z.string().optional().describe('Text to show the user instead of the declared one.'),
    options: z
      .array(AdhocOption)
      .min(2)
      .optional()
      .describe('Options for a checkpoint the activity does not declare (two or more).'),
  });

  const IndexOnly = z.object({ session_index: params.sessionIndex });

  const RespondInput = z.object({
    session_index: params.sessionIndex,
    option_id: z.string().min(1).optional().describe('The option the user chose.'),
    auto_advance: z
      .boolean()
      .optional()
      .describe(
        'Take the checkpoint default without asking (only where the checkpoint allows it).',
      ),
    condition_not_met: z
      .boolean()
      .optional()
      .describe("The checkpoint's condition does not hold, so it is dismissed unanswered."),
  });

  return {
    yieldInput: YieldInput,
    indexOnly: IndexOnly,
    respondInput: RespondInput,
  };
}

let built: ReturnType<typeof buildCheckpointSchemas> | undefined;

function checkpointSchemas(): ReturnType<typeof buildCheckpointSchemas> {
  built ??= buildCheckpointSchemas();
  return built;
}

type Schemas = ReturnType<typeof checkpointSchemas>;

function effectOf(response: SessionFile['checkpointResponses'][string]) {
  const e = response.effects;
  if (e === undefined) return undefined;
  return {
    setVariable: e.variablesSet,
    transitionTo: e.transitionedTo,
    skipActivities: e.activitiesSkipped,
  };
}

export const yieldCheckpoint: SessionTool<Schemas['yieldInput']> = {
  name: 'yield_checkpoint',
  description:
    'Worker tool: mark a checkpoint active and yield to the orchestrator. Ad-hoc gates carry message and options.',
  input: () => checkpointSchemas().yieldInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, undefined, async (handle) => {
      const { state } = handle;
      const cp = state.activeCheckpoint;
      if (cp !== undefined)
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_ACTIVE,
          `Cannot yield checkpoint '${args.checkpoint_id}': Checkpoint '${cp.checkpointId}' is already active and awaiting orchestrator resolution.`,
        );
      const { wf, drift } = sessionWorkflow(ctx, state);
      const activity = findActivity(wf, state.currentActivity);
      const def = findCheckpoint(activity, args.checkpoint_id);
      // Supplying a whole decision (message and options) is what admits an undeclared id, so a
      // mistyped id without one still fails; a declared one owns its wording.
      const adhoc = args.message !== undefined && args.options !== undefined;
      if (def !== undefined && adhoc)
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_INVALID,
          `Checkpoint '${args.checkpoint_id}' is declared by activity '${state.currentActivity}', which owns its message and options. Yield it by id alone.`,
        );
      if (def === undefined && !adhoc) {
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_INVALID,
          `Checkpoint not found: ${args.checkpoint_id} in activity ${state.currentActivity}. ` +
            "To decide something this activity does not declare, pass 'message' and at least two 'options' with this id.",
        );
      }
      const key = `${state.currentActivity}-${args.checkpoint_id}`;
      const prior = state.checkpointResponses[key];
      const warnings = noteWarnings(note, [drift]);
      if (prior !== undefined) {
        await advanceSession(ctx.store, handle, ctx.clock, (s) => {
          s.history.push(
            historyEvent(ctx.clock, 'checkpoint_replayed', {
              activity: s.currentActivity,
              checkpoint: args.checkpoint_id,
              data: { optionId: prior.optionId },
            }),
          );
        });
        const effect = effectOf(prior);
        return jsonResult(
          {
            status: 'replayed',
            checkpoint_id: args.checkpoint_id,
            session_index: state.sessionIndex,
            resolved_option: prior.optionId,
            message: `Checkpoint '${args.checkpoint_id}' already has a recorded response (option '${prior.optionId}') from a prior run. The stored response has been replayed; apply any returned effect to your local state and continue execution WITHOUT yielding to the orchestrator.`,
            ...(effect ? { effect } : {}),
          },
          sessionMeta(state.sessionIndex, warnings),
        );
      }
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        s.activeCheckpoint = {
          checkpointId: args.checkpoint_id,
          activityId: s.currentActivity,
          yieldedAt: ctx.clock.now().toISOString(),
          ...(def === undefined
            ? {
                adhoc: {
                  message: args.message as string,
                  options: args.options as { id: string; label: string }[],
                },
              }
            : {}),
        };
        s.history.push(
          historyEvent(ctx.clock, 'checkpoint_reached', {
            activity: s.currentActivity,
            checkpoint: args.checkpoint_id,
          }),
        );
      });
      return jsonResult(
        {
          status: 'yielded',
          checkpoint_id: args.checkpoint_id,
          session_index: state.sessionIndex,
          message: `Checkpoint '${args.checkpoint_id}' successfully yielded. Yield this session_index to the orchestrator using a <checkpoint_yield> block, then STOP execution and wait to be resumed.`,
        },
        sessionMeta(state.sessionIndex, warnings),
      );
    });
  },
};

export const presentCheckpoint: SessionTool<Schemas['indexOnly']> = {
  name: 'present_checkpoint',
  description:
    'Load the active checkpoint (message, options, effects, auto-advance) to present to the user.',
  input: () => checkpointSchemas().indexOnly,
  traced: true,
  readOnly: true,
  run: (args, ctx, note) => {
    const { state } = openSession(ctx, args.session_index, note);
    const cp = state.activeCheckpoint;
    if (cp === undefined)
      throw new ToolFailure(
        TOOL_CODES.NO_ACTIVE_CHECKPOINT,
        `present_checkpoint: no active checkpoint on session '${state.sessionIndex}'. The worker must yield a checkpoint via yield_checkpoint before the orchestrator can present it.`,
      );
    const { wf, drift } = sessionWorkflow(ctx, state);
    const warnings = noteWarnings(note, [drift]);
    if (cp.adhoc !== undefined) {
      return textResult(
        toYaml({
          id: cp.checkpointId,
          message: cp.adhoc.message,
          options: cp.adhoc.options,
          blocking: true,
          declared: false,
          session_index: state.sessionIndex,
        }),
        sessionMeta(state.sessionIndex, warnings),
      );
    }
    const def = findCheckpoint(findActivity(wf, cp.activityId), cp.checkpointId);
    if (def === undefined)
      throw new ToolFailure(
        TOOL_CODES.CHECKPOINT_INVALID,
        `Checkpoint '${cp.checkpointId}' is no longer declared in activity '${cp.activityId}'.`,
      );
    const out: Record<string, unknown> = {
      id: cp.checkpointId,
      name: def.id,
      message: def.message,
      options: def.options,
    };
    if (def.defaultOption !== undefined) out['defaultOption'] = def.defaultOption;
    if (def.autoAdvanceMs !== undefined) out['autoAdvanceMs'] = def.autoAdvanceMs;
    if (def.condition !== undefined) out['condition'] = def.condition;
    out['session_index'] = state.sessionIndex;
    return textResult(toYaml(out), sessionMeta(state.sessionIndex, warnings));
  },
};

export const respondCheckpoint: SessionTool<Schemas['respondInput']> = {
  name: 'respond_checkpoint',
  description:
    'Resolve the active checkpoint: exactly one of option_id, auto_advance or condition_not_met.',
  input: () => checkpointSchemas().respondInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, undefined, async (handle) => {
      const { state } = handle;
      // The gate is checked before the arguments, as the public server checks it.
      const cp = state.activeCheckpoint;
      if (cp === undefined)
        throw new ToolFailure(
          TOOL_CODES.NO_ACTIVE_CHECKPOINT,
          `respond_checkpoint: no active checkpoint on session '${state.sessionIndex}'. The worker must yield a checkpoint via yield_checkpoint before the orchestrator can respond to it.`,
        );
      const modes = [
        args.option_id !== undefined,
        args.auto_advance === true,
        args.condition_not_met === true,
      ].filter(Boolean).length;
      if (modes !== 1)
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_INVALID,
          'Exactly one of option_id, auto_advance, or condition_not_met must be provided.',
        );
      const { wf, drift } = sessionWorkflow(ctx, state);
      const def =
        cp.adhoc === undefined
          ? findCheckpoint(findActivity(wf, cp.activityId), cp.checkpointId)
          : undefined;
      const options = cp.adhoc?.options ?? def?.options ?? [];
      const elapsed = Math.floor((ctx.clock.now().getTime() - Date.parse(cp.yieldedAt)) / 1000);
      let optionId: string;
      if (args.option_id !== undefined) {
        if (elapsed < ctx.settings.minResponseSeconds) {
          throw new ToolFailure(
            TOOL_CODES.CHECKPOINT_INVALID,
            `Checkpoint response too fast (${elapsed}s < ${ctx.settings.minResponseSeconds}s minimum). Present the checkpoint to the user before responding.`,
          );
        }
        if (!options.some((o) => o.id === args.option_id)) {
          throw new ToolFailure(
            TOOL_CODES.CHECKPOINT_INVALID,
            `Invalid option '${args.option_id}' for checkpoint '${cp.checkpointId}'. Valid options: [${options.map((o) => o.id).join(', ')}]`,
          );
        }
        optionId = args.option_id;
      } else if (args.auto_advance) {
        if (def?.defaultOption === undefined || def.autoAdvanceMs === undefined) {
          throw new ToolFailure(
            TOOL_CODES.CHECKPOINT_INVALID,
            `Cannot auto-advance checkpoint '${cp.checkpointId}': missing defaultOption or autoAdvanceMs.`,
          );
        }
        const wait = Math.ceil(def.autoAdvanceMs / 1000);
        if (elapsed < wait)
          throw new ToolFailure(
            TOOL_CODES.CHECKPOINT_INVALID,
            `Auto-advance timer not elapsed for checkpoint '${cp.checkpointId}' (${elapsed}s < ${wait}s). Wait for the full autoAdvanceMs (${def.autoAdvanceMs}ms) before auto-advancing.`,
          );
        optionId = def.defaultOption;
      } else {
        if (def?.condition === undefined)
          throw new ToolFailure(
            TOOL_CODES.CHECKPOINT_INVALID,
            `Cannot dismiss checkpoint '${cp.checkpointId}': it has no condition field. Only conditional checkpoints can be dismissed with condition_not_met.`,
          );
        optionId = '__condition_not_met__';
      }
      const effect =
        cp.adhoc === undefined ? def?.options?.find((o) => o.id === optionId)?.effect : undefined;
      const declared = new Map(wf.variables.map((v) => [v.name, v.type]));
      const warnings: (string | null)[] = [drift];
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        s.activeCheckpoint = undefined;
        const effects =
          effect === undefined
            ? undefined
            : {
                ...(effect.setVariable ? { variablesSet: effect.setVariable } : {}),
                ...(effect.transitionTo ? { transitionedTo: effect.transitionTo } : {}),
                ...(effect.skipActivities ? { activitiesSkipped: effect.skipActivities } : {}),
              };
        s.checkpointResponses[`${cp.activityId}-${cp.checkpointId}`] = {
          optionId,
          respondedAt: ctx.clock.now().toISOString(),
          ...(effects ? { effects } : {}),
        };
        s.history.push(
          historyEvent(ctx.clock, 'checkpoint_response', {
            activity: cp.activityId,
            checkpoint: cp.checkpointId,
            data: { optionId },
          }),
        );
        if (effect?.setVariable)
          warnings.push(
            ...writeVariables(
              s,
              effect.setVariable,
              declared,
              'setVariable',
              ctx.clock,
              cp.activityId,
            ),
          );
        for (const id of effect?.skipActivities ?? []) {
          if (!s.skippedActivities.includes(id)) s.skippedActivities.push(id);
          s.history.push(historyEvent(ctx.clock, 'activity_skipped', { activity: id }));
        }
      });
      const list = noteWarnings(note, warnings);
      const out: Record<string, unknown> = {
        checkpoint_id: cp.checkpointId,
        resolved: true,
        session_index: state.sessionIndex,
      };
      if (args.condition_not_met) out['dismissed'] = true;
      else out['resolved_option'] = optionId;
      if (effect !== undefined) out['effect'] = effect;
      return jsonResult(out, sessionMeta(state.sessionIndex, list));
    });
  },
};

export const resumeCheckpoint: SessionTool<Schemas['indexOnly']> = {
  name: 'resume_checkpoint',
  description: 'Worker tool: continue after the orchestrator resolved the checkpoint.',
  input: () => checkpointSchemas().indexOnly,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, undefined, async (handle) => {
      const { state } = handle;
      const cp = state.activeCheckpoint;
      if (cp !== undefined) {
        throw new ToolFailure(
          TOOL_CODES.CHECKPOINT_ACTIVE,
          `Cannot resume: Checkpoint '${cp.checkpointId}' is still active and has not been resolved by the orchestrator.`,
        );
      }
      await advanceSession(ctx.store, handle, ctx.clock, () => {});
      return jsonResult(
        {
          status: 'resumed',
          session_index: state.sessionIndex,
          message:
            'Checkpoint cleared. You may proceed to the next step. Note any variable updates provided by the orchestrator.',
        },
        sessionMeta(state.sessionIndex, noteWarnings(note, [])),
      );
    });
  },
};

/**
 * `get_activity` (spec session-profile §3.6; seed 004, "The get_activity delivery path"): the
 * worker's view of the current activity. After the seal and the gate: the batch bound, the
 * worker bundle, `activity_rules`, enforcement notes, the raw activity text with checkpoint refs
 * materialised, eagerly bundled step techniques within the `context_tokens` budget, and the
 * artifact contract; deliveries go through the ledger (`unchanged` markers), and the dispatch,
 * redelivery and bundling events are recorded.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { ToolFailure } from '../context.js';
import { findFragment, manifestFragments } from '../definition/fragments.js';
import { findActivity } from '../definition/loader.js';
import { producerIndex } from '../definition/producers.js';
import { readText } from '../definition/yaml-files.js';
import { materialiseRefs } from '../delivery/activity-text.js';
import { buildBundle, WORKER_CORE } from '../delivery/bundle.js';
import {
  contentHash,
  deliver,
  delivered as holds,
  record,
  referenceMode,
} from '../delivery/ledger.js';
import { bundleResources, linkedIds } from '../delivery/resource-links.js';
import { responseLedger } from '../delivery/response-ledger.js';
import { activityArtifacts, eagerSteps, enforcementNotes } from '../delivery/steps.js';
import { advanceSession, historyEvent, startStep } from '../store/advance.js';
import type { SessionFile } from '../store/session.schema.js';
import { batchReading } from './batch.js';
import {
  assertNoCheckpoint,
  inSession,
  noteWarnings,
  scopeOf,
  sessionMeta,
  sessionParams,
  sessionWorkflow,
  TOOL_CODES,
  textResult,
  toYaml,
} from './common.js';

/**
 * The argument schema, built on first use rather than at import: only the sessions surface
 * builds it (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for it (about 0.05 ms of start-up, measured with initprof).
 */
function buildActivitySchemas() {
  const params = sessionParams();
  const Input = z.object({
    session_index: params.sessionIndex,
    context_tokens: z
      .number()
      .int()
      .positive()
      .describe("The worker's context window in tokens; bounds eager bundling."),
    agent_id: params.agentId,
    bundle: params.bundle,
  });

  return { input: Input };
}

let built: ReturnType<typeof buildActivitySchemas> | undefined;

function activitySchemas(): ReturnType<typeof buildActivitySchemas> {
  built ??= buildActivitySchemas();
  return built;
}

type Schemas = ReturnType<typeof activitySchemas>;

/** Said beside `resources` (reference mode, some bodies bundled). */
const RESOURCES_BUNDLED_NOTE =
  'Bodies for technique-linked resources from eagerly bundled steps under `resources`, keyed by exact resource_id (including #section). Deduped across steps. Same delivery ledger as get_resource (resource:<id>). Reuse content or unchanged markers. Ids under `resource_refs` were NOT bundled (oversized, or past the eager-delivery budget) — call get_resource for those, or with full: true after summarization.';

/** Said beside `resource_refs` when no body is bundled. */
const RESOURCES_NOTE =
  'Ids of the technique-linked resources for the eagerly bundled steps, under `resource_refs` (exact resource_id, including #section). No bodies are bundled in this mode — call get_resource for the ids you actually need to read.';

/** Said above a bundle whose entries include `unchanged` markers. */
const MARKER_NOTE =
  'Entries marked { delivery: "unchanged", content_hash } are content you already hold.';
const IN_RESPONSE_NOTE =
  "A marker may point at a byte-identical copy EARLIER IN THIS RESPONSE — a sibling step_techniques entry, or one shared inherited_inputs/inherited_outputs/rules block several of this activity's techniques inherit from the same ancestor group. Find that copy by its content_hash and read it there.";
const PRIOR_CALL_NOTE =
  'A marker may point at content already in your context from an earlier call to this session — reuse it from there. Re-fetch one technique with get_technique { step_id, full: true }, or the whole payload with get_activity { bundle: "full" }.';

/** Whether `scope` already received this visit of `activity` (a resume after a gate). */
function heldByScope(
  state: SessionFile,
  scope: string,
  activity: string,
): { held: boolean; otherScope?: string } {
  let start = 0;
  for (let i = state.history.length - 1; i >= 0; i--) {
    const e = state.history[i];
    if (e?.type === 'activity_entered' && e.activity === activity) {
      start = i;
      break;
    }
  }
  let held = false;
  let otherScope: string | undefined;
  for (const e of state.history.slice(start)) {
    if (e.type !== 'activity_dispatched' || e.activity !== activity) continue;
    const agent = (e.data as { agentId?: unknown } | undefined)?.agentId;
    if (agent === scope) held = true;
    else if (typeof agent === 'string') otherScope = agent;
  }
  return otherScope === undefined ? { held } : { held, otherScope };
}

export const getActivity: SessionTool<Schemas['input']> = {
  name: 'get_activity',
  description:
    'Worker tool: the current activity (from session state) with its technique bundle; context_tokens bounds eager step-technique bundling.',
  input: () => activitySchemas().input,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, args.agent_id, async (handle) => {
      const { state } = handle;
      assertNoCheckpoint(state);
      const activityId = state.currentActivity;
      if (!activityId)
        throw new ToolFailure(
          TOOL_CODES.ACTIVITY_NOT_FOUND,
          'No current activity in session state. Call next_activity first.',
        );
      const scope = scopeOf(state, args.agent_id);
      const batch = batchReading(state, scope, activityId, args.context_tokens, ctx.settings);
      if (!batch.may_continue) {
        await advanceSession(ctx.store, handle, ctx.clock, (s) => {
          s.history.push(
            historyEvent(ctx.clock, 'batch_refused', {
              activity: activityId,
              data: {
                agentId: scope,
                limit:
                  batch.activities >= batch.max_activities ? 'activity_cap' : 'delivery_budget',
                activities: batch.activities,
                chars: batch.delivered_chars,
                maxActivities: batch.max_activities,
                budgetChars: batch.budget_chars,
              },
            }),
          );
        });
        throw new ToolFailure(
          TOOL_CODES.BATCH_FULL,
          `Batch full: agent '${scope}' already holds ${batch.activities} activities (${batch.delivered_chars} chars of ${batch.budget_chars}); dispatch '${activityId}' to a new agent_id.`,
        );
      }
      const { wf, drift } = sessionWorkflow(ctx, state);
      const activity = findActivity(wf, activityId);
      const raw = activity === undefined ? undefined : readText(join(ctx.root, activity.file));
      if (activity === undefined || raw === undefined)
        throw new ToolFailure(TOOL_CODES.ACTIVITY_NOT_FOUND, `Activity not found: ${activityId}`);
      const source = activity.sourceWorkflow;
      const own = manifestFragments(ctx.root, source);
      const body = materialiseRefs(raw, (ref) =>
        findFragment(ctx.root, source, own, 'checkpoints', ref),
      );
      const { held, otherScope } = heldByScope(state, scope, activityId);
      const reference = referenceMode(state, args.bundle);
      // Blocks every activity shares also collapse for a scope that already holds them (one
      // dispatched before), unless a full bundle is asked for.
      const dispatchedBefore = state.history.some(
        (e) =>
          e.type === 'activity_dispatched' &&
          (e.data as { agentId?: unknown } | undefined)?.agentId === scope,
      );
      const shared = args.bundle !== 'full' && (reference || dispatchedBefore);
      const bundle = buildBundle(ctx.root, source, [
        ...wf.techniques.activity,
        ...(activity.techniques ?? []),
        ...WORKER_CORE,
      ]);
      const techniques: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(bundle.techniques)) {
        techniques[key] = deliver(state, scope, `bundle:${key}`, toYaml(entry), entry, shared);
      }
      // Rule sets alternate across a walk, so they are keyed by content (any set held collapses).
      const rulesText = toYaml(bundle.rules);
      const rules = deliver(
        state,
        scope,
        `bundle:rules:${contentHash(rulesText)}`,
        rulesText,
        bundle.rules,
        shared,
      );
      const activityRulesList = [...wf.rules.activity, ...wf.rules.universal];
      const activityRules = deliver(
        state,
        scope,
        `activity_rules:${contentHash(toYaml(activityRulesList))}`,
        toYaml(activityRulesList),
        activityRulesList,
        shared,
      );
      const budget = Math.floor(
        args.context_tokens * ctx.settings.bundleHeadroom * ctx.settings.charsPerToken,
      );
      const head: Record<string, unknown> = {
        techniques,
        rules,
        ...(bundle.unresolved.length ? { unresolved: bundle.unresolved } : {}),
      };
      const eager = eagerSteps(
        ctx.root,
        producerIndex(ctx.root, wf),
        activity,
        state,
        budget - toYaml(head).length,
        responseLedger(state, scope, reference),
      );
      if (Object.keys(eager.stepTechniques).length > 0) {
        head['step_techniques'] = eager.stepTechniques;
        head['step_techniques_note'] =
          'Each step_techniques entry is a discrete ▼ STEP block whose composed technique is identical to a get_technique { step_id } fetch. Engage the inlined steps strictly in step order: on reaching each step, EMIT a one-line "▶ step <step_id>" begin-beat before executing it — that deliberate beat is the intentional act inlining moves off the get_technique call, and it is the stepwise observability trace for bundled steps (do NOT ping the server per bundled step; delivery-time technique_bundled events already record coverage). Resource bodies are NEVER nested inside a step_techniques entry — `resources_note` states how this response delivers the technique-linked resources. An entry for a step inside a loop body is the protocol for EVERY iteration: engage it once per iteration from the copy you hold, and do not re-fetch it per pass. Technique steps absent from this map (a gate whose reading is not available at delivery time, a gate this activity reads as no, or past the derived eager-delivery budget / a per-activity size cap) still require get_technique { step_id } before execution.';
      }
      // Resources the bundled steps link to, read as the session's workflow reads them: bodies
      // in reference mode, ids otherwise.
      const ids = linkedIds(
        eager.bundled.map((b) => ({ text: b.text, workflow: b.workflow })),
        wf.id,
      );
      const linked =
        eager.bundled.length === 0
          ? undefined
          : bundleResources({
              root: ctx.root,
              sessionWf: wf.id,
              sessionIndex: state.sessionIndex,
              ids,
              reference,
              left: eager.left,
              held: (key, hash) => holds(state, scope, key, hash),
              record: (key, hash) => record(state, scope, key, hash),
              hash: contentHash,
            });
      if (linked !== undefined) {
        if (linked.deliveries.length > 0) head['resources'] = linked.resources;
        if (linked.refs.length > 0) head['resource_refs'] = linked.refs;
        if (ids.length > 0)
          head['resources_note'] =
            linked.deliveries.length > 0 ? RESOURCES_BUNDLED_NOTE : RESOURCES_NOTE;
      }
      // The note names the referents this response can hold: a sibling entry (two or more
      // bundled steps), or what an earlier call delivered.
      const markerNotes = [
        ...(eager.bundled.length > 1 ? [IN_RESPONSE_NOTE] : []),
        ...(shared ? [PRIOR_CALL_NOTE] : []),
      ];
      const ops: Record<string, unknown> =
        markerNotes.length > 0
          ? {
              ...(reference ? { bundle_mode: 'reference' } : {}),
              bundle_note: `${MARKER_NOTE} ${markerNotes.join(' ')}`,
              ...head,
            }
          : head;
      const artifacts = activityArtifacts(ctx.root, activity);
      const notes = enforcementNotes(activity);
      const prefix = activity.artifactPrefix;
      // Laid out as the public server lays it out (each YAML block keeps its final newline), so
      // `chars` and the batch count the same characters.
      const header = `session_index: ${state.sessionIndex}${prefix ? `\nartifact_prefix: ${prefix}` : ''}`;
      const delivered = [
        `${toYaml(ops)}\n\n---\n\n${header}\n\n`,
        activityRulesList.length > 0 ? `${toYaml({ activity_rules: activityRules })}\n\n` : '',
        notes ? `${toYaml({ enforcement_notes: notes })}\n\n` : '',
        body,
        artifacts.length > 0 ? `\n${toYaml({ artifacts })}` : '',
      ].join('');
      // The batch as it stands with this delivery counted (what the worker now holds).
      const after = {
        ...batch,
        activities: batch.activities + (held ? 0 : 1),
        delivered_chars: batch.delivered_chars + delivered.length,
      };
      const text = `${delivered}\n\n${toYaml({ batch: after })}`;
      const dispatch = held ? 'resume' : 'fresh';
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        s.history.push(
          historyEvent(ctx.clock, 'activity_dispatched', {
            activity: activityId,
            data: { agentId: scope, dispatch, chars: delivered.length },
          }),
        );
        if (otherScope !== undefined && !held) {
          s.history.push(
            historyEvent(ctx.clock, 'activity_redelivered', {
              activity: activityId,
              data: { agentId: scope, priorAgentId: otherScope, chars: text.length },
            }),
          );
        }
        for (const b of eager.bundled) {
          s.history.push(
            historyEvent(ctx.clock, 'technique_bundled', {
              activity: activityId,
              data: {
                techniqueId: b.techniqueId,
                stepId: b.stepId,
                agentId: scope,
                chars: b.chars,
                delivery: b.delivery,
              },
            }),
          );
          startStep(s, ctx.clock, activityId, b.stepId, scope);
        }
        // Bundled bodies share get_resource's event; `bundled` keeps them out of the batch count.
        for (const r of linked?.deliveries ?? []) {
          s.history.push(
            historyEvent(ctx.clock, 'resource_fetched', {
              activity: activityId,
              data: {
                resourceId: r.resourceId,
                agentId: scope,
                bundled: true,
                chars: r.chars,
                delivery: r.delivery,
              },
            }),
          );
        }
      });
      const warnings = noteWarnings(note, [drift, ...eager.warnings, ...(linked?.warnings ?? [])]);
      const meta = sessionMeta(state.sessionIndex, warnings, {
        artifact_prefix: prefix,
        ...(artifacts.length > 0 ? { artifacts } : {}),
        activity_rules: activityRules,
        dispatch,
        batch: after,
        ...(eager.lazy ? { lazy_gates: eager.lazy } : {}),
        ...(eager.bundled.length ? { bundled_steps: eager.bundled.map((b) => b.stepId) } : {}),
        ...(linked?.deliveries.length
          ? { bundled_resources: linked.deliveries.map((r) => r.resourceId) }
          : {}),
        ...(linked?.refs.length ? { resource_refs: linked.refs } : {}),
        ...(notes ? { enforcement_notes: notes } : {}),
      });
      return textResult(text, meta);
    });
  },
};

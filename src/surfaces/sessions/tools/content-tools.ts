/**
 * `get_technique` and `get_resource` (spec session-profile §3.8): a step's bound technique (or
 * the activity's first technique, or the workflow's first orchestrator technique), composed in
 * the activity's source workflow and decorated for its step; a resource by id, `wf/id` and
 * `#section`. Both are gated, recorded in history and go through the delivery ledger.
 */
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { ToolFailure } from '../context.js';
import { findActivity, flattenSteps } from '../definition/loader.js';
import { positionOf, producerIndex } from '../definition/producers.js';
import { extractSection, findResource, parseResourceRef } from '../definition/resources.js';
import { resolveTechnique, techniqueObject } from '../definition/techniques.js';
import { contentHash, delivered, record, referenceMode } from '../delivery/ledger.js';
import { decoratedTechnique } from '../delivery/provenance.js';
import { resourceText } from '../delivery/resource-links.js';
import { responseLedger } from '../delivery/response-ledger.js';
import { stepTechnique } from '../delivery/steps.js';
import { advanceSession, historyEvent, recordFirstArrival, startStep } from '../store/advance.js';
import {
  inGatedSession,
  noteWarnings,
  scopeOf,
  sessionMeta,
  sessionParams,
  TOOL_CODES,
  textResult,
  toYaml,
} from './common.js';

/**
 * The argument schemas, built on first use rather than at import: only the sessions surface
 * builds them (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for them (about 0.07 ms of start-up, measured with initprof).
 */
function buildContentSchemas() {
  const params = sessionParams();
  const TechniqueInput = z.object({
    session_index: params.sessionIndex,
    agent_id: params.agentId,
    step_id: z.string().min(1).optional().describe('The step whose technique to fetch.'),
    activity_id: z
      .string()
      .min(1)
      .optional()
      .describe("The activity's own technique (default: the current activity)."),
    bundle: params.bundle,
    full: params.full,
  });

  const ResourceInput = z.object({
    session_index: params.sessionIndex,
    agent_id: params.agentId,
    resource_id: z
      .string()
      .min(1)
      .max(400)
      .describe('Resource id, or workflow/id for another workflow, optionally with #section.'),
    bundle: params.bundle,
    full: params.full,
  });

  return {
    techniqueInput: TechniqueInput,
    resourceInput: ResourceInput,
  };
}

let built: ReturnType<typeof buildContentSchemas> | undefined;

function contentSchemas(): ReturnType<typeof buildContentSchemas> {
  built ??= buildContentSchemas();
  return built;
}

type Schemas = ReturnType<typeof contentSchemas>;

export const getTechnique: SessionTool<Schemas['techniqueInput']> = {
  name: 'get_technique',
  description:
    "Load a technique: the one a step of the current activity binds (step_id), else the activity's first.",
  input: () => contentSchemas().techniqueInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inGatedSession(ctx, args, note, async (handle, wf, drift) => {
      const { state } = handle;
      const current = state.currentActivity;
      if (args.activity_id !== undefined && args.activity_id !== current) {
        throw new ToolFailure(
          TOOL_CODES.ACTIVITY_NOT_FOUND,
          `get_technique: this session's current activity is '${current}', not the '${args.activity_id}' you were dispatched for. ` +
            "A step id resolves against the current activity, so fetching now would return another activity's technique. " +
            'Report the mismatch to your orchestrator rather than retrying without activity_id.',
        );
      }
      const activity = current ? findActivity(wf, current) : undefined;
      if (current && activity === undefined)
        throw new ToolFailure(
          TOOL_CODES.ACTIVITY_NOT_FOUND,
          `Activity '${current}' not found in workflow '${wf.id}'.`,
        );
      const warnings: (string | null)[] = [drift];
      let object: Record<string, unknown>;
      let techniqueId: string;
      if (args.step_id !== undefined) {
        if (activity === undefined)
          throw new ToolFailure(
            TOOL_CODES.ACTIVITY_NOT_FOUND,
            'Cannot provide step_id when no activity is active. Call next_activity first.',
          );
        const steps = flattenSteps(activity.steps);
        const step = steps.find((s) => s.id === args.step_id);
        if (step === undefined) {
          throw new ToolFailure(
            TOOL_CODES.STEP_NOT_FOUND,
            `Step '${args.step_id}' not found in activity '${activity.id}'. Available steps: [${steps.map((s) => s.id).join(', ')}]`,
          );
        }
        if (step.kind !== 'technique')
          throw new ToolFailure(
            TOOL_CODES.TECHNIQUE_NOT_FOUND,
            `Step '${args.step_id}' in activity '${activity.id}' has no associated technique.`,
          );
        const c = stepTechnique(ctx.root, activity, step);
        if (c === undefined)
          throw new ToolFailure(
            TOOL_CODES.TECHNIQUE_NOT_FOUND,
            `Technique not found for step '${args.step_id}'.`,
          );
        const index = producerIndex(ctx.root, wf);
        const position = positionOf(index, activity.id, args.step_id);
        const decorated = decoratedTechnique(
          c,
          step,
          position === undefined ? undefined : { index, position },
        );
        warnings.push(...decorated.warnings);
        object = decorated.object;
        techniqueId = c.resolvedId;
      } else {
        const ref = activity !== undefined ? activity.techniques?.[0] : wf.techniques.workflow[0];
        if (ref === undefined)
          throw new ToolFailure(
            TOOL_CODES.TECHNIQUE_NOT_FOUND,
            activity !== undefined
              ? `Activity '${activity.id}' does not declare any activity-level techniques.`
              : `Workflow '${wf.id}' does not declare any workflow-level techniques.`,
          );
        const c = resolveTechnique(ctx.root, ref, activity?.sourceWorkflow ?? wf.id, activity?.id);
        if (c === undefined)
          throw new ToolFailure(TOOL_CODES.TECHNIQUE_NOT_FOUND, `Technique not found: ${ref}`);
        object = techniqueObject(c);
        techniqueId = c.resolvedId;
      }
      const scope = scopeOf(state, args.agent_id);
      const text = toYaml(object);
      const hash = contentHash(text);
      const key = `technique:${techniqueId}`;
      const reference = referenceMode(state, args.bundle, args.full);
      const unchanged = reference && delivered(state, scope, key, hash);
      // Under reference delivery a full answer still collapses the shared blocks (contract,
      // rules, provenance preamble) this agent already holds, and records theirs; the whole
      // technique's hash stays over the uncollapsed text, so an identical refetch collapses.
      let body = text;
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        if (reference && !unchanged) body = toYaml(responseLedger(s, scope, true).blocks(object));
        record(s, scope, key, hash);
        s.currentTechnique = techniqueId;
        recordFirstArrival(s, ctx.clock, scope);
        // `chars` is the composed size on both paths, so the ledger sums what fetches cost to build.
        const data = {
          techniqueId,
          ...(args.step_id ? { stepId: args.step_id } : {}),
          agentId: scope,
          chars: text.length,
          delivery: unchanged ? 'unchanged' : 'full',
        };
        s.history.push(historyEvent(ctx.clock, 'technique_fetched', { activity: current, data }));
        if (args.step_id) startStep(s, ctx.clock, current, args.step_id, scope);
      });
      const list = noteWarnings(note, warnings);
      if (unchanged) {
        const stub = toYaml({
          id: techniqueId,
          delivery: 'unchanged',
          content_hash: hash,
          note: 'Byte-identical to the composed technique already delivered to this agent context — reuse it from your context. Pass full: true to re-fetch the full content.',
        });
        return textResult(
          `session_index: ${state.sessionIndex}\n\n${stub}`,
          sessionMeta(state.sessionIndex, list, { delivery: 'unchanged' }),
        );
      }
      return textResult(
        `session_index: ${state.sessionIndex}\n\n${body}`,
        sessionMeta(state.sessionIndex, list),
      );
    });
  },
};

export const getResource: SessionTool<Schemas['resourceInput']> = {
  name: 'get_resource',
  description: 'Load a resource document of the workflow (id, wf/id, optionally #section).',
  input: () => contentSchemas().resourceInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inGatedSession(ctx, args, note, async (handle, wf, drift) => {
      const { state } = handle;
      const activity = state.currentActivity ? findActivity(wf, state.currentActivity) : undefined;
      const ref = parseResourceRef(args.resource_id, activity?.sourceWorkflow ?? wf.id);
      const resource = findResource(ctx.root, ref.wf, ref.id);
      if (resource === undefined)
        throw new ToolFailure(
          TOOL_CODES.RESOURCE_NOT_FOUND,
          `Resource not found: ${ref.id} in workflow ${ref.wf}`,
        );
      let body = resource.body;
      if (ref.section !== undefined) {
        const cut = extractSection(body, ref.section);
        if (cut === undefined)
          throw new ToolFailure(
            TOOL_CODES.RESOURCE_NOT_FOUND,
            `Section '#${ref.section}' not found in resource '${ref.id}'.`,
          );
        body = cut;
      }
      // The batch counts what the response carries, header lines included; the ledger hash is
      // over that same text, so an eager bundle of this resource (get_activity) and this fetch
      // share one `resource:<id>` entry.
      const text = resourceText(resource, args.resource_id, body, state.sessionIndex).fullText;
      const scope = scopeOf(state, args.agent_id);
      const hash = contentHash(text);
      const key = `resource:${args.resource_id}`;
      const unchanged =
        referenceMode(state, args.bundle, args.full) && delivered(state, scope, key, hash);
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        record(s, scope, key, hash);
        recordFirstArrival(s, ctx.clock, scope);
        s.history.push(
          historyEvent(ctx.clock, 'resource_fetched', {
            activity: s.currentActivity || undefined,
            data: {
              resourceId: args.resource_id,
              agentId: scope,
              chars: text.length,
              delivery: unchanged ? 'unchanged' : 'full',
            },
          }),
        );
      });
      const list = noteWarnings(note, [drift]);
      if (unchanged) {
        const stub = toYaml({
          resource_id: args.resource_id,
          delivery: 'unchanged',
          content_hash: hash,
          note: 'Byte-identical to the resource already delivered to this agent context — reuse it from your context. Pass full: true to re-fetch the full content.',
        });
        return textResult(
          `session_index: ${state.sessionIndex}\n\n${stub}`,
          sessionMeta(state.sessionIndex, list, { delivery: 'unchanged' }),
        );
      }
      return textResult(text, sessionMeta(state.sessionIndex, list));
    });
  },
};

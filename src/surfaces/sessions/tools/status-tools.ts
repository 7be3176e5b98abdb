/**
 * Reading a session back (spec session-profile §3.10–§3.11): `get_trace` (signed tokens
 * verified and decoded, or the in-memory trace), `get_workflow_status` (active or blocked,
 * read-only), `inspect_session` (views of the file, read-only and not gated) and `record_usage`
 * (an `activity_usage` event).
 */
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { advanceSession, historyEvent } from '../store/advance.js';
import { safeKeySchema } from '../store/safe-keys.js';
import type { SessionFile } from '../store/session.schema.js';
import { type TraceEvent, verifyTrace } from '../trace.js';
import {
  AgentIdParam,
  assertNoCheckpoint,
  inSession,
  jsonResult,
  openSession,
  SessionIndexParam,
  sessionMeta,
  sessionWorkflow,
} from './common.js';

const TraceInput = z.object({
  session_index: SessionIndexParam,
  trace_tokens: z
    .array(z.string().max(1_000_000))
    .max(1000)
    .optional()
    .describe('Trace tokens next_activity returned, to decode and verify instead of memory.'),
  agent_id: AgentIdParam,
});

export const getTrace: SessionTool<typeof TraceInput> = {
  name: 'get_trace',
  description:
    'The session trace: decode trace_tokens segments, or the in-memory trace. agent_id keeps matching events only.',
  input: TraceInput,
  traced: false,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, undefined, async (handle) => {
      assertNoCheckpoint(handle.state);
      await advanceSession(ctx.store, handle, ctx.clock, () => {});
      const keep = (events: TraceEvent[]) =>
        args.agent_id === undefined ? events : events.filter((e) => e.aid === args.agent_id);
      const index = handle.state.sessionIndex;
      if (args.trace_tokens !== undefined) {
        const events: TraceEvent[] = [];
        const errors: { index: number; error: string }[] = [];
        args.trace_tokens.forEach((token, i) => {
          const v = verifyTrace(ctx.store.key, token);
          if ('error' in v) errors.push({ index: i, error: v.error });
          else if (v.payload['sid'] !== index)
            errors.push({ index: i, error: 'token belongs to another session' });
          else events.push(...((v.payload['events'] as TraceEvent[] | undefined) ?? []));
        });
        const kept = keep(events);
        return jsonResult(
          {
            traceId: index,
            source: 'tokens',
            event_count: kept.length,
            events: kept,
            session_index: index,
            ...(errors.length ? { token_errors: errors } : {}),
          },
          sessionMeta(index, []),
        );
      }
      const kept = keep([...ctx.traces.events(index)]);
      return jsonResult(
        {
          traceId: index,
          source: 'memory',
          tracing_enabled: true,
          event_count: kept.length,
          events: kept,
          session_index: index,
        },
        sessionMeta(index, []),
      );
    });
  },
};

const IndexOnly = z.object({ session_index: SessionIndexParam });

export const getWorkflowStatus: SessionTool<typeof IndexOnly> = {
  name: 'get_workflow_status',
  description:
    'Read-only: whether the session is active or blocked on a checkpoint, and where it is.',
  input: IndexOnly,
  traced: false,
  readOnly: true,
  run: (args, ctx, note) => {
    const { state, parent } = openSession(ctx, args.session_index, note);
    const { wf, drift } = sessionWorkflow(ctx, state);
    const last = [...state.history]
      .reverse()
      .find((e) => e.type === 'checkpoint_response' || e.type === 'checkpoint_reached');
    return jsonResult(
      {
        status: state.activeCheckpoint ? 'blocked' : 'active',
        current_activity: state.currentActivity || 'none',
        completed_activities: state.completedActivities,
        variables: state.variables,
        workflow: { id: wf.id, version: wf.version, title: wf.title },
        ...(parent
          ? { parent: { session_index: parent.sessionIndex, workflow_id: parent.workflowId } }
          : {}),
        ...(last
          ? { last_checkpoint: { activity_id: last.activity, timestamp: last.timestamp } }
          : {}),
        session_index: state.sessionIndex,
      },
      sessionMeta(state.sessionIndex, [drift]),
    );
  },
};

const InspectInput = z.object({
  session_index: SessionIndexParam,
  view: z
    .enum([
      'identity',
      'variables',
      'checkpoints',
      'activities',
      'history',
      'children',
      'usage',
      'summary',
    ])
    .default('summary')
    .describe('Which part of the session to show.'),
  child_index: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Show the dispatched child at this position instead.'),
  variable: safeKeySchema('variable')
    .optional()
    .describe('With view variables: only this variable.'),
  agent_id: AgentIdParam,
});

const MILESTONES = new Set([
  'activity_entered',
  'activity_exited',
  'checkpoint_reached',
  'checkpoint_response',
  'workflow_triggered',
  'workflow_completed',
]);

function views(
  s: SessionFile,
  variable: string | undefined,
  agentId: string | undefined,
): Record<string, () => unknown> {
  const history =
    agentId === undefined
      ? s.history
      : s.history.filter((e) => (e.data as { agentId?: unknown } | undefined)?.agentId === agentId);
  const usage = s.history.filter((e) => e.type === 'activity_usage');
  return {
    identity: () => ({
      workflowId: s.workflowId,
      workflowVersion: s.workflowVersion,
      sessionIndex: s.sessionIndex,
      agentId: s.agentId,
      status: s.status,
      currentActivity: s.currentActivity,
      currentTechnique: s.currentTechnique,
      startedAt: s.startedAt,
      seq: s.seq,
      ...(s.repo ? { repo: s.repo } : {}),
      ...(s.planningFolderPath ? { planningFolderPath: s.planningFolderPath } : {}),
    }),
    variables: () => (variable === undefined ? s.variables : { [variable]: s.variables[variable] }),
    checkpoints: () =>
      Object.fromEntries(
        Object.entries(s.checkpointResponses).map(([k, r]) => [
          k,
          {
            optionId: r.optionId,
            respondedAt: r.respondedAt,
            variablesSet: r.effects?.variablesSet,
          },
        ]),
      ),
    activities: () => ({
      completed: s.completedActivities,
      skipped: s.skippedActivities,
      current: s.currentActivity,
      outcomes: s.history
        .filter((e) => e.type === 'activity_outcome')
        .map((e) => ({ activity: e.activity, ...e.data })),
    }),
    history: () => {
      const byType: Record<string, number> = {};
      for (const e of history) byType[e.type] = (byType[e.type] ?? 0) + 1;
      return {
        count: history.length,
        byType,
        milestones: history.filter((e) => MILESTONES.has(e.type)),
      };
    },
    children: () =>
      s.triggeredWorkflows.map((t, index) => ({
        index,
        sessionIndex: t.sessionIndex,
        workflowId: t.workflowId,
        status: t.state?.status ?? t.status,
        currentActivity: t.state?.currentActivity ?? '',
        completed: t.state?.completedActivities ?? [],
      })),
    usage: () => ({
      rows: usage.map((e) => ({ activity: e.activity, ...e.data })),
      count: usage.length,
    }),
  };
}

export const inspectSession: SessionTool<typeof InspectInput> = {
  name: 'inspect_session',
  description:
    'Read-only views of the session file (identity, variables, checkpoints, activities, history, children, usage, summary).',
  input: InspectInput,
  traced: false,
  readOnly: true,
  run: (args, ctx, note) => {
    const { state } = openSession(ctx, args.session_index, note);
    const target =
      args.child_index === undefined ? state : state.triggeredWorkflows[args.child_index]?.state;
    if (target === undefined)
      return jsonResult(
        { error: `no child at index ${args.child_index}` },
        sessionMeta(state.sessionIndex, []),
      );
    const v = views(target, args.variable, args.agent_id);
    const picked =
      args.view === 'summary'
        ? Object.fromEntries(
            ['identity', 'activities', 'variables', 'checkpoints', 'history', 'children'].map(
              (k) => [k, v[k]?.()],
            ),
          )
        : v[args.view]?.();
    return jsonResult(picked, sessionMeta(state.sessionIndex, []));
  },
};

const UsageInput = z.object({
  session_index: SessionIndexParam,
  activity: z.string().min(1).describe('The completed activity the usage is for.'),
  usage: z
    .record(safeKeySchema('usage key'), z.unknown())
    .describe('Usage figures as the harness reports them (e.g. token counts).'),
  basis: z
    .enum(['delta', 'cumulative'])
    .describe('delta: for this activity alone; cumulative: running total so far.'),
  agent_id: AgentIdParam,
});

export const recordUsage: SessionTool<typeof UsageInput> = {
  name: 'record_usage',
  description: 'Record harness-reported token usage for one completed activity.',
  input: UsageInput,
  traced: true,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, args.agent_id, async (handle) => {
      await advanceSession(ctx.store, handle, ctx.clock, (s) => {
        s.history.push(
          historyEvent(ctx.clock, 'activity_usage', {
            activity: args.activity,
            data: {
              usage: args.usage,
              basis: args.basis,
              ...(args.agent_id ? { agentId: args.agent_id } : {}),
            },
          }),
        );
      });
      const count = handle.state.history.filter((e) => e.type === 'activity_usage').length;
      return jsonResult(
        {
          status: 'recorded',
          activity: args.activity,
          session_index: handle.state.sessionIndex,
          usage_events: count,
          message: `Usage recorded for '${args.activity}'.`,
        },
        sessionMeta(handle.state.sessionIndex, []),
      );
    });
  },
};

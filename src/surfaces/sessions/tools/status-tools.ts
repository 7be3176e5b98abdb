/**
 * Reading a session back (spec session-profile §3.10–§3.11): `get_trace` (signed tokens
 * verified and decoded, or the in-memory trace), `get_workflow_status` (active or blocked,
 * read-only), `inspect_session` (views of the file, read-only and not gated) and `record_usage`
 * (an `activity_usage` event).
 */
import { z } from 'zod';
import type { SessionTool } from '../audit.js';
import { ToolFailure } from '../context.js';
import { advanceSession, historyEvent } from '../store/advance.js';
import { safeKeySchema } from '../store/safe-keys.js';
import type { SessionFile } from '../store/session.schema.js';
import { type TraceEvent, verifyTrace } from '../trace.js';
import {
  assertNoCheckpoint,
  inSession,
  jsonResult,
  openSession,
  sessionMeta,
  sessionParams,
  sessionWorkflow,
  TOOL_CODES,
} from './common.js';

/**
 * The argument schemas, built on first use rather than at import: only the sessions surface
 * builds them (when it is made), so a server on another profile (the default `--profile
 * pipelines`) never pays for them (about 0.2 ms of start-up, measured with initprof).
 */
function buildStatusSchemas() {
  const params = sessionParams();
  const TraceInput = z.object({
    session_index: params.sessionIndex,
    trace_tokens: z
      .array(z.string().max(1_000_000))
      .max(1000)
      .optional()
      .describe('Trace tokens next_activity returned, to decode and verify instead of memory.'),
    agent_id: params.agentId,
  });

  const IndexOnly = z.object({ session_index: params.sessionIndex });

  const InspectInput = z.object({
    session_index: params.sessionIndex,
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
    agent_id: params.agentId,
  });

  const UsageInput = z.object({
    session_index: params.sessionIndex,
    activity: z.string().min(1).describe('The completed activity the usage is for.'),
    usage: z
      .record(safeKeySchema('usage key'), z.unknown())
      .describe('Usage figures as the harness reports them (e.g. token counts).'),
    basis: z
      .enum(['delta', 'cumulative'])
      .describe('delta: for this activity alone; cumulative: running total so far.'),
    agent_id: params.agentId,
  });

  return {
    traceInput: TraceInput,
    indexOnly: IndexOnly,
    inspectInput: InspectInput,
    usageInput: UsageInput,
  };
}

let built: ReturnType<typeof buildStatusSchemas> | undefined;

function statusSchemas(): ReturnType<typeof buildStatusSchemas> {
  built ??= buildStatusSchemas();
  return built;
}

type Schemas = ReturnType<typeof statusSchemas>;

export const getTrace: SessionTool<Schemas['traceInput']> = {
  name: 'get_trace',
  description:
    'The session trace: decode trace_tokens segments, or the in-memory trace. agent_id keeps matching events only.',
  input: () => statusSchemas().traceInput,
  traced: false,
  run: async (args, ctx, note) => {
    return inSession(ctx, args.session_index, note, undefined, async (handle) => {
      assertNoCheckpoint(handle.state);
      await advanceSession(ctx.store, handle, ctx.clock, () => {});
      const keep = (events: TraceEvent[]) =>
        args.agent_id === undefined ? events : events.filter((e) => e.aid === args.agent_id);
      const index = handle.state.sessionIndex;
      if (args.trace_tokens !== undefined && args.trace_tokens.length > 0) {
        const events: TraceEvent[] = [];
        const errors: string[] = [];
        for (const token of args.trace_tokens) {
          const v = verifyTrace(ctx.store.key, token);
          if ('error' in v) errors.push(v.error);
          // The public server decodes another session's token too; this one does not hand one
          // session's events to a caller of another (docs/sessions.md, kept).
          else if (v.payload['sid'] !== index)
            errors.push(
              `Invalid trace token: the token belongs to another session, not '${index}'.`,
            );
          else events.push(...(v.payload['events'] as TraceEvent[]));
        }
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

export const getWorkflowStatus: SessionTool<Schemas['indexOnly']> = {
  name: 'get_workflow_status',
  description:
    'Read-only: whether the session is active or blocked on a checkpoint, and where it is.',
  input: () => statusSchemas().indexOnly,
  traced: false,
  readOnly: true,
  run: (args, ctx, note) => {
    const { state } = openSession(ctx, args.session_index, note);
    // The parent named is the one the file records (parentSession), as the public server reads
    // it; an embedded child created by dispatch_child records none.
    const parent = state.parentSession;
    const { wf, drift } = sessionWorkflow(ctx, state);
    const trace = ctx.traces.events(state.sessionIndex);
    // As the public server does: an empty completed list falls back to the activities the trace
    // saw entered, and the last checkpoint is the last successful respond_checkpoint it traced.
    const completed = [...state.completedActivities];
    if (completed.length === 0) {
      for (const e of trace)
        if (e.name === 'next_activity' && e.s === 'ok' && e.act && !completed.includes(e.act))
          completed.push(e.act);
    }
    const last = trace.filter((e) => e.name === 'respond_checkpoint' && e.s === 'ok').at(-1);
    return jsonResult(
      {
        status: state.activeCheckpoint ? 'blocked' : 'active',
        current_activity: state.currentActivity || 'none',
        completed_activities: completed,
        variables: state.variables,
        workflow: { id: wf.id, version: wf.version, title: wf.title },
        ...(parent
          ? {
              parent: {
                session_index: parent.sessionIndex,
                workflow_id: parent.workflowId,
                activity: parent.currentActivity,
                version: parent.workflowVersion,
              },
            }
          : {}),
        ...(last ? { last_checkpoint: { activity_id: last.act, timestamp: last.ts } } : {}),
        session_index: state.sessionIndex,
      },
      sessionMeta(state.sessionIndex, [drift]),
    );
  },
};

const MILESTONES = new Set([
  'activity_entered',
  'activity_exited',
  'checkpoint_reached',
  'checkpoint_response',
  'workflow_triggered',
  'workflow_completed',
]);

/** Token fields that usage totals sum (others ride along in the rows only). */
const TOKEN_KEYS = ['input_tokens', 'output_tokens', 'total_tokens', 'subagent_tokens'] as const;

type Row = Record<string, unknown>;

const dataOf = (e: { data?: Record<string, unknown> | undefined }): Row => e.data ?? {};

/** The finite token figures of one usage record. */
function tokens(usage: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (usage === null || typeof usage !== 'object') return out;
  for (const k of TOKEN_KEYS) {
    const v = (usage as Row)[k];
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  }
  return out;
}

/** What a (child) session's own usage rows add up to; no rows means the cost is unknown. */
function ownCost(s: SessionFile | undefined): Row {
  const rows = (s?.history ?? []).filter((e) => e.type === 'activity_usage');
  const totals: Record<string, number> = {};
  for (const e of rows) {
    if (dataOf(e)['basis'] !== 'delta') continue;
    for (const [k, v] of Object.entries(tokens(dataOf(e)['usage'])))
      totals[k] = (totals[k] ?? 0) + v;
  }
  return { cost_known: rows.length > 0, rows: rows.length, totals };
}

/** Each activity's wall clock: first entry to last exit (none while it runs). */
function wallClock(s: SessionFile): Map<string, number> {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  for (const e of s.history) {
    if (e.activity === undefined) continue;
    const t = Date.parse(e.timestamp);
    if (!Number.isFinite(t)) continue;
    if (e.type === 'activity_entered' && !(t >= (first.get(e.activity) ?? Infinity)))
      first.set(e.activity, t);
    if (e.type === 'activity_exited' && !(t <= (last.get(e.activity) ?? -Infinity)))
      last.set(e.activity, t);
  }
  const spans = new Map<string, number>();
  for (const [a, t0] of first) {
    const t1 = last.get(a);
    if (t1 !== undefined && t1 >= t0) spans.set(a, t1 - t0);
  }
  return spans;
}

function identity(s: SessionFile): Row {
  return {
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
  };
}

function checkpoints(s: SessionFile): Row {
  const out: Row = {};
  for (const [k, r] of Object.entries(s.checkpointResponses))
    out[k] = {
      optionId: r.optionId,
      respondedAt: r.respondedAt,
      variablesSet: r.effects?.variablesSet ?? {},
    };
  return out;
}

function activities(s: SessionFile): Row {
  const outcomes = s.history
    .filter((e) => e.type === 'activity_outcome' && e.activity !== undefined)
    .map((e) => {
      const d = dataOf(e);
      return {
        activity: e.activity,
        outcome: d['outcome'],
        ...(d['transitionCondition'] !== undefined
          ? { transitionCondition: d['transitionCondition'] }
          : {}),
      };
    });
  // Which entered activities published their in-progress mark, which said it did not, and
  // which said nothing: all that is left to ask once completion overwrote the mark.
  const published = new Map<string, boolean>();
  for (const e of s.history)
    if (e.type === 'progress_published' && e.activity !== undefined)
      published.set(e.activity, dataOf(e)['published'] === true);
  const entered = [
    ...new Set(
      s.history
        .filter((e) => e.type === 'activity_entered' && e.activity !== undefined)
        .map((e) => e.activity as string),
    ),
  ];
  return {
    completed: s.completedActivities,
    skipped: s.skippedActivities,
    current: s.currentActivity,
    outcomes,
    progress_mark_unpublished: entered.filter((a) => published.get(a) === false),
    progress_mark_unreported: entered.filter((a) => !published.has(a)),
  };
}

function history(s: SessionFile, agentId: string | undefined): Row {
  const events =
    agentId === undefined ? s.history : s.history.filter((e) => dataOf(e)['agentId'] === agentId);
  const byType: Record<string, number> = {};
  const milestones: Row[] = [];
  for (const e of events) {
    byType[e.type] = (byType[e.type] ?? 0) + 1;
    if (MILESTONES.has(e.type))
      milestones.push({
        type: e.type,
        ...(e.activity ? { activity: e.activity } : {}),
        ...(e.checkpoint ? { checkpoint: e.checkpoint } : {}),
      });
  }
  return { count: events.length, byType, milestones };
}

function children(s: SessionFile): Row[] {
  return s.triggeredWorkflows.map((t, index) => ({
    index,
    sessionIndex: t.sessionIndex,
    workflowId: t.workflowId,
    status: t.state?.status,
    currentActivity: t.state?.currentActivity,
    completed: t.state?.completedActivities ?? [],
    ...ownCost(t.state),
  }));
}

/**
 * Usage rows in record order with each activity's measured wall clock; delta rows summed,
 * cumulative rows kept as each agent's latest figure, rows of no stated basis counted apart;
 * the run's elapsed time; completed activities with no row; children's own cost, outside.
 */
function usage(s: SessionFile, agentId: string | undefined): Row {
  const all = s.history.filter((e) => e.type === 'activity_usage');
  const events = agentId === undefined ? all : all.filter((e) => dataOf(e)['agentId'] === agentId);
  const spans = wallClock(s);
  const totals: Record<string, number> = {};
  const latest: Record<string, Record<string, number>> = {};
  let unstated = 0;
  const rows = events.map((e) => {
    const d = dataOf(e);
    const basis = typeof d['basis'] === 'string' ? d['basis'] : 'unstated';
    const agent = typeof d['agentId'] === 'string' ? d['agentId'] : undefined;
    const figures = tokens(d['usage']);
    if (basis === 'delta')
      for (const [k, v] of Object.entries(figures)) totals[k] = (totals[k] ?? 0) + v;
    else if (basis === 'cumulative') {
      const key = agent ?? 'unattributed';
      latest[key] = { ...(latest[key] ?? {}), ...figures };
    } else unstated++;
    const span = e.activity === undefined ? undefined : spans.get(e.activity);
    return {
      activity: e.activity,
      timestamp: e.timestamp,
      usage: d['usage'],
      basis,
      ...(agent !== undefined ? { agentId: agent } : {}),
      ...(span !== undefined ? { wall_clock_ms: span } : {}),
    };
  });
  const stamps = s.history.map((e) => Date.parse(e.timestamp)).filter(Number.isFinite);
  const measured = new Set(all.map((e) => e.activity));
  return {
    rows,
    totals,
    cumulative_latest_by_agent: latest,
    unstated_basis: unstated,
    ...(stamps.length > 1 ? { elapsed_ms: Math.max(...stamps) - Math.min(...stamps) } : {}),
    wall_clock_ms_not_additive: true,
    activities_without_usage: s.completedActivities.filter((a) => !measured.has(a)),
    children_outside_totals: s.triggeredWorkflows.map((t, index) => ({
      index,
      sessionIndex: t.sessionIndex,
      workflowId: t.workflowId,
      status: t.state?.status,
      ...ownCost(t.state),
    })),
  };
}

function project(
  s: SessionFile,
  view: z.infer<Schemas['inspectInput']>['view'],
  variable: string | undefined,
  agentId: string | undefined,
): unknown {
  switch (view) {
    case 'identity':
      return identity(s);
    case 'variables':
      return variable === undefined ? s.variables : s.variables[variable];
    case 'checkpoints':
      return checkpoints(s);
    case 'activities':
      return activities(s);
    case 'history':
      return history(s, agentId);
    case 'children':
      return children(s);
    case 'usage':
      return usage(s, agentId);
    default:
      return {
        identity: identity(s),
        activities: activities(s),
        variables: s.variables,
        checkpoints: checkpoints(s),
        history: history(s, undefined),
        children: children(s),
      };
  }
}

export const inspectSession: SessionTool<Schemas['inspectInput']> = {
  name: 'inspect_session',
  description:
    'Read-only views of the session file (identity, variables, checkpoints, activities, history, children, usage, summary).',
  input: () => statusSchemas().inspectInput,
  traced: false,
  readOnly: true,
  run: (args, ctx, note) => {
    const { state } = openSession(ctx, args.session_index, note);
    const target =
      args.child_index === undefined ? state : state.triggeredWorkflows[args.child_index]?.state;
    // Worded as the public server words a path that does not resolve to a child.
    if (target === undefined)
      throw new ToolFailure(
        TOOL_CODES.CHILD_NOT_FOUND,
        `navigatePath: cannot index into non-object at jsonPath[1] (segment 'state'). Call start_session to create or resume a planning folder; the session_index is only valid against folders the server has previously sealed.`,
      );
    // An unset variable is JSON null: the public server answers it with no text at all, which
    // clients reject as a malformed result (docs/sessions.md, kept).
    const picked = project(target, args.view, args.variable, args.agent_id);
    return jsonResult(picked ?? null, sessionMeta(state.sessionIndex, []));
  },
};

export const recordUsage: SessionTool<Schemas['usageInput']> = {
  name: 'record_usage',
  description: 'Record harness-reported token usage for one completed activity.',
  input: () => statusSchemas().usageInput,
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
          message: `Usage recorded for '${args.activity}'. The session now carries ${count} usage event(s) — one per activity a dispatch covered, so a dispatch carrying a run of activities contributes several; inspect_session view usage projects the rows and view history counts the dispatches they belong to.`,
        },
        sessionMeta(handle.state.sessionIndex, []),
      );
    });
  },
};

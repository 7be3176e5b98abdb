import { parse } from 'yaml';

/**
 * The walks of the corpus every sessions check uses (the golden transcript, the side-by-side
 * comparison, the benchmark): each workflow with the default policy, and the paths a real
 * agent's convergence variables open (`simulate`), so every terminal branch is reached.
 */
export const WALKS = [
  { name: 'ponytail', workflow: 'ponytail', options: {} },
  { name: 'prism-update', workflow: 'prism-update', options: {} },
  { name: 'requirements-refinement/failure', workflow: 'requirements-refinement', options: {} },
  {
    name: 'requirements-refinement/success',
    workflow: 'requirements-refinement',
    options: {
      simulate: (activity) =>
        activity === 'validate-specification' ? { validation_passed: true } : {},
    },
  },
  {
    name: 'meta',
    workflow: 'meta',
    options: {
      simulate: (activity) =>
        activity === 'dispatch-client-workflow' ? { current_activity: null } : {},
    },
  },
];

/**
 * Walks whose get_activity calls ask for reference delivery (linked resource bodies bundled,
 * repeats as markers). Kept apart from WALKS so the golden transcript and the benchmark stay
 * on the default delivery; the side-by-side comparison runs both lists.
 */
export const REFERENCE_WALKS = [
  { name: 'ponytail/reference', workflow: 'ponytail', options: { bundle: 'reference' } },
  {
    name: 'requirements-refinement/success/reference',
    workflow: 'requirements-refinement',
    options: {
      bundle: 'reference',
      simulate: (activity) =>
        activity === 'validate-specification' ? { validation_passed: true } : {},
    },
  },
];

// ---- probes: the tools and paths the walks above never take ----

const VIEWS = [
  'summary',
  'identity',
  'variables',
  'checkpoints',
  'activities',
  'history',
  'children',
  'usage',
];

/** The trace token of the latest next_activity, for get_trace { trace_tokens }. */
function lastTraceToken(calls) {
  for (let i = calls.length - 1; i >= 0; i--) {
    const token =
      calls[i].name === 'next_activity' ? calls[i].result._meta?.trace_token : undefined;
    if (typeof token === 'string') return token;
  }
  return undefined;
}

/** Every projection of the session (read-only, ungated), with its filters. */
async function inspectAll(probe, index, variable) {
  for (const view of VIEWS) await probe('inspect_session', { session_index: index, view });
  await probe('inspect_session', { session_index: index });
  await probe('inspect_session', { session_index: index, view: 'variables', variable });
  await probe('inspect_session', { session_index: index, view: 'variables', variable: 'no_such' });
  await probe('inspect_session', { session_index: index, view: 'history', agent_id: 'worker-b' });
  await probe('inspect_session', { session_index: index, view: 'usage', agent_id: 'worker-b' });
  await probe('inspect_session', { session_index: index, view: 'summary', child_index: 0 });
}

/**
 * A child dispatched under the session (repo bound on the way), read from both sides: its own
 * workflow, status (with its parent), usage and views, and the parent's children and usage.
 */
async function childProbes(probe, index, workflow) {
  const s = { session_index: index };
  await probe('dispatch_child', { ...s, workflow_id: 'no-such-workflow', repo: 'example/repo' });
  const made = await probe('dispatch_child', { ...s, workflow_id: workflow, repo: 'example/repo' });
  let childIndex;
  try {
    childIndex = JSON.parse(made.content?.[0]?.text ?? '').session_index;
  } catch {
    return;
  }
  const c = { session_index: childIndex };
  await probe('get_workflow_status', c);
  await probe('get_workflow', c);
  await probe('record_usage', { ...c, activity: 'x', usage: { total_tokens: 10 }, basis: 'delta' });
  await probe('inspect_session', { ...c, view: 'identity' });
  await probe('inspect_session', { ...c, view: 'usage' });
  await probe('inspect_session', { ...s, view: 'children' });
  await probe('inspect_session', { ...s, view: 'usage' });
  await probe('inspect_session', { ...s, view: 'identity', child_index: 0 });
  await probe('inspect_session', { ...s, view: 'summary', child_index: 0 });
  await probe('get_workflow_status', s);
}

/**
 * Probes for one workflow: before the first activity, get_technique's workflow-level and
 * no-activity paths and the read-side tools; at the first activity, every get_resource delivery path (first and
 * repeated fetch, whole and `#section`, default/reference/full, another agent's scope, another
 * workflow's resource, unknown ids and sections) and every get_technique path (the activity's
 * own, a step's, repeats under reference, unknown and technique-less steps, a stale
 * activity_id), then usage, status, trace and every inspect view; at the first checkpoint, the
 * checkpoint tools and the gate around each phase; after the terminal activity, the same
 * read-side tools again.
 */
function probesFor({ resource, section, other, variable, child }) {
  return {
    // Before any activity: the workflow's own technique, and what a step id cannot mean yet.
    start: async ({ index, probe }) => {
      const s = { session_index: index };
      await probe('get_technique', s);
      await probe('get_technique', { ...s, bundle: 'reference' });
      await probe('get_technique', { ...s, step_id: 'no-such-step' });
      await probe('get_technique', { ...s, activity_id: 'no-such-activity' });
      await probe('get_resource', { ...s, resource_id: resource });
      await probe('get_workflow_status', s);
      await probe('inspect_session', { ...s, view: 'activities' });
    },
    activity: async ({ index, activity, visit, probe, calls }) => {
      if (visit !== 1) return;
      const s = { session_index: index };
      const res = (extra) => probe('get_resource', { ...s, ...extra });
      await res({ resource_id: resource });
      await res({ resource_id: resource });
      await res({ resource_id: resource, bundle: 'reference' });
      await res({ resource_id: resource, bundle: 'reference', full: true });
      await res({ resource_id: resource, bundle: 'full' });
      await res({ resource_id: resource, bundle: 'reference', agent_id: 'worker-b' });
      await res({ resource_id: resource, bundle: 'reference', agent_id: 'worker-b' });
      await res({ resource_id: `${resource}#${section}` });
      await res({ resource_id: `${resource}#${section}`, bundle: 'reference' });
      await res({ resource_id: `${resource}.md` });
      await res({ resource_id: other });
      await res({ resource_id: other, bundle: 'reference' });
      await res({ resource_id: 'no-such-resource' });
      await res({ resource_id: `${resource}#no-such-section` });
      await res({ resource_id: 'no-such-workflow/x' });
      const got = calls.findLast((c) => c.name === 'get_activity');
      const text = got.result.content?.[0]?.text ?? '';
      const body = parse(text.slice(text.indexOf('\n\n---\n\n') + 7));
      const flat = [];
      const walkSteps = (steps) => {
        for (const st of steps ?? []) {
          flat.push(st);
          walkSteps(st.steps);
        }
      };
      walkSteps(body.steps);
      const technique = flat.find((st) => st.kind === 'technique');
      const gate = flat.find((st) => st.kind === 'checkpoint');
      const tech = (extra) => probe('get_technique', { ...s, ...extra });
      await tech({});
      await tech({});
      await tech({ bundle: 'reference' });
      await tech({ bundle: 'reference', full: true });
      if (technique) {
        await tech({ step_id: technique.id });
        await tech({ step_id: technique.id, bundle: 'reference' });
        await tech({ step_id: technique.id, bundle: 'reference', full: true });
        await tech({ step_id: technique.id, bundle: 'reference', agent_id: 'worker-b' });
        await tech({ step_id: technique.id, activity_id: activity });
      }
      if (gate) await tech({ step_id: gate.id });
      await tech({ step_id: 'no-such-step' });
      await tech({ activity_id: 'no-such-activity' });
      await probe('record_usage', {
        ...s,
        activity,
        usage: { input_tokens: 1200, output_tokens: 300, total_tokens: 1500 },
        basis: 'delta',
      });
      await probe('record_usage', {
        ...s,
        activity,
        usage: { total_tokens: 4000 },
        basis: 'cumulative',
        agent_id: 'worker-b',
      });
      await probe('get_workflow_status', s);
      await probe('get_trace', s);
      await probe('get_trace', { ...s, agent_id: 'worker-b' });
      const token = lastTraceToken(calls);
      if (token) {
        await probe('get_trace', { ...s, trace_tokens: [token] });
        await probe('get_trace', { ...s, trace_tokens: [token], agent_id: 'worker-b' });
      }
      await probe('get_trace', { ...s, trace_tokens: ['not-a-token'] });
      await inspectAll(probe, index, variable);
      if (child) await childProbes(probe, index, child);
      await probe('health_check', {});
      await probe('list_workflows', {});
      await probe('discover', {});
    },
    checkpoint: async ({ index, step, phase, probe, calls }) => {
      const s = { session_index: index };
      // The first checkpoint of the walk only (the walk's own yields, not the probes').
      const yields = calls.filter((c) => c.name === 'yield_checkpoint' && !c.probe).length;
      if (yields > (phase === 'before-yield' ? 0 : 1)) return;
      if (phase === 'before-yield') {
        await probe('present_checkpoint', s);
        await probe('resume_checkpoint', s);
        await probe('respond_checkpoint', { ...s, option_id: 'x' });
        await probe('yield_checkpoint', { ...s, checkpoint_id: 'no-such-checkpoint' });
        await probe('yield_checkpoint', { ...s, checkpoint_id: 'adhoc', message: 'Only this?' });
        await probe('yield_checkpoint', {
          ...s,
          checkpoint_id: step.id,
          message: 'Reworded',
          options: [
            { id: 'a', label: 'A' },
            { id: 'b', label: 'B' },
          ],
        });
        // A decision the activity did not anticipate, through its whole round.
        await probe('yield_checkpoint', {
          ...s,
          checkpoint_id: 'adhoc-scope',
          message: 'Widen the pass?',
          options: [
            { id: 'widen', label: 'Widen', description: 'The whole repository.' },
            { id: 'keep', label: 'Keep' },
          ],
        });
        await probe('present_checkpoint', s);
        await probe('respond_checkpoint', s);
        await probe('respond_checkpoint', { ...s, option_id: 'keep', auto_advance: true });
        await probe('respond_checkpoint', { ...s, auto_advance: true });
        await probe('respond_checkpoint', { ...s, condition_not_met: true });
        await probe('respond_checkpoint', { ...s, option_id: 'no-such-option' });
        await probe('respond_checkpoint', { ...s, option_id: 'keep' });
        await probe('present_checkpoint', s);
        await probe('resume_checkpoint', s);
        await probe('inspect_session', { ...s, view: 'checkpoints' });
      } else if (phase === 'yielded') {
        await probe('present_checkpoint', s);
        await probe('resume_checkpoint', s);
        await probe('yield_checkpoint', { ...s, checkpoint_id: step.id });
        await probe('get_resource', { ...s, resource_id: resource });
        await probe('get_technique', s);
        await probe('get_trace', s);
        await probe('get_workflow_status', s);
        await probe('inspect_session', { ...s, view: 'checkpoints' });
        await probe('inspect_session', { ...s, view: 'summary' });
      } else if (phase === 'responded') {
        await probe('present_checkpoint', s);
        await probe('inspect_session', { ...s, view: 'checkpoints' });
        await probe('get_workflow_status', s);
      } else {
        await probe('resume_checkpoint', s);
        await probe('yield_checkpoint', { ...s, checkpoint_id: step.id });
        await probe('inspect_session', { ...s, view: 'checkpoints' });
        await probe('inspect_session', { ...s, view: 'history' });
      }
    },
    end: async ({ index, probe }) => {
      const s = { session_index: index };
      await probe('get_workflow_status', s);
      await probe('get_resource', { ...s, resource_id: resource });
      await probe('get_technique', s);
      await probe('get_technique', { ...s, step_id: 'no-such-step' });
      await probe('get_trace', s);
      await inspectAll(probe, index, variable);
    },
  };
}

/**
 * Probe calls whose results differ on purpose (docs/sessions.md, "Kept on purpose"): the reason,
 * else undefined. The public server answers an unset variable with a result that has no text,
 * which an MCP client rejects as malformed.
 */
export function keptOnPurpose(call) {
  if (call.name !== 'inspect_session') return undefined;
  if (call.args.variable === 'no_such') return 'inspect_session: an unset variable is null';
  return undefined;
}

/**
 * Walks with probes (probesFor): the side-by-side comparison's check of every tool's other
 * paths. Kept apart from WALKS for the same reason as REFERENCE_WALKS.
 */
export const PROBE_WALKS = [
  {
    name: 'ponytail/probes',
    workflow: 'ponytail',
    options: {
      probes: probesFor({
        resource: 'the-ladder',
        section: 'rungs',
        other: 'meta/writing-register',
        variable: 'lazy_intensity',
        child: 'requirements-refinement',
      }),
    },
  },
  {
    // The session's declared context mode makes reference delivery the default everywhere.
    name: 'ponytail/persistent/probes',
    workflow: 'ponytail',
    options: {
      startArgs: { context_mode: 'persistent' },
      probes: probesFor({
        resource: 'lean-brief',
        section: 'rules',
        other: 'meta/writing-register#tables',
        variable: 'pass_scope',
      }),
    },
  },
  {
    name: 'requirements-refinement/probes',
    workflow: 'requirements-refinement',
    options: {
      probes: probesFor({
        resource: 'validation-rubric',
        section: 'checks',
        other: 'ponytail/the-ladder#safety-floor',
        variable: 'validation_passed',
      }),
      simulate: (activity) =>
        activity === 'validate-specification' ? { validation_passed: true } : {},
    },
  },
  {
    name: 'meta/probes',
    workflow: 'meta',
    options: {
      probes: probesFor({
        resource: 'writing-register',
        section: 'tables',
        other: 'ponytail/lean-brief',
        variable: 'has_saved_state',
      }),
      simulate: (activity) =>
        activity === 'dispatch-client-workflow' ? { current_activity: null } : {},
    },
  },
];

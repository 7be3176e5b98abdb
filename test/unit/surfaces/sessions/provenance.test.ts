/**
 * The producer index and the `source:` lines read off it: the index of the real `meta` workflow
 * (copied corpus, never edited) placing remaps, `action: set` targets and outputs of later
 * activities; the lines a step-bound delivery of that corpus carries, as the public server words
 * them; and the classification table (binding forms, prior and later producers, declared
 * variables, ambient ids, defaults, optional markers, UNRESOLVED) over a small built index.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Step } from '../../../../src/surfaces/sessions/definition/definition.schema.js';
import { findActivity, loadWorkflow } from '../../../../src/surfaces/sessions/definition/loader.js';
import {
  type Producer,
  type ProducerIndex,
  positionOf,
  producerIndex,
  writtenIn,
} from '../../../../src/surfaces/sessions/definition/producers.js';
import {
  decoratedTechnique,
  inputSource,
} from '../../../../src/surfaces/sessions/delivery/provenance.js';
import { stepTechnique } from '../../../../src/surfaces/sessions/delivery/steps.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'sessions', 'corpus');
const LATER = ' — produced later in the workflow, not yet available';

type Io = { id: string; source?: string; destination?: string };

/** The decorated delivery of `stepId` in `activityId` of the meta workflow. */
function deliveredAt(activityId: string, stepId: string) {
  const wf = loadWorkflow(CORPUS, 'meta');
  const activity = findActivity(wf, activityId);
  assert.ok(activity, activityId);
  const step = activity.steps
    ?.flatMap(function all(s: Step): Step[] {
      return s.kind === 'loop' ? [s, ...s.steps.flatMap(all)] : [s];
    })
    .find((s) => s.id === stepId);
  assert.ok(step, stepId);
  const c = stepTechnique(CORPUS, activity, step);
  assert.ok(c, `${stepId} binds a technique`);
  const index = producerIndex(CORPUS, wf);
  const position = positionOf(index, activityId, stepId);
  assert.notEqual(position, undefined);
  const { object, warnings } = decoratedTechnique(c, step, {
    index,
    position: position as number,
  });
  const inputs = new Map(((object['inputs'] ?? []) as Io[]).map((i) => [i.id, i]));
  const inherited = object['inherited_inputs'] as { note: string; items: Io[] } | undefined;
  const outputs = new Map(((object['outputs'] ?? []) as Io[]).map((o) => [o.id, o]));
  return { object, warnings, inputs, inherited, outputs, index };
}

describe('producer index of the meta workflow', () => {
  const wf = loadWorkflow(CORPUS, 'meta');
  const index = producerIndex(CORPUS, wf);
  const named = (name: string) => index.producers.filter((p) => p.name === name);

  test('a step binding remap is a producer under the bag name, its output under its own id is not', () => {
    const [remap, ...more] = named('client_session_index');
    assert.equal(more.length, 0);
    assert.deepEqual(
      { via: remap?.via, from: remap?.fromOutput, step: remap?.stepId },
      { via: 'remap', from: 'session_index', step: 'start-or-resume-session' },
    );
    assert.ok(
      !index.producers.some(
        (p) => p.stepId === 'start-or-resume-session' && p.name === 'session_index',
      ),
    );
  });

  test('an action set target is a producer, a validate target is not', () => {
    assert.deepEqual(
      named('current_activity').map((p) => [p.via, p.stepId]),
      // Primed before the loop, then advanced inside it.
      [
        ['action', 'prime-initial-activity'],
        ['action', 'advance-activity'],
      ],
    );
    assert.ok(!index.producers.some((p) => p.stepId === 'verify-preconditions'));
  });

  test('producers are in document order across activities, a loop body after its loop', () => {
    const ordinals = index.producers.map((p) => p.ordinal);
    assert.deepEqual(
      ordinals,
      [...ordinals].sort((a, b) => a - b),
    );
    const loop = positionOf(index, 'dispatch-client-workflow', 'client-activity-loop') as number;
    const body = positionOf(index, 'dispatch-client-workflow', 'dispatch-activity') as number;
    const init = positionOf(index, 'initialize-session', 'start-or-resume-session') as number;
    assert.ok(init < loop && loop < body);
    assert.equal(positionOf(index, 'dispatch-client-workflow', 'no-such-step'), undefined);
  });

  test('what an activity writes is read off the same index', () => {
    const written = writtenIn(index, 'initialize-session');
    for (const n of ['client_planning_slug', 'client_session_index', 'client_initial_activity'])
      assert.ok(written.has(n), n);
    assert.ok(!written.has('session_index'));
  });
});

describe('source lines of a step-bound delivery of the meta workflow', () => {
  test('a bound name resolves to its remapped producer and to a set-by-step producer', () => {
    const { inputs, warnings } = deliveredAt('dispatch-client-workflow', 'dispatch-activity');
    assert.equal(
      inputs.get('session_index')?.source,
      "step-binding: output of step 'start-or-resume-session' (activity 'initialize-session'), remapped from output 'session_index'",
    );
    assert.equal(
      inputs.get('activity_id')?.source,
      "step-binding: set by step 'prime-initial-activity' (activity 'dispatch-client-workflow')",
    );
    assert.equal(
      inputs.get('agent_technique')?.source,
      'step-binding literal "workflow-engine::activity-worker"',
    );
    assert.deepEqual(warnings, []);
  });

  test('the closest prior producer wins over an earlier one', () => {
    const { inputs } = deliveredAt('initialize-session', 'start-or-resume-session');
    assert.equal(
      inputs.get('planning_slug')?.source,
      "step-binding: set by step 'adopt-saved-planning-slug' (activity 'initialize-session')",
    );
  });

  test('an inherited input carries a source only where its producer comes later', () => {
    const { inherited } = deliveredAt('initialize-session', 'start-or-resume-session');
    assert.ok(inherited);
    assert.match(inherited.note, /A `source:` line is added to an entry only where/);
    const byId = new Map(inherited.items.map((i) => [i.id, i.source]));
    assert.equal(
      byId.get('component_path'),
      `workflow variable 'component_path' (declared; output of step 'detect-monorepo' (activity 'resolve-target')${LATER})`,
    );
    // host_repo_path is produced before this step: ordinary context, no line.
    assert.ok(byId.has('host_repo_path'));
    assert.equal(byId.get('host_repo_path'), undefined);
  });

  test('a remapped output says where it lands, and inherited outputs keep the scope note', () => {
    const { outputs, object } = deliveredAt('initialize-session', 'start-or-resume-session');
    assert.equal(
      outputs.get('session_index')?.destination,
      "lands as session variable 'client_session_index' (step-binding remap)",
    );
    const io = object['inherited_outputs'] as { note: string } | undefined;
    if (io) assert.doesNotMatch(io.note, /source:/);
  });
});

describe('input source classification', () => {
  const site = (name: string, via: Producer['via'], ordinal: number, from?: string): Producer => ({
    name,
    via,
    ...(from ? { fromOutput: from } : {}),
    stepId: `s${ordinal}`,
    activityId: ordinal < 5 ? 'early' : 'late',
    ordinal,
  });
  const index: ProducerIndex = {
    declared: new Set(['declared_only', 'declared_late', 'declared_early']),
    producers: [
      site('declared_early', 'output', 1),
      site('renamed', 'remap', 2, 'raw'),
      site('item', 'loop', 3),
      site('picked', 'checkpoint', 4),
      site('declared_late', 'checkpoint', 6),
      site('late_only', 'output', 7),
    ],
    positions: new Map(),
  };
  const at = { index, position: 5 };
  const io = (id: string, description = 'd', extra: { default?: string } = {}) => ({
    id,
    description,
    ...extra,
  });
  const table: [string, ReturnType<typeof io>, unknown, boolean, string, boolean][] = [
    [
      'prior output',
      io('declared_early'),
      undefined,
      false,
      "output of step 's1' (activity 'early')",
      false,
    ],
    [
      'prior remap',
      io('renamed'),
      undefined,
      false,
      "output of step 's2' (activity 'early'), remapped from output 'raw'",
      false,
    ],
    ['loop variable', io('item'), undefined, false, "bound by loop 's3' (activity 'early')", false],
    [
      'checkpoint',
      io('picked'),
      undefined,
      false,
      "set by checkpoint 's4' (activity 'early')",
      false,
    ],
    [
      'declared only',
      io('declared_only'),
      undefined,
      false,
      "workflow variable 'declared_only' (declared)",
      false,
    ],
    [
      'declared, set later',
      io('declared_late'),
      undefined,
      false,
      `workflow variable 'declared_late' (declared; set by checkpoint 's6' (activity 'late')${LATER})`,
      false,
    ],
    [
      'later only',
      io('late_only'),
      undefined,
      false,
      `output of step 's7' (activity 'late')${LATER}`,
      false,
    ],
    [
      'ambient',
      io('model_id'),
      undefined,
      false,
      "ambient context 'model_id' (supplied at runtime)",
      false,
    ],
    [
      'default',
      io('x', 'd', { default: 'v' }),
      undefined,
      false,
      'declared default on the input (no session producer)',
      false,
    ],
    [
      'optional with qualifiers',
      io('x', ' *(optional, default `origin`)* the remote'),
      undefined,
      false,
      'optional input (no session producer — supply from working context if available)',
      false,
    ],
    [
      'inherited, no producer',
      io('x'),
      undefined,
      true,
      'ambient session context (inherited contract; no session producer found)',
      false,
    ],
    [
      'own, no producer',
      io('x'),
      undefined,
      false,
      "UNRESOLVED — no workflow variable, prior step output, or step-binding supplies 'x'",
      true,
    ],
    ['binding literal', io('x'), 3, false, 'step-binding literal 3', false],
    [
      'binding rename',
      io('x'),
      'renamed',
      false,
      "step-binding: output of step 's2' (activity 'early'), remapped from output 'raw'",
      false,
    ],
    [
      'binding bare literal',
      io('x'),
      'nothing-named-so',
      false,
      'step-binding literal "nothing-named-so"',
      false,
    ],
    [
      'binding token',
      io('x'),
      '{picked}',
      false,
      "step-binding: set by checkpoint 's4' (activity 'early')",
      false,
    ],
    [
      'binding token unresolved',
      io('x'),
      '{ghost}',
      false,
      "step-binding '{ghost}' — UNRESOLVED (no producer for 'ghost' in this workflow)",
      true,
    ],
    [
      'binding template',
      io('x'),
      '{picked}-{ghost}-{wraith}',
      false,
      `step-binding template "{picked}-{ghost}-{wraith}" — no producer for '{ghost}', '{wraith}'`,
      true,
    ],
    [
      'binding template resolved',
      io('x'),
      'at-{item}',
      false,
      'step-binding template "at-{item}"',
      false,
    ],
  ];
  for (const [name, input, bound, inherited, text, unresolved] of table) {
    test(name, () => {
      const s = inputSource(input, at, bound, inherited);
      assert.deepEqual({ text: s.text, unresolved: s.unresolved }, { text, unresolved });
    });
  }
  test('a producer at the step itself counts as later', () => {
    const s = inputSource(io('late_only'), { index, position: 7 }, undefined, false);
    assert.equal(s.text, `output of step 's7' (activity 'late')${LATER}`);
  });
});

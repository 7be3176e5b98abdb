/**
 * The producer index of a workflow (spec session-profile §3.8): every place that puts a value
 * into the session bag, in document order (activities as the workflow lists them, steps
 * flattened with loop bodies after their loop). A producer is a technique step's output (the
 * bound technique's own declared outputs, or the name a step binding remaps one to), a
 * checkpoint option's `setVariable` key, an `action: set` target, or a loop variable. The index
 * is static — declarations and order only, never session state — so what it says about a step is
 * the same on every fetch, and one index serves every step a request decorates.
 */
import type { Activity, Step } from './definition.schema.js';
import { flattenSteps, techniqueRef, type Workflow } from './loader.js';
import { ownOutputIds } from './techniques.js';

/** One place in the workflow that writes `name` into the bag. */
export interface Producer {
  readonly name: string;
  readonly via: 'output' | 'remap' | 'checkpoint' | 'action' | 'loop';
  /** For `remap`: the technique's output id the binding renamed. */
  readonly fromOutput?: string;
  readonly stepId: string;
  readonly activityId: string;
  /** Position in document order across the whole workflow. */
  readonly ordinal: number;
}

export interface ProducerIndex {
  /** Names declared as workflow variables. */
  readonly declared: ReadonlySet<string>;
  /** Every producer, in document order. */
  readonly producers: readonly Producer[];
  /** Position of each `activity|step` (the last, where an id repeats within an activity). */
  readonly positions: ReadonlyMap<string, number>;
}

/** Builds the index of `wf` (the activities' own technique files read once per ref). */
export function producerIndex(root: string, wf: Workflow): ProducerIndex {
  const producers: Producer[] = [];
  const positions = new Map<string, number>();
  const outputsOf = memoOutputs(root);
  let ordinal = 0;
  for (const activity of wf.activities) {
    for (const step of flattenSteps(activity.steps)) {
      const at = ordinal++;
      if (step.id !== undefined) positions.set(`${activity.id}|${step.id}`, at);
      const stepId = step.id ?? techniqueRef(step) ?? '?';
      for (const w of writes(step, activity, outputsOf))
        producers.push({ ...w, stepId, activityId: activity.id, ordinal: at });
    }
  }
  return { declared: new Set(wf.variables.map((v) => v.name)), producers, positions };
}

/** The position of a step, or undefined when the activity does not hold it. */
export function positionOf(
  index: ProducerIndex,
  activityId: string,
  stepId: string,
): number | undefined {
  return index.positions.get(`${activityId}|${stepId}`);
}

/** Root bag names the activity writes itself (a dotted target writes its root). */
export function writtenIn(index: ProducerIndex, activityId: string): Set<string> {
  const out = new Set<string>();
  for (const p of index.producers)
    if (p.activityId === activityId) out.add(p.name.split('.')[0] as string);
  return out;
}

type Write = Pick<Producer, 'name' | 'via' | 'fromOutput'>;
type OutputsOf = (ref: string, activity: Activity) => string[];

/**
 * What one step writes, in the order the index lists them: remaps before the outputs they leave
 * alone, so of two writes of one name in one step the output is the closest.
 */
function writes(step: Step, activity: Activity, outputsOf: OutputsOf): Write[] {
  const out: Write[] = [];
  if (step.kind === 'technique') {
    const ref = techniqueRef(step) as string;
    const remaps = typeof step.technique === 'string' ? {} : (step.technique.outputs ?? {});
    for (const [fromOutput, name] of Object.entries(remaps))
      out.push({ name, via: 'remap', fromOutput });
    for (const id of outputsOf(ref, activity))
      if (!Object.hasOwn(remaps, id)) out.push({ name: id, via: 'output' });
  }
  if (step.kind === 'checkpoint')
    for (const o of step.options ?? [])
      for (const name of Object.keys(o.effect?.setVariable ?? {}))
        out.push({ name, via: 'checkpoint' });
  if (step.kind === 'technique' || step.kind === 'action')
    for (const a of step.actions ?? [])
      if (a.action === 'set' && a.target) out.push({ name: a.target, via: 'action' });
  if (step.kind === 'loop' && step.variable) out.push({ name: step.variable, via: 'loop' });
  return out;
}

/** Own output ids per (activity, ref): a bare ref resolves in its activity's group first. */
function memoOutputs(root: string): OutputsOf {
  const seen = new Map<string, string[]>();
  return (ref, activity) => {
    const key = `${activity.id}|${ref}`;
    let ids = seen.get(key);
    if (ids === undefined) {
      ids = ownOutputIds(root, ref, activity.sourceWorkflow, activity.id);
      seen.set(key, ids);
    }
    return ids;
  };
}

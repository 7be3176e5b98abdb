/**
 * Step techniques (spec session-profile §3.8–§3.9): the technique a step binds (with the
 * `<activity>::<ref>` shorthand, in the activity's source workflow), decorated for a step-bound
 * delivery (each input's `source`, remapped outputs' `destination`, a provenance note); the
 * eager bundle of `get_activity` (gates evaluated over the bag, lazy when a gate reads what the
 * activity itself writes or what the bag lacks, stopping at the first technique that does not
 * fit the budget); the activity's artifact contract; and its enforcement notes.
 */
import { conditionVariables, evaluateCondition } from '../definition/condition.js';
import type { Activity, Step } from '../definition/definition.schema.js';
import { flattenSteps, techniqueRef } from '../definition/loader.js';
import {
  type ComposedTechnique,
  INHERITED_NOTE,
  resolveTechnique,
  techniqueObject,
} from '../definition/techniques.js';
import { evaluateAst, parseWhen, whenVariables } from '../definition/when.js';
import type { SessionFile } from '../store/session.schema.js';
import type { ResponseLedger } from './response-ledger.js';
import { toYaml } from './yaml.js';

export const PROVENANCE_NOTE =
  'Deliver each output by reporting it in your step-manifest `output`: one output as a short summary string; a step with more than one output as a JSON object keyed by output id. An output lands in the session bag under its declared id, unless it carries a `destination:` line — shown only on a remapped output — in which case it lands under that name.';

/** The composed technique a step binds, or undefined when it does not resolve. */
export function stepTechnique(
  root: string,
  activity: Activity,
  step: Step,
): ComposedTechnique | undefined {
  const ref = techniqueRef(step);
  return ref === undefined
    ? undefined
    : resolveTechnique(root, ref, activity.sourceWorkflow, activity.id);
}

/** Bag names an activity writes itself (technique outputs and remaps, setVariable, set, loop variables). */
function writtenHere(root: string, activity: Activity): Set<string> {
  const out = new Set<string>();
  for (const step of flattenSteps(activity.steps)) {
    if (step.kind === 'loop' && step.variable) out.add(step.variable);
    if (step.kind === 'checkpoint')
      for (const o of step.options ?? [])
        for (const k of Object.keys(o.effect?.setVariable ?? {})) out.add(k);
    if (step.kind === 'technique' || step.kind === 'action')
      for (const a of step.actions ?? []) if (a.action === 'set' && a.target) out.add(a.target);
    if (step.kind === 'technique') {
      if (typeof step.technique !== 'string')
        for (const v of Object.values(step.technique.outputs ?? {})) out.add(v);
      for (const o of stepTechnique(root, activity, step)?.technique.outputs ?? []) out.add(o.id);
    }
  }
  return out;
}

/** How a step-binding value resolves: a bag name renamed, or a literal. */
function bindingSource(
  bound: unknown,
  declared: ReadonlySet<string>,
  priorOutputs: ReadonlyMap<string, string>,
): string {
  const name =
    typeof bound === 'string' ? /^\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(bound)?.[1] : undefined;
  if (name === undefined) return `step-binding literal ${JSON.stringify(bound)}`;
  const producer = priorOutputs.get(name);
  if (producer !== undefined) return `step-binding: output of step ${producer}`;
  if (declared.has(name)) return `step-binding: workflow variable '${name}' (declared)`;
  return `step-binding literal ${JSON.stringify(bound)}`;
}

/** The step-bound delivery object: the technique with `source`/`destination` decorations. */
export function decoratedTechnique(
  c: ComposedTechnique,
  step: Step,
  declared: ReadonlySet<string>,
  priorOutputs: ReadonlyMap<string, string>,
): { object: Record<string, unknown>; unresolved: string[] } {
  const binding =
    step.kind === 'technique' && typeof step.technique !== 'string' ? step.technique : undefined;
  const unresolved: string[] = [];
  const inputs = (c.technique.inputs ?? []).map((i) => {
    let source: string;
    const bound = binding?.inputs?.[i.id];
    const producer = priorOutputs.get(i.id);
    if (bound !== undefined) source = bindingSource(bound, declared, priorOutputs);
    else if (producer !== undefined) source = `output of step ${producer}`;
    else if (declared.has(i.id)) source = `workflow variable '${i.id}' (declared)`;
    else if (i.default !== undefined)
      source = 'declared default on the input (no session producer)';
    else if (/^\*\(optional/.test(i.description)) {
      source = 'optional input (no session producer — supply from working context if available)';
    } else {
      source = `UNRESOLVED ('${i.id}')`;
      unresolved.push(i.id);
    }
    return { ...i, source };
  });
  const outputs = (c.technique.outputs ?? []).map((o) => {
    const dest = binding?.outputs?.[o.id];
    return dest === undefined
      ? o
      : { ...o, destination: `lands as session variable '${dest}' (step-binding remap)` };
  });
  const decorated: ComposedTechnique = {
    ...c,
    // Named as the step binds it (the `<activity>::` shorthand stays implicit).
    resolvedId: techniqueRef(step) ?? c.resolvedId,
    technique: {
      ...c.technique,
      ...(inputs.length ? { inputs } : {}),
      ...(outputs.length ? { outputs } : {}),
    },
  };
  return {
    object: techniqueObject(decorated, {
      provenanceNote: PROVENANCE_NOTE,
      inheritedNote: INHERITED_NOTE,
    }),
    unresolved,
  };
}

/**
 * Outputs produced before `stepId` (earlier activities of the workflow, then earlier steps of
 * this one), each mapped to its producer as `'<step>' (activity '<id>')`; the closest wins.
 */
export function outputsBefore(
  root: string,
  activities: readonly Activity[],
  activity: Activity,
  stepId: string,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of activities) {
    for (const step of flattenSteps(a.steps)) {
      if (a.id === activity.id && step.id === stepId) return out;
      for (const o of stepTechnique(root, a, step)?.technique.outputs ?? []) {
        out.set(o.id, `'${step.id}' (activity '${a.id}')`);
      }
    }
  }
  return out;
}

type Gate = 'yes' | 'no' | 'pending' | 'unbound' | 'unparsed';

function gateOf(step: Step, bag: Record<string, unknown>, written: Set<string>): Gate {
  const reads: string[] = [];
  const ast = step.when === undefined ? undefined : parseWhen(step.when);
  if (step.when !== undefined && ast === undefined) return 'unparsed';
  if (ast) reads.push(...whenVariables(ast));
  if (step.condition) reads.push(...conditionVariables(step.condition));
  if (reads.length === 0 && ast === undefined && step.condition === undefined) return 'yes';
  const roots = reads.map((r) => r.split('.')[0] as string);
  if (roots.some((r) => written.has(r))) return 'pending';
  if (roots.some((r) => !(r in bag))) return 'unbound';
  const ok =
    (ast === undefined || evaluateAst(ast, bag)) &&
    (step.condition === undefined || evaluateCondition(step.condition, bag));
  return ok ? 'yes' : 'no';
}

export interface BundledStep {
  stepId: string;
  techniqueId: string;
  chars: number;
  delivery: 'full' | 'unchanged';
  /** The workflow the technique file lives in (its relative links resolve there). */
  workflow: string;
  /** The technique's YAML, also for a marker (its resource links are listed either way). */
  text: string;
}

/** The eager step bundle of an activity under `budget` characters. */
export function eagerSteps(
  root: string,
  activities: readonly Activity[],
  declared: ReadonlySet<string>,
  activity: Activity,
  state: SessionFile,
  budget: number,
  ledger: ResponseLedger,
): {
  stepTechniques: Record<string, unknown>;
  bundled: BundledStep[];
  /** Budget characters left after the bundled steps (linked resource bodies draw on it). */
  left: number;
  lazy?: { pending: string[]; unbound: string[]; unparsed: string[] };
} {
  const stepTechniques: Record<string, unknown> = {};
  const bundled: BundledStep[] = [];
  const lazy = { pending: [] as string[], unbound: [] as string[], unparsed: [] as string[] };
  const max = activity.bundleTechniques?.maxChars;
  if (max === 0) return { stepTechniques, bundled, left: budget };
  const written = writtenHere(root, activity);
  let left = budget;
  const walk = (steps: readonly Step[], enclosing: Gate): boolean => {
    for (const step of steps) {
      const own = gateOf(step, state.variables, written);
      const gate = enclosing !== 'yes' ? enclosing : own;
      if (step.kind === 'loop') {
        if (!walk(step.steps, gate)) return false;
        continue;
      }
      if (step.kind !== 'technique' || step.id === undefined) continue;
      if (gate === 'pending' || gate === 'unbound' || gate === 'unparsed') {
        lazy[gate].push(step.id);
        continue;
      }
      if (gate === 'no') continue;
      const c = stepTechnique(root, activity, step);
      if (c === undefined) continue;
      const { object } = decoratedTechnique(
        c,
        step,
        declared,
        outputsBefore(root, activities, activity, step.id),
      );
      // Measured and hashed as the YAML a get_technique fetch of the step returns.
      const text = toYaml(object);
      if (max !== undefined && text.length > max) continue;
      const stepMarker = `▼ STEP ${step.id} · technique ${c.resolvedId}`;
      const sent = ledger.entry(`technique:${c.resolvedId}`, text, object);
      const unchanged = sent !== object;
      if (!unchanged && text.length > left) return false;
      if (!unchanged) left -= text.length;
      stepTechniques[step.id] = {
        marker: stepMarker,
        ...(unchanged ? sent : ledger.blocks(object)),
      };
      bundled.push({
        stepId: step.id,
        techniqueId: c.resolvedId,
        chars: unchanged ? 0 : text.length,
        delivery: unchanged ? 'unchanged' : 'full',
        workflow: c.workflow,
        text,
      });
    }
    return true;
  };
  walk(activity.steps ?? [], 'yes');
  const anyLazy = lazy.pending.length + lazy.unbound.length + lazy.unparsed.length > 0;
  return anyLazy ? { stepTechniques, bundled, left, lazy } : { stepTechniques, bundled, left };
}

/** The activity's artifacts: `#### artifact` outputs of every technique its steps bind. */
export function activityArtifacts(
  root: string,
  activity: Activity,
): { id: string; name: string; audience?: string }[] {
  const seen = new Set<string>();
  const out: { id: string; name: string; audience?: string }[] = [];
  for (const step of flattenSteps(activity.steps)) {
    for (const o of stepTechnique(root, activity, step)?.technique.outputs ?? []) {
      if (o.artifact === undefined || seen.has(o.artifact.name)) continue;
      seen.add(o.artifact.name);
      out.push({
        id: o.id,
        name: o.artifact.name,
        ...(o.audience ? { audience: o.audience } : {}),
      });
    }
  }
  return out;
}

/** Who executes the agent-interpreted constructs (actions, auto-advance checkpoints), if any. */
export function enforcementNotes(activity: Activity): Record<string, string> | undefined {
  const steps = flattenSteps(activity.steps);
  const notes: Record<string, string> = {};
  if (
    steps.some(
      (s) => (s.kind === 'action' || s.kind === 'technique') && (s.actions?.length ?? 0) > 0,
    )
  ) {
    notes['actions'] =
      'Action verbs (a kind:action step, or an `actions:` list on a step) are AGENT-executed: you carry them out. The server records the step but applies no action verb and sets no session variable from one.';
  }
  if (steps.some((s) => s.kind === 'checkpoint' && s.autoAdvanceMs !== undefined)) {
    notes['auto_advance'] =
      "A checkpoint's auto-advance is SERVER-timed: the server enforces the full autoAdvanceMs timer when you call respond_checkpoint { auto_advance: true }, then applies its defaultOption. `blocking` is an advisory orchestrator directive (agent-honored), not a server gate.";
  }
  return Object.keys(notes).length > 0 ? notes : undefined;
}

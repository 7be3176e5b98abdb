/**
 * Step techniques (spec session-profile §3.8–§3.9): the technique a step binds (with the
 * `<activity>::<ref>` shorthand, in the activity's source workflow); the eager bundle of `get_activity` (gates evaluated over the bag, lazy when a gate reads what the
 * activity itself writes or what the bag lacks, stopping at the first technique that does not
 * fit the budget, each decorated as `provenance.ts` decorates a step-bound fetch); the
 * activity's artifact contract; and its enforcement notes.
 */
import { conditionVariables, evaluateCondition } from '../definition/condition.js';
import type { Activity, Step } from '../definition/definition.schema.js';
import { flattenSteps, techniqueRef } from '../definition/loader.js';
import { type ProducerIndex, positionOf, writtenIn } from '../definition/producers.js';
import { type ComposedTechnique, resolveTechnique } from '../definition/techniques.js';
import { evaluateAst, parseWhen, whenVariables } from '../definition/when.js';
import type { SessionFile } from '../store/session.schema.js';
import { decoratedTechnique } from './provenance.js';
import type { ResponseLedger } from './response-ledger.js';
import { toYaml } from './yaml.js';

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
  /** The workflow the technique file lives in (its bare resource links are qualified with it). */
  workflow: string;
  /** The technique's YAML, also for a marker (its resource links are listed either way). */
  text: string;
}

/**
 * The eager step bundle of an activity under `budget` characters, and the provenance warnings
 * of the steps it bundles.
 */
export function eagerSteps(
  root: string,
  index: ProducerIndex,
  activity: Activity,
  state: SessionFile,
  budget: number,
  ledger: ResponseLedger,
): {
  stepTechniques: Record<string, unknown>;
  bundled: BundledStep[];
  warnings: string[];
  /** Budget characters left after the bundled steps (linked resource bodies draw on it). */
  left: number;
  lazy?: { pending: string[]; unbound: string[]; unparsed: string[] };
} {
  const stepTechniques: Record<string, unknown> = {};
  const bundled: BundledStep[] = [];
  const warnings: string[] = [];
  const lazy = { pending: [] as string[], unbound: [] as string[], unparsed: [] as string[] };
  const max = activity.bundleTechniques?.maxChars;
  if (max === 0) return { stepTechniques, bundled, warnings, left: budget };
  const written = writtenIn(index, activity.id);
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
      const position = positionOf(index, activity.id, step.id);
      const decorated = decoratedTechnique(
        c,
        step,
        position === undefined ? undefined : { index, position },
      );
      const object = decorated.object;
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
      warnings.push(...decorated.warnings);
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
  return anyLazy
    ? { stepTechniques, bundled, warnings, left, lazy }
    : { stepTechniques, bundled, warnings, left };
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

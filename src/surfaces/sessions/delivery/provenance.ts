/**
 * Where a step-bound technique's inputs come from (spec session-profile §3.8), read off the
 * workflow's producer index: each input gets a `source:` line naming its step binding, the
 * closest producer before the step, a declared workflow variable (with the producer that sets
 * it later, if one does), a later producer, an ambient id, a default or an optional marker — or
 * UNRESOLVED, which is also reported as a warning. Contract-inherited inputs are annotated only
 * where that says more than their block note: a binding, or a producer later in the workflow.
 * Remapped outputs (own and inherited) get a `destination:` line.
 */
import type { Step } from '../definition/definition.schema.js';
import { techniqueRef } from '../definition/loader.js';
import type { Producer, ProducerIndex } from '../definition/producers.js';
import type { TechniqueIo } from '../definition/technique-parse.js';
import {
  type ComposedTechnique,
  INHERITED_NOTE,
  techniqueObject,
} from '../definition/techniques.js';

export const PROVENANCE_NOTE =
  'Deliver each output by reporting it in your step-manifest `output`: one output as a short summary string; a step with more than one output as a JSON object keyed by output id. An output lands in the session bag under its declared id, unless it carries a `destination:` line — shown only on a remapped output — in which case it lands under that name.';

/** Bag names the caller supplies at run time rather than a workflow producing them. */
const AMBIENT = new Set(['target_symbol', 'impact_report', 'model_id']);

/** An input is optional when its description leads with `*(optional…)*` (qualifiers allowed). */
const OPTIONAL = /^[*_]{0,2}\(optional\b[^)]*\)/i;

const NAME = '[a-zA-Z_][a-zA-Z0-9_]*';
const TOKEN = new RegExp(`\\{(${NAME})\\}`, 'g');
const EXACT_TOKEN = new RegExp(`^\\{(${NAME})\\}$`);

type Kind =
  | 'binding'
  | 'prior'
  | 'declared'
  | 'declared-later'
  | 'later'
  | 'ambient'
  | 'default'
  | 'optional'
  | 'inherited-ambient'
  | 'unresolved';

/** The kinds an inherited entry is annotated with; the rest its block note already says. */
const NOTEWORTHY: ReadonlySet<Kind> = new Set(['binding', 'later', 'declared-later']);

/** A declared input or output as delivered on a step-bound fetch. */
type Annotated = TechniqueIo & { source?: string; destination?: string };

/** A step's place in its workflow: the index, and the step's position in it. */
export interface StepPlace {
  readonly index: ProducerIndex;
  readonly position: number;
}

interface Source {
  readonly text: string;
  readonly kind: Kind;
  readonly unresolved: boolean;
}

function producerText(p: Producer, later: boolean): string {
  const where = `'${p.stepId}' (activity '${p.activityId}')`;
  const tail = later ? ' — produced later in the workflow, not yet available' : '';
  if (p.via === 'output' || p.via === 'remap') {
    const remap = p.via === 'remap' ? `, remapped from output '${p.fromOutput}'` : '';
    return `output of step ${where}${remap}${tail}`;
  }
  const verb = { checkpoint: 'set by checkpoint', loop: 'bound by loop', action: 'set by step' };
  return `${verb[p.via]} ${where}${tail}`;
}

/**
 * A bag name under the name-match convention: the closest producer before the step, else a
 * declared variable, else a producer at or after the step, else an ambient id.
 */
function bagName(name: string, at: StepPlace): Omit<Source, 'unresolved'> | undefined {
  const sites = at.index.producers.filter((p) => p.name === name);
  const prior = sites.filter((p) => p.ordinal < at.position).at(-1);
  const later = sites.find((p) => p.ordinal >= at.position);
  if (prior) return { text: producerText(prior, false), kind: 'prior' };
  if (at.index.declared.has(name)) {
    return later
      ? {
          text: `workflow variable '${name}' (declared; ${producerText(later, true)})`,
          kind: 'declared-later',
        }
      : { text: `workflow variable '${name}' (declared)`, kind: 'declared' };
  }
  if (later) return { text: producerText(later, true), kind: 'later' };
  if (AMBIENT.has(name))
    return { text: `ambient context '${name}' (supplied at runtime)`, kind: 'ambient' };
  return undefined;
}

/** A step-binding value: a literal, a `{token}`, a template, or a bare rename of a bag name. */
function bindingSource(bound: unknown, at: StepPlace): Source {
  const ok = (text: string): Source => ({ text, kind: 'binding', unresolved: false });
  if (typeof bound !== 'string') return ok(`step-binding literal ${JSON.stringify(bound)}`);
  const exact = EXACT_TOKEN.exec(bound)?.[1];
  if (exact !== undefined) {
    const inner = bagName(exact, at);
    return inner
      ? ok(`step-binding: ${inner.text}`)
      : {
          text: `step-binding '${bound}' — UNRESOLVED (no producer for '${exact}' in this workflow)`,
          kind: 'binding',
          unresolved: true,
        };
  }
  if (bound.includes('{')) {
    const missing = [...bound.matchAll(TOKEN)]
      .map((m) => m[1] as string)
      .filter((t) => bagName(t, at) === undefined);
    const gap = missing.length
      ? ` — no producer for ${missing.map((t) => `'{${t}}'`).join(', ')}`
      : '';
    return {
      text: `step-binding template ${JSON.stringify(bound)}${gap}`,
      kind: 'binding',
      unresolved: missing.length > 0,
    };
  }
  // A bare value is a rename only when it names something the bag gets; otherwise a literal.
  const renamed = bagName(bound, at);
  return ok(
    renamed ? `step-binding: ${renamed.text}` : `step-binding literal ${JSON.stringify(bound)}`,
  );
}

/** Where one declared input comes from. */
export function inputSource(
  input: TechniqueIo,
  at: StepPlace,
  bound: unknown,
  inherited: boolean,
): Source {
  if (bound !== undefined) return bindingSource(bound, at);
  const own = bagName(input.id, at);
  if (own) return { ...own, unresolved: false };
  const fallback = (text: string, kind: Kind): Source => ({ text, kind, unresolved: false });
  if (input.default !== undefined)
    return fallback('declared default on the input (no session producer)', 'default');
  if (OPTIONAL.test((input.description ?? '').trim()))
    return fallback(
      'optional input (no session producer — supply from working context if available)',
      'optional',
    );
  if (inherited)
    return fallback(
      'ambient session context (inherited contract; no session producer found)',
      'inherited-ambient',
    );
  return {
    text: `UNRESOLVED — no workflow variable, prior step output, or step-binding supplies '${input.id}'`,
    kind: 'unresolved',
    unresolved: true,
  };
}

/** An output with the name a step binding remaps it to, if it does. */
function landed(o: TechniqueIo, remaps: Record<string, string> | undefined): Annotated {
  const dest = remaps?.[o.id];
  return dest === undefined
    ? o
    : { ...o, destination: `lands as session variable '${dest}' (step-binding remap)` };
}

/**
 * The step-bound delivery object of `c` at `step`, and a warning per UNRESOLVED own input.
 * Without a place (the step is not in the workflow) it is the plain technique.
 */
export function decoratedTechnique(
  c: ComposedTechnique,
  step: Step,
  at: StepPlace | undefined,
): { object: Record<string, unknown>; warnings: string[] } {
  // Named as the step binds it (the `<activity>::` shorthand stays implicit).
  const named = { ...c, resolvedId: techniqueRef(step) ?? c.resolvedId };
  if (at === undefined) return { object: techniqueObject(named), warnings: [] };
  const binding =
    step.kind === 'technique' && typeof step.technique !== 'string' ? step.technique : undefined;
  const warnings: string[] = [];
  const annotate = (i: TechniqueIo, inherited: boolean): Annotated => {
    const s = inputSource(i, at, binding?.inputs?.[i.id], inherited);
    if (inherited) return NOTEWORTHY.has(s.kind) ? { ...i, source: s.text } : i;
    if (s.unresolved)
      warnings.push(
        `Input '${i.id}' of technique '${c.resolvedId}' is UNRESOLVED at step '${step.id}': no workflow variable, prior step output, or step-binding supplies it.`,
      );
    return { ...i, source: s.text };
  };
  const land = (o: TechniqueIo) => landed(o, binding?.outputs);
  const decorated: ComposedTechnique = {
    ...named,
    technique: {
      ...c.technique,
      ...(c.technique.inputs ? { inputs: c.technique.inputs.map((i) => annotate(i, false)) } : {}),
      ...(c.technique.outputs ? { outputs: c.technique.outputs.map(land) } : {}),
    },
    inheritedInputs: c.inheritedInputs.map((i) => annotate(i, true)),
    inheritedOutputs: c.inheritedOutputs.map(land),
  };
  const object = techniqueObject(decorated, {
    provenanceNote: PROVENANCE_NOTE,
    inheritedNote: INHERITED_NOTE,
  });
  return { object, warnings };
}

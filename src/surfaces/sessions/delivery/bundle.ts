/**
 * Technique bundles (spec session-profile §1.12, "Bundle rendering"): the orchestrator bundle of
 * `get_workflow` and the worker bundle of `get_activity`, built from the workflow's technique
 * lists plus the built-in core refs, as `{techniques, rules, unresolved}`. A ref may select one
 * rule (`tech::rule`) or every `prefix-*` rule (`tech::prefix`) of a technique.
 */
import {
  type ComposedTechnique,
  INHERITED_SCOPE_NOTE,
  resolveTechnique,
} from '../definition/techniques.js';

export const ORCHESTRATOR_CORE = [
  'workflow-engine::dispatch-activity',
  'workflow-engine::evaluate-transition',
  'workflow-engine::commit-and-persist',
  'workflow-engine::handle-sub-workflow',
  'workflow-engine::compose-prompt',
  'workflow-engine::present-checkpoint-to-user',
  'workflow-engine::respond-checkpoint',
  'workflow-engine::sync-progress-status',
  'version-control::commit-submodule',
  'version-control::commit-regular-files',
  'harness-compat::spawn-agent',
  'harness-compat::continue-agent',
  'harness-compat::resolve-harness-operation',
  'harness-compat::claude-code',
  'harness-compat::cursor',
  'harness-compat::cline',
  'harness-compat::generic',
  'agent-conduct::orchestrator',
  'agent-conduct::checkpoint-discipline',
  'agent-conduct::operational-discipline',
];

export const WORKER_CORE = [
  'workflow-engine::activity-worker',
  'workflow-engine::yield-checkpoint',
  'workflow-engine::resume-from-checkpoint',
  'workflow-engine::finalize-activity',
  'agent-conduct::checkpoint-discipline',
  'agent-conduct::operational-discipline',
  'agent-conduct::file-sensitivity',
  'agent-conduct::code-commentary',
];

export interface Bundle {
  techniques: Record<string, Record<string, unknown>>;
  rules: [string, string][];
  unresolved: string[];
}

/** The bundle body of a technique (no id, version or rules: rules go to the rules list). */
export function bundleEntry(c: ComposedTechnique): Record<string, unknown> {
  const t = c.technique;
  const out: Record<string, unknown> = { capability: t.capability };
  if (t.inputs?.length) out['inputs'] = t.inputs;
  if (c.inheritedInputs.length)
    out['inherited_inputs'] = { note: INHERITED_SCOPE_NOTE, items: c.inheritedInputs };
  if (t.protocol?.length) out['protocol'] = t.protocol;
  if (t.outputs?.length) out['outputs'] = t.outputs;
  if (c.inheritedOutputs.length) {
    out['inherited_outputs'] = { note: INHERITED_SCOPE_NOTE, items: c.inheritedOutputs };
  }
  return out;
}

/**
 * Builds the bundle of `refs` (deduplicated, in order) executed from workflow `current`: each
 * technique composed with its own workflow's contract; the rules selected by name first, then
 * those of every technique touched (its own, then its contracts'), then the executing
 * workflow's root contract, each once.
 */
export function buildBundle(root: string, current: string, refs: readonly string[]): Bundle {
  const bundle: Bundle = { techniques: {}, rules: [], unresolved: [] };
  // Rules selected by name come first; rules of the techniques touched follow.
  const selected: [string, string][] = [];
  const touched: [string, string][] = [];
  const addRules = (rules: Readonly<Record<string, string>> | undefined) => {
    for (const [k, v] of Object.entries(rules ?? {})) touched.push([k, v]);
  };
  for (const ref of [...new Set(refs)]) {
    // A bare ref found in another workflow (meta's, by fallback) is shown with the executing
    // workflow's contract, as the public server composes it; its rules stay those of its own.
    const whole = resolveTechnique(root, ref, current, undefined, 'own');
    if (whole !== undefined) {
      const shown = ref.includes('::') ? whole : resolveTechnique(root, ref, current);
      bundle.techniques[ref] = bundleEntry(shown ?? whole);
      addRules(ownRules(whole));
      addRules(whole.ancestorRules);
      continue;
    }
    const cut = ref.lastIndexOf('::');
    const owner =
      cut === -1 ? undefined : resolveTechnique(root, ref.slice(0, cut), current, undefined, 'own');
    const name = ref.slice(cut + 2);
    const rules = owner?.technique.rules ?? {};
    const picked =
      name in rules ? [name] : Object.keys(rules).filter((k) => k.startsWith(`${name}-`));
    if (owner === undefined || picked.length === 0) {
      bundle.unresolved.push(ref);
      continue;
    }
    for (const k of picked) selected.push([k, rules[k] as string]);
    // The selection touched its technique: the rest of its rules come along.
    addRules(rules);
  }
  addRules(resolveTechnique(root, 'TECHNIQUE', current)?.technique.rules);
  // A rule selected by name is not repeated; the same rule reached twice is listed once; rules
  // of different techniques may share a name and are all kept.
  const chosen = new Set(selected.map(([k]) => k));
  const seen = new Set<string>();
  for (const [k, v] of [...selected, ...touched]) {
    const key = JSON.stringify([k, v]);
    if (seen.has(key) || (chosen.has(k) && !selected.some(([n, t]) => n === k && t === v)))
      continue;
    seen.add(key);
    bundle.rules.push([k, v]);
  }
  return bundle;
}

/** The rules a technique declares itself (its composed rules less its contracts'). */
function ownRules(c: ComposedTechnique): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.technique.rules ?? {})) {
    if (c.ancestorRules[k] !== v) out[k] = v;
  }
  return out;
}

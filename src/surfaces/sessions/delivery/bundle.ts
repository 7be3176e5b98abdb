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
  // After the commit techniques, where the public server lists it (its rules follow theirs).
  'version-control::commit-submodule',
  'version-control::commit-regular-files',
  'workflow-engine::sync-progress-status',
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

/** The source of a workflow's root contract (a group index sits one folder deeper). */
const ROOT_CONTRACT = /^[^/]+\/techniques\/TECHNIQUE\.md$/;

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
 * those of every technique file touched (a whole or nested technique, the group index a nested
 * one sits in, a technique one rule was selected from by name), in the order first touched, and last the
 * executing workflow's root contract. A file touched twice lists its rules once; rules of
 * different files are all kept, even where name and text coincide (two harness files may say
 * the same thing), and a rule selected by name is not repeated from its own file.
 */
export function buildBundle(root: string, current: string, refs: readonly string[]): Bundle {
  const bundle: Bundle = { techniques: {}, rules: [], unresolved: [] };
  const selected: { source: string; name: string; text: string }[] = [];
  // Insertion order is first-touch order, as the public server's map of touched files keeps it.
  const touched = new Map<string, Readonly<Record<string, string>>>();
  const touch = (source: string, rules: Readonly<Record<string, string>>) => {
    if (!touched.has(source)) touched.set(source, rules);
  };
  for (const ref of [...new Set(refs)]) {
    // A bare ref found in another workflow (meta's, by fallback) is shown with the executing
    // workflow's contract, as the public server composes it; its rules stay those of its own.
    const whole = resolveTechnique(root, ref, current, undefined, 'own');
    if (whole !== undefined) {
      const shown = ref.includes('::') ? whole : resolveTechnique(root, ref, current);
      bundle.techniques[ref] = bundleEntry(shown ?? whole);
      touch(whole.source, ownRules(whole));
      // A nested technique also touches the index of the outermost group it is named through.
      const group = ref.includes('::')
        ? whole.ancestorRuleSets.find((a) => !ROOT_CONTRACT.test(a.source))
        : undefined;
      if (group !== undefined) touch(group.source, group.rules);
      continue;
    }
    const cut = ref.lastIndexOf('::');
    const owner =
      cut === -1 ? undefined : resolveTechnique(root, ref.slice(0, cut), current, undefined, 'own');
    const name = ref.slice(cut + 2);
    const rules = owner === undefined ? {} : ownRules(owner);
    const picked =
      name in rules ? [name] : Object.keys(rules).filter((k) => k.startsWith(`${name}-`));
    if (owner === undefined || picked.length === 0) {
      bundle.unresolved.push(ref);
      continue;
    }
    for (const k of picked)
      selected.push({ source: owner.source, name: k, text: rules[k] as string });
    // A rule selected by its own name touches its technique (the rest of its rules come along);
    // a `prefix` selection takes only its group, as the public server's does.
    if (name in rules) touch(owner.source, rules);
  }
  const contract = resolveTechnique(root, 'TECHNIQUE', current, undefined, 'own');
  if (contract !== undefined) touch(contract.source, contract.technique.rules ?? {});
  const chosen = new Set(selected.map((r) => `${r.source}\0${r.name}`));
  for (const r of selected) bundle.rules.push([r.name, r.text]);
  for (const [source, rules] of touched)
    for (const [k, v] of Object.entries(rules))
      if (!chosen.has(`${source}\0${k}`)) bundle.rules.push([k, v]);
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

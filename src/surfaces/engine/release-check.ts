/**
 * Authoring validation of a release's workflows beyond their shapes: `setup-workspace` first,
 * unique step, output and validator ids, transition targets that exist, step inputs produced by
 * earlier steps, project-relative output paths, every referenced asset present, a question for
 * every predicate field, branches proven exclusive where they can be (literal `equals`/`in` on
 * one field), and no alias that names two workflows across the catalogue. Each problem names
 * the file, the line and column of the field (when the caller can locate it) and the field.
 */
import { literalValues, predicateFields } from './predicates.js';
import type { ReleaseFile } from './release.js';
import {
  type AdapterDef,
  hostAssetPath,
  type StepDef,
  type WorkflowDef,
} from './release-schema.js';

/** The first step every workflow starts at. */
export const SETUP_STEP = 'setup-workspace';
/** The setup step's output: what the host installed where, read back to prove it. */
export const WORKSPACE_MANIFEST = 'workspace-manifest';

/** True for a project-relative path with no `..`, no absolute start and no backslash. */
export function isProjectPath(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.includes('\\') || path.includes('\0')) {
    return false;
  }
  if (/^[A-Za-z]:/.test(path)) return false;
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/**
 * Problems of one workflow definition; each line names `file`, the position `locate` gives
 * for the field (`line:col:`, or nothing) and the field.
 */
export function checkWorkflow(
  file: string,
  wf: WorkflowDef,
  files: ReadonlyMap<string, ReleaseFile>,
  locate: (field: string) => string = () => '',
): string[] {
  const problems: string[] = [];
  const at = (field: string, message: string) =>
    problems.push(`${file}:${locate(field)} ${field}: ${message}`);
  const asset = (field: string, path: string) => {
    if (!files.has(path)) at(field, `asset ${path} is not in the release`);
  };
  if (file !== `workflows/${wf.id}/${wf.version}.yaml`) {
    at('id', `a workflow ${wf.id}@${wf.version} lives at workflows/${wf.id}/${wf.version}.yaml`);
  }
  asset('confirmed_state_schema', wf.confirmed_state_schema);
  const setup = wf.steps[0];
  if (setup?.id !== SETUP_STEP) at('steps[0].id', `the first step must be ${SETUP_STEP}`);
  else if (
    !setup.outputs.some((o) => o.id === WORKSPACE_MANIFEST && o.media_type === 'application/json')
  ) {
    at('steps[0].outputs', `${SETUP_STEP} must declare the JSON output ${WORKSPACE_MANIFEST}`);
  }
  const ids = new Set<string>();
  const produced = new Set<string>();
  wf.steps.forEach((step, i) => {
    const where = `steps[${i}]`;
    if (ids.has(step.id)) at(`${where}.id`, `step ${step.id} is declared twice`);
    ids.add(step.id);
    if (i > 0 && step.id === SETUP_STEP) at(`${where}.id`, `${SETUP_STEP} must be first only`);
    asset(`${where}.instruction`, step.instruction);
    for (const kind of ['prompts', 'skills', 'subagents'] as const) {
      for (const name of step.host_assets[kind]) {
        asset(`${where}.host_assets.${kind}`, hostAssetPath(kind, name));
      }
    }
    for (const input of step.inputs) {
      if (!produced.has(input)) at(`${where}.inputs`, `${input} is no earlier step's output`);
    }
    checkOutputs(step, where, produced, at, asset);
    checkValidators(step, where, at, asset);
    checkTransition(step, where, at);
  });
  wf.steps.forEach((step, i) => {
    for (const target of [step.next, ...(step.branches ?? []).map((b) => b.to)]) {
      if (target !== undefined && !ids.has(target)) {
        at(`steps[${i}]`, `transition target ${target} is not a step`);
      }
      if (target === SETUP_STEP) at(`steps[${i}]`, `no step may go back to ${SETUP_STEP}`);
    }
  });
  return problems;
}

type At = (field: string, message: string) => void;

function checkOutputs(
  step: StepDef,
  where: string,
  produced: Set<string>,
  at: At,
  asset: (field: string, path: string) => void,
): void {
  step.outputs.forEach((out, j) => {
    const field = `${where}.outputs[${j}]`;
    if (produced.has(out.id)) at(`${field}.id`, `artifact ${out.id} is produced twice`);
    produced.add(out.id);
    if (!isProjectPath(out.path)) at(`${field}.path`, 'must be project-relative without ..');
    if (out.schema !== undefined) {
      if (out.media_type !== 'application/json') at(`${field}.schema`, 'only JSON has a schema');
      asset(`${field}.schema`, out.schema);
    }
  });
  if (step.max_artifacts !== undefined && step.max_artifacts < step.outputs.length) {
    at(`${where}.max_artifacts`, 'is below the number of declared outputs');
  }
}

function checkValidators(
  step: StepDef,
  where: string,
  at: At,
  asset: (field: string, path: string) => void,
): void {
  const keys = new Set<string>();
  const available = new Set([...step.inputs, ...step.outputs.map((o) => o.id)]);
  step.validators.forEach((v, j) => {
    const field = `${where}.validators[${j}]`;
    const key = `${v.id}@${v.version}`;
    if (keys.has(key)) at(field, `validator ${key} is declared twice`);
    keys.add(key);
    asset(`${field}.instruction`, v.instruction);
    for (const input of v.inputs) {
      if (!available.has(input)) at(`${field}.inputs`, `${input} is not an artifact of this step`);
    }
  });
}

function checkTransition(step: StepDef, where: string, at: At): void {
  if (step.next !== undefined && step.branches !== undefined) {
    at(where, 'a step has next or branches, not both');
  }
  const branches = step.branches ?? [];
  const fields = branches.flatMap((b) => predicateFields(b.when));
  for (const field of new Set(fields)) {
    if (!step.questions.some((q) => q.field === field)) {
      at(`${where}.questions`, `predicate field ${field} has no question`);
    }
  }
  // Exclusivity, where provable: two literal predicates over one field sharing a value.
  branches.forEach((first, a) => {
    branches.slice(a + 1).forEach((second, i) => {
      const b = a + 1 + i;
      const x = literalValues(first.when);
      const y = literalValues(second.when);
      if (x && y && x.field === y.field && x.values.some((v) => y.values.includes(v))) {
        at(`${where}.branches`, `branches ${a} and ${b} both match a value of ${x.field}`);
      }
    });
  });
}

/** Alias collisions: a name (id or alias) selecting two different workflow ids. */
export function checkCatalogue(workflows: readonly { file: string; def: WorkflowDef }[]): string[] {
  const owners = new Map<string, string>();
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { file, def } of workflows) {
    const key = `${def.id}@${def.version}`;
    if (seen.has(key)) problems.push(`${file}: workflow ${key} is released twice`);
    seen.add(key);
    for (const name of [def.id, ...def.entry_aliases]) {
      const owner = owners.get(name);
      if (owner !== undefined && owner !== def.id) {
        problems.push(`${file}: entry_aliases: ${name} already selects workflow ${owner}`);
      } else owners.set(name, def.id);
    }
  }
  return problems;
}

/** Problems of the adapters: unique ids, project-relative delivery paths. */
export function checkAdapters(adapters: readonly { file: string; def: AdapterDef }[]): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const { file, def } of adapters) {
    if (ids.has(def.id)) problems.push(`${file}: id: adapter ${def.id} is declared twice`);
    ids.add(def.id);
    for (const [kind, template] of Object.entries(def.delivery)) {
      if (!isProjectPath(template.replaceAll('{name}', 'x'))) {
        problems.push(`${file}: delivery.${kind}: must be project-relative without ..`);
      }
    }
  }
  return problems;
}

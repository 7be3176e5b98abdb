/**
 * Loads one workflow of a workflows root (spec session-profile §1.1–§1.11): the manifest, its
 * `activities/NN-*.yaml` files and borrowed activity refs, with rule and checkpoint fragments
 * spliced in and step ids filled in. Called on every session-bound call: the definition on disk
 * is the one in force (files are re-parsed only when they change, `yaml-files.ts`). A bad
 * activity is excluded and reported; a bad manifest fails the whole workflow.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import {
  type Activity,
  definitionSchemas,
  type Manifest,
  type Step,
  type Variable,
} from './definition.schema.js';
import { type ActivityLoadError, DEFINITION_CODES, WorkflowError } from './errors.js';
import { type Fragments, spliceCheckpoint, spliceRules } from './fragments.js';
import { isFile, listDir, readYaml, trackReads, unchanged } from './yaml-files.js';

/** The activity id every terminal transition may name without declaring it. */
export const TERMINAL = '__terminal__';

const ACTIVITY_FILE = /^(\d+)-(.+)\.ya?ml$/;

/** A loaded, validated workflow. Plain data; never mutated after loading. */
export interface Workflow {
  readonly id: string;
  readonly version: string;
  readonly title: string;
  readonly description: string | undefined;
  readonly tags: readonly string[] | undefined;
  readonly rules: { workflow: string[]; activity: string[]; universal: string[] };
  readonly variables: readonly Variable[];
  readonly techniques: { workflow: string[]; activity: string[] };
  readonly initialActivity: string | undefined;
  readonly activities: readonly Activity[];
  readonly activityLoadErrors: readonly ActivityLoadError[];
}

/** Where the manifest of `id` is, relative to the root; undefined when there is none. */
export function manifestPath(root: string, id: string): string | undefined {
  for (const rel of [`${id}/workflow.yaml`, `${id}/workflow.yml`, `${id}.yaml`, `${id}.yml`]) {
    if (isFile(join(root, rel))) return rel;
  }
  return undefined;
}

/** The validated manifest of `id`. @throws WorkflowError */
export function readManifest(
  root: string,
  id: string,
): { manifest: Manifest; raw: Record<string, unknown>; file: string } {
  if (!/^[A-Za-z0-9._-]+$/.test(id) || id.startsWith('.')) {
    throw new WorkflowError(DEFINITION_CODES.WORKFLOW_NOT_FOUND, `Workflow not found: ${id}`);
  }
  const file = manifestPath(root, id);
  if (file === undefined) {
    throw new WorkflowError(DEFINITION_CODES.WORKFLOW_NOT_FOUND, `Workflow not found: ${id}`);
  }
  const read = readYaml(join(root, file));
  if (read === undefined || !('value' in read)) {
    const why = read !== undefined && 'error' in read ? read.error : 'unreadable';
    throw new WorkflowError(DEFINITION_CODES.WORKFLOW_INVALID, `${file}: ${why}`);
  }
  const raw = (read.value ?? {}) as Record<string, unknown>;
  const { activitiesDir: _dir, ...rest } = raw;
  const parsed = definitionSchemas().manifest.safeParse(rest);
  if (!parsed.success) {
    throw new WorkflowError(
      DEFINITION_CODES.WORKFLOW_INVALID,
      `${file}: ${issueText(parsed.error)}`,
    );
  }
  return { manifest: parsed.data, raw, file };
}

const loaded = new Map<string, { workflow: Workflow; reads: ReadonlyMap<string, string> }>();

/**
 * Loads workflow `id` from `root` as it is on disk now: a load is reused only while none of the
 * files and folders it read has changed. @throws WorkflowError
 */
export function loadWorkflow(root: string, id: string): Workflow {
  const key = `${root}\0${id}`;
  const hit = loaded.get(key);
  if (hit !== undefined && unchanged(hit.reads)) return hit.workflow;
  const { value, reads } = trackReads(() => {
    try {
      return { workflow: loadFresh(root, id) };
    } catch (error) {
      return { error };
    }
  });
  if ('error' in value) {
    loaded.delete(key);
    throw value.error;
  }
  if (loaded.size > 256) loaded.clear();
  loaded.set(key, { workflow: value.workflow, reads });
  return value.workflow;
}

function loadFresh(root: string, id: string): Workflow {
  const { manifest, raw, file } = readManifest(root, id);
  const own: Fragments = {
    rules: manifest.fragments?.rules ?? {},
    checkpoints: manifest.fragments?.checkpoints ?? {},
  };
  const splice = (entries: Parameters<typeof spliceRules>[3]) => {
    try {
      return spliceRules(root, id, own, entries);
    } catch (e) {
      throw new WorkflowError(
        DEFINITION_CODES.WORKFLOW_INVALID,
        `${file}: ${(e as Error).message}`,
      );
    }
  };
  const rules = {
    workflow: splice(manifest.rules?.workflow),
    activity: splice(manifest.rules?.activity),
    universal: splice(manifest.rules?.universal),
  };
  const dir = typeof raw['activitiesDir'] === 'string' ? raw['activitiesDir'] : 'activities';
  const errors: ActivityLoadError[] = [];
  const activities = new Map<string, Activity>();
  for (const name of listActivityFiles(join(root, id, dir))) {
    const loaded = loadActivityFile(root, id, `${id}/${dir}/${name}`, own);
    if ('error' in loaded) errors.push(loaded.error);
    else if (!activities.has(loaded.activity.id))
      activities.set(loaded.activity.id, loaded.activity);
  }
  for (const entry of manifest.activities ?? []) {
    if (typeof entry !== 'string') continue;
    const rel = borrowedPath(id, entry);
    const source = rel.split('/')[0] as string;
    const sourceOwn = source === id ? own : undefined;
    const loaded = loadActivityFile(root, source, rel, sourceOwn);
    if ('error' in loaded) {
      throw new WorkflowError(
        DEFINITION_CODES.WORKFLOW_INVALID,
        `${file}: activity ref '${entry}': ${loaded.error.error}`,
      );
    }
    if (!activities.has(loaded.activity.id)) activities.set(loaded.activity.id, loaded.activity);
  }
  return {
    id,
    version: manifest.version,
    title: manifest.title,
    description: manifest.description,
    tags: manifest.tags,
    rules,
    variables: manifest.variables ?? [],
    techniques: {
      workflow: manifest.techniques?.workflow ?? [],
      activity: manifest.techniques?.activity ?? [],
    },
    initialActivity: manifest.initialActivity,
    activities: [...activities.values()].sort((a, b) =>
      (a.artifactPrefix ?? '').localeCompare(b.artifactPrefix ?? ''),
    ),
    activityLoadErrors: errors,
  };
}

/** `NN-x.yaml`, `wf/NN-x.yaml` or `wf/activities/path.yaml` as a root-relative path. */
function borrowedPath(self: string, entry: string): string {
  const parts = entry.split('/');
  if (parts.length === 1) return `${self}/activities/${entry}`;
  if (parts.length === 2) return `${parts[0]}/activities/${parts[1]}`;
  return entry;
}

/** Activity files of a folder (none when it is missing: a workflow may borrow them all). */
function listActivityFiles(dir: string): string[] {
  return listDir(dir).filter((n) => ACTIVITY_FILE.test(n));
}

type Loaded = { activity: Activity } | { error: ActivityLoadError };

/** One activity file, validated, fragments spliced, step ids filled in. */
function loadActivityFile(
  root: string,
  source: string,
  rel: string,
  own: Fragments | undefined,
): Loaded {
  const base = rel.split('/').pop() as string;
  const match = ACTIVITY_FILE.exec(base);
  const stem = match?.[2] ?? base;
  const fail = (error: string): Loaded => ({ error: { file: rel, activity_id: stem, error } });
  if (match === null || rel.includes('..')) return fail('not an activity file name (NN-id.yaml)');
  const read = readYaml(join(root, rel));
  if (read === undefined) return fail('file not found');
  if (!('value' in read)) return fail(read.error);
  const fragments = own ?? sourceFragments(root, source);
  let value: Record<string, unknown>;
  try {
    value = structuredClone((read.value ?? {}) as Record<string, unknown>);
    if (Array.isArray(value['steps']))
      value['steps'] = spliceSteps(root, source, fragments, value['steps']);
  } catch (e) {
    return fail((e as Error).message);
  }
  const parsed = definitionSchemas().activity.safeParse(value);
  if (!parsed.success) return fail(issueText(parsed.error));
  const steps = parsed.data.steps ?? [];
  const duplicate = duplicateId(steps);
  if (duplicate !== undefined) return fail(`duplicate step id '${duplicate}'`);
  return {
    activity: {
      ...parsed.data,
      artifactPrefix: match[1] as string,
      sourceWorkflow: source,
      file: rel,
    },
  };
}

function sourceFragments(root: string, source: string): Fragments {
  try {
    const { manifest } = readManifest(root, source);
    return {
      rules: manifest.fragments?.rules ?? {},
      checkpoints: manifest.fragments?.checkpoints ?? {},
    };
  } catch {
    // The source workflow's manifest is broken: its refs are unresolved (reported per step).
    return { rules: {}, checkpoints: {} };
  }
}

/** Splices checkpoint refs and fills technique step ids, recursively through loop bodies. */
function spliceSteps(root: string, source: string, own: Fragments, steps: unknown[]): unknown[] {
  return steps.map((raw) => {
    if (raw === null || typeof raw !== 'object') return raw;
    let step = raw as Record<string, unknown>;
    if (step['kind'] === 'checkpoint') step = spliceCheckpoint(root, source, own, step);
    if (step['kind'] === 'technique' && step['id'] === undefined) {
      const t = step['technique'];
      const name = typeof t === 'string' ? t : (t as { name?: unknown } | null)?.name;
      if (typeof name === 'string') step = { ...step, id: name.split('::').pop() };
    }
    if (step['kind'] === 'loop' && Array.isArray(step['steps'])) {
      step = { ...step, steps: spliceSteps(root, source, own, step['steps']) };
    }
    return step;
  });
}

/** The first id that repeats within one scope (top level, or one loop body). */
function duplicateId(steps: readonly Step[]): string | undefined {
  const seen = new Set<string>();
  for (const step of steps) {
    const id = step.id;
    if (id !== undefined) {
      if (seen.has(id)) return id;
      seen.add(id);
    }
    if (step.kind === 'loop') {
      const inner = duplicateId(step.steps);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/** Every step, loop bodies flattened after their loop step, in document order. */
export function flattenSteps(steps: readonly Step[] | undefined): Step[] {
  const out: Step[] = [];
  for (const step of steps ?? []) {
    out.push(step);
    if (step.kind === 'loop') out.push(...flattenSteps(step.steps));
  }
  return out;
}

/** The activity with that id, or undefined. */
export function findActivity(workflow: Workflow, id: string): Activity | undefined {
  return workflow.activities.find((a) => a.id === id);
}

/** The name of a technique binding. */
export function techniqueRef(step: Step): string | undefined {
  if (step.kind !== 'technique') return undefined;
  return typeof step.technique === 'string' ? step.technique : step.technique.name;
}

/** The checkpoint steps of an activity, loop bodies included. */
export function checkpointSteps(activity: Activity) {
  return flattenSteps(activity.steps).filter(
    (s): s is Extract<Step, { kind: 'checkpoint' }> => s.kind === 'checkpoint',
  );
}

/** Zod issues as one line: `path: message; …`. */
export function issueText(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
}

/**
 * Technique lookup and composition (spec session-profile §1.12): resolving a ref (`wf/tech`,
 * `wf::group::op`, `group::op`, bare names, the step-bound `<activity>::<ref>` shorthand) in the
 * executing workflow then `meta`, and composing the inherited contract (the workflow-root and
 * group `TECHNIQUE.md` files: inputs, outputs and rules merged by id, `Initial`/`Final`
 * protocol blocks wrapped around the technique's own). Reads files through `yaml-files.ts`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  type ProtocolBlock,
  parseTechnique,
  type Technique,
  type TechniqueIo,
} from './technique-parse.js';
import { readDerived, readText } from './yaml-files.js';

/** A technique file found for a ref: where it is, and its path of groups. */
interface Located {
  readonly workflow: string;
  /** Groups from the techniques folder down, excluding the file itself. */
  readonly groups: readonly string[];
  /** The file name inside the last group (`TECHNIQUE.md` for a group index). */
  readonly file: string;
}

/** A resolved, composed technique as delivered. */
export interface ComposedTechnique {
  readonly resolvedId: string;
  readonly workflow: string;
  readonly technique: Technique;
  readonly inheritedInputs: TechniqueIo[];
  readonly inheritedOutputs: TechniqueIo[];
  /** Rules of the ancestors (root first), for bundles. */
  readonly ancestorRules: Record<string, string>;
  /** Each ancestor's own rules with the file they come from (`wf/techniques/…`), root first. */
  readonly ancestorRuleSets: readonly { source: string; rules: Readonly<Record<string, string>> }[];
  /** The file the technique itself comes from (`wf/techniques/…`). */
  readonly source: string;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;

function locate(root: string, wf: string, path: readonly string[]): Located | undefined {
  if (path.length === 0 || !path.every((p) => SEGMENT.test(p) && !p.startsWith('.')))
    return undefined;
  const base = join(root, wf, 'techniques', ...path.slice(0, -1));
  const last = path[path.length - 1] as string;
  if (readText(join(base, `${last}.md`)) !== undefined) {
    return { workflow: wf, groups: path.slice(0, -1), file: `${last}.md` };
  }
  if (readText(join(base, last, 'TECHNIQUE.md')) !== undefined) {
    return { workflow: wf, groups: path, file: 'TECHNIQUE.md' };
  }
  return undefined;
}

function hasTechniques(root: string, wf: string): boolean {
  return SEGMENT.test(wf) && existsSync(join(root, wf, 'techniques'));
}

/** Finds the file of `ref` as executed from `current`. */
function find(root: string, ref: string, current: string): Located | undefined {
  if (ref.includes('/')) {
    const [wf, ...rest] = ref.split('/');
    return rest.length === 1 ? locate(root, wf as string, rest[0]?.split('::') ?? []) : undefined;
  }
  const parts = ref.split('::');
  if (parts.length > 1 && parts[0] !== current && hasTechniques(root, parts[0] as string)) {
    const inOther = locate(root, parts[0] as string, parts.slice(1));
    if (inOther !== undefined) return inOther;
  }
  const scopes = current === 'meta' ? ['meta'] : [current, 'meta'];
  for (const wf of scopes) {
    const found = locate(root, wf, parts);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A technique file parsed under identity `id`, once per version of the file. */
function parsedAt(path: string, id: string): Technique | undefined {
  return readDerived(path, `technique:${id}`, (text) => parseTechnique(id, text));
}

function load(root: string, at: Located, id: string): Technique | undefined {
  return parsedAt(join(root, at.workflow, 'techniques', ...at.groups, at.file), id);
}

/** Ancestors (outermost first): the executing workflow's root contract, then each group index. */
function ancestors(
  root: string,
  at: Located,
  executing: string,
): { technique: Technique; source: string }[] {
  const out: { technique: Technique; source: string }[] = [];
  const rootContract = readText(join(root, executing, 'techniques', 'TECHNIQUE.md'));
  const isRootItself =
    at.workflow === executing && at.groups.length === 0 && at.file === 'TECHNIQUE.md';
  if (rootContract !== undefined && !isRootItself) {
    const t = parseTechnique(`${executing}::TECHNIQUE`, rootContract);
    if (t) out.push({ technique: t, source: `${executing}/techniques/TECHNIQUE.md` });
  }
  const depth = at.file === 'TECHNIQUE.md' ? at.groups.length - 1 : at.groups.length;
  for (let i = 1; i <= depth; i++) {
    const groups = at.groups.slice(0, i);
    const path = join(root, at.workflow, 'techniques', ...groups, 'TECHNIQUE.md');
    const t = parsedAt(path, groups.join('::'));
    if (t)
      out.push({
        technique: t,
        source: `${at.workflow}/techniques/${groups.join('/')}/TECHNIQUE.md`,
      });
  }
  return out;
}

function mergeIo(
  own: TechniqueIo[] | undefined,
  layers: (TechniqueIo[] | undefined)[],
): TechniqueIo[] {
  const mine = new Set((own ?? []).map((i) => i.id));
  const merged = new Map<string, TechniqueIo>();
  for (const layer of layers)
    for (const io of layer ?? []) if (!mine.has(io.id)) merged.set(io.id, io);
  return [...merged.values()];
}

/**
 * The technique's own entries in merged order: one that overrides a contract entry takes that
 * entry's place (ahead of entries only the technique declares), as the public server merges.
 */
function ownInMergedOrder(
  own: TechniqueIo[] | undefined,
  layers: (TechniqueIo[] | undefined)[],
): TechniqueIo[] | undefined {
  if (own === undefined) return undefined;
  const order = new Map<string, number>();
  for (const layer of layers)
    for (const io of layer ?? []) if (!order.has(io.id)) order.set(io.id, order.size);
  const rank = (io: TechniqueIo) => order.get(io.id) ?? Number.POSITIVE_INFINITY;
  // Array sort is stable, so entries only the technique declares keep their own order.
  return [...own].sort((a, b) => rank(a) - rank(b));
}

function wrapProtocol(
  own: ProtocolBlock[] | undefined,
  outer: Technique[],
): ProtocolBlock[] | undefined {
  // A wrapper block's title is matched as the public server matches it: trimmed, any case.
  const titled = (t: Technique, name: string) =>
    (t.protocol ?? []).filter((b) => (b.title ?? '').trim().toLowerCase() === name);
  const initial = outer.flatMap((t) => titled(t, 'initial'));
  const final = [...outer].reverse().flatMap((t) => titled(t, 'final'));
  const blocks = [...initial, ...(own ?? []), ...final];
  return blocks.length > 0 ? blocks : undefined;
}

/** The ids to try for `ref`: the step-bound `<activity>::<ref>` shorthand first, then as written. */
function candidates(ref: string, activityId: string | undefined): string[] {
  return activityId !== undefined && !ref.includes('::') && !ref.includes('/')
    ? [`${activityId}::${ref}`, ref]
    : [ref];
}

/**
 * Resolves and composes `ref` for a call executing in workflow `current` (a borrowed activity's
 * source workflow), trying `<activityId>::<ref>` first when `activityId` is given and the ref
 * has no `::`. The inherited contract is the executing workflow's, or with `contract: 'own'`
 * (bundled techniques) the one of the workflow the file lives in. Undefined when nothing
 * resolves or the file breaks the format.
 */
export function resolveTechnique(
  root: string,
  ref: string,
  current: string,
  activityId?: string,
  contract: 'executing' | 'own' = 'executing',
): ComposedTechnique | undefined {
  for (const id of candidates(ref, activityId)) {
    const at = find(root, id, current);
    if (at === undefined) continue;
    const technique = load(root, at, id);
    if (technique === undefined) return undefined;
    return compose(root, at, id, technique, contract === 'own' ? at.workflow : current);
  }
  return undefined;
}

/**
 * The output ids `ref` declares in its own file, uncomposed (a contract's outputs are not the
 * technique's to produce), resolved as `resolveTechnique` resolves it; empty when nothing
 * resolves or the file breaks the format.
 */
export function ownOutputIds(
  root: string,
  ref: string,
  current: string,
  activityId?: string,
): string[] {
  for (const id of candidates(ref, activityId)) {
    const at = find(root, id, current);
    if (at === undefined) continue;
    return (load(root, at, id)?.outputs ?? []).map((o) => o.id);
  }
  return [];
}

function compose(
  root: string,
  at: Located,
  id: string,
  own: Technique,
  executing: string,
): ComposedTechnique {
  const found = ancestors(root, at, executing);
  const outer = found.map((a) => a.technique);
  const nearestFirst = [...outer].reverse();
  const ancestorRules: Record<string, string> = {};
  for (const t of outer) Object.assign(ancestorRules, t.rules ?? {});
  const rules = { ...ancestorRules, ...(own.rules ?? {}) };
  const protocol = wrapProtocol(own.protocol, outer);
  const technique: Technique = { ...own };
  // The layers in the order the inherited entries are merged in (farthest contract first).
  const layers = [...nearestFirst].reverse();
  const inputs = ownInMergedOrder(
    own.inputs,
    layers.map((t) => t.inputs),
  );
  const outputs = ownInMergedOrder(
    own.outputs,
    layers.map((t) => t.outputs),
  );
  if (inputs !== undefined) technique.inputs = inputs;
  if (outputs !== undefined) technique.outputs = outputs;
  if (protocol !== undefined) technique.protocol = protocol;
  if (Object.keys(rules).length > 0) technique.rules = rules;
  return {
    resolvedId: id,
    workflow: at.workflow,
    technique,
    inheritedInputs: mergeIo(own.inputs, nearestFirst.map((t) => t.inputs).reverse()),
    inheritedOutputs: mergeIo(own.outputs, nearestFirst.map((t) => t.outputs).reverse()),
    ancestorRules,
    ancestorRuleSets: found.map((a) => ({ source: a.source, rules: a.technique.rules ?? {} })),
    source: `${at.workflow}/techniques/${[...at.groups, at.file].join('/')}`,
  };
}

/** The note carried with inherited inputs and outputs in bundles and plain fetches. */
export const INHERITED_SCOPE_NOTE =
  'Declared by the workflow or group contract and shared by every technique in its scope — not specific to this technique.';

/** The longer note of a step-bound fetch, whose entries may carry `source:` lines. */
export const INHERITED_NOTE =
  'Declared by the workflow or group contract and shared by every technique in its scope — not specific to this technique. A `source:` line is added to an entry only where its resolution departs from this scope — a step-binding override, or a producer positioned later in the workflow. An entry shown without one resolves from ordinary workflow context — a prior step output, a declared workflow variable, or ambient caller-supplied context — as this note describes.';

/** The wire object of a composed technique, in the order the public server uses. */
export function techniqueObject(
  c: ComposedTechnique,
  extra: { provenanceNote?: string; inheritedNote?: string } = {},
): Record<string, unknown> {
  // A step-bound fetch says how its inherited inputs' `source:` lines read; outputs carry none.
  const inputsNote = extra.inheritedNote ?? INHERITED_SCOPE_NOTE;
  const t = c.technique;
  const out: Record<string, unknown> = {
    // The technique's own id (its file's), not the qualified ref it was resolved through.
    id: c.resolvedId.split('::').at(-1),
    version: t.version,
    capability: t.capability,
  };
  if (extra.provenanceNote !== undefined) out['provenance_note'] = extra.provenanceNote;
  if (t.inputs?.length) out['inputs'] = t.inputs;
  if (c.inheritedInputs.length)
    out['inherited_inputs'] = { note: inputsNote, items: c.inheritedInputs };
  if (t.protocol?.length) out['protocol'] = t.protocol;
  if (t.outputs?.length) out['outputs'] = t.outputs;
  if (c.inheritedOutputs.length)
    out['inherited_outputs'] = { note: INHERITED_SCOPE_NOTE, items: c.inheritedOutputs };
  if (t.rules && Object.keys(t.rules).length) out['rules'] = t.rules;
  return out;
}

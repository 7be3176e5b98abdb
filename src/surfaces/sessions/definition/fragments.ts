/**
 * Fragment refs (spec session-profile §1.4): `{ref: name}` rule entries and checkpoint steps
 * with `ref`, resolved in the declaring workflow then `meta` (or only in `wf` for `wf::name`),
 * and spliced at load time. Other workflows' fragments are read from their manifest alone, so
 * resolving never loads another workflow. Pure but for reading manifests.
 */
import { join } from 'node:path';
import type { CheckpointBody } from './definition.schema.js';
import { readYaml } from './yaml-files.js';

export interface Fragments {
  readonly rules: Readonly<Record<string, string | readonly string[]>>;
  readonly checkpoints: Readonly<Record<string, CheckpointBody>>;
}

const EMPTY: Fragments = { rules: {}, checkpoints: {} };

/** The fragments a workflow's manifest declares (unvalidated beyond their shape). */
export function manifestFragments(root: string, workflowId: string): Fragments {
  for (const name of ['workflow.yaml', 'workflow.yml']) {
    const read = readYaml(join(root, workflowId, name));
    if (read === undefined) continue;
    if (!('value' in read)) return EMPTY;
    const value = read.value as { fragments?: Partial<Fragments> } | null;
    return {
      rules: value?.fragments?.rules ?? {},
      checkpoints: value?.fragments?.checkpoints ?? {},
    };
  }
  return EMPTY;
}

/**
 * Finds fragment `ref` of `kind` declared from `declaring` (whose own fragments are `own`).
 * Throws for a malformed ref (more than one `::`); undefined when unresolved.
 */
export function findFragment<K extends keyof Fragments>(
  root: string,
  declaring: string,
  own: Fragments,
  kind: K,
  ref: string,
): Fragments[K][string] | undefined {
  const parts = ref.split('::');
  if (parts.length > 2) throw new Error(`malformed fragment ref '${ref}': at most one '::'`);
  if (parts.length === 2) {
    const [wf, name] = parts as [string, string];
    const frags = wf === declaring ? own : manifestFragments(root, wf);
    return frags[kind][name] as Fragments[K][string] | undefined;
  }
  const mine = own[kind][ref];
  if (mine !== undefined || declaring === 'meta') return mine as Fragments[K][string] | undefined;
  return manifestFragments(root, 'meta')[kind][ref] as Fragments[K][string] | undefined;
}

/** Rule entries with every `{ref}` replaced by its text; throws for an unresolved ref. */
export function spliceRules(
  root: string,
  declaring: string,
  own: Fragments,
  entries: readonly (string | { ref: string })[] | undefined,
): string[] {
  const out: string[] = [];
  for (const entry of entries ?? []) {
    if (typeof entry === 'string') {
      out.push(entry);
      continue;
    }
    const found = findFragment(root, declaring, own, 'rules', entry.ref);
    if (found === undefined) throw new Error(`unresolved rule fragment ref '${entry.ref}'`);
    if (typeof found === 'string') out.push(found);
    else out.push(...found);
  }
  return out;
}

const REF_EXCLUSIVE = ['message', 'options', 'defaultOption', 'autoAdvanceMs', 'blocking'];

/**
 * A checkpoint step (raw object) with its `ref` materialised: the fragment body deep-copied in,
 * `ref` removed. Throws when the step mixes `ref` with body fields, both carry a condition, the
 * ref is unresolved, or an inline checkpoint lacks `message` or `options`.
 */
export function spliceCheckpoint(
  root: string,
  declaring: string,
  own: Fragments,
  step: Record<string, unknown>,
): Record<string, unknown> {
  const ref = step['ref'];
  if (typeof ref !== 'string') {
    if (step['message'] === undefined || step['options'] === undefined) {
      throw new Error(`checkpoint '${String(step['id'])}' needs both message and options`);
    }
    return step;
  }
  const clash = REF_EXCLUSIVE.find((k) => step[k] !== undefined);
  if (clash !== undefined) {
    throw new Error(`checkpoint '${String(step['id'])}' has both ref and ${clash}`);
  }
  const body = findFragment(root, declaring, own, 'checkpoints', ref);
  if (body === undefined) throw new Error(`unresolved checkpoint fragment ref '${ref}'`);
  if (step['condition'] !== undefined && body.condition !== undefined) {
    throw new Error(`checkpoint '${String(step['id'])}' and its fragment both have a condition`);
  }
  const { ref: _ref, ...rest } = step;
  return { ...rest, ...structuredClone(body) };
}

/**
 * Where a finished step goes (`_next_target`): its linear `next`, or the one closed branch
 * whose predicate holds over the confirmed state. A predicate over a field the state lacks asks
 * that field's question; no transition means the walk is complete; two matching branches are
 * `branch_ambiguous` (authoring proves exclusivity where it can; this is the rest).
 */
import { EngineError, type Failure, failure } from './errors.js';
import { evaluate, predicateFields } from './predicates.js';
import type { StepDef } from './release-schema.js';

export type Target =
  | { readonly kind: 'advance'; readonly to: string }
  | { readonly kind: 'question'; readonly question: StepDef['questions'][number] }
  | { readonly kind: 'completed' }
  | { readonly kind: 'blocked'; readonly failures: Failure[] };

/** The transition of `step` over `state`. */
export function nextTarget(step: StepDef, state: Readonly<Record<string, unknown>>): Target {
  if (step.next !== undefined) return { kind: 'advance', to: step.next };
  const branches = step.branches;
  if (branches === undefined) return { kind: 'completed' };
  const values = branches.map((b) => evaluate(b.when, state));
  const matches = branches.filter((_, i) => values[i] === true);
  if (matches.length > 1) {
    throw new EngineError('branch_ambiguous', `step ${step.id}: ${matches.length} branches match`);
  }
  if (matches[0] !== undefined) return { kind: 'advance', to: matches[0].to };
  const missing = branches
    .filter((_, i) => values[i] === 'missing')
    .flatMap((b) => predicateFields(b.when))
    .filter((field) => !Object.hasOwn(state, field));
  const question = step.questions.find((q) => missing.includes(q.field));
  if (question !== undefined) return { kind: 'question', question };
  return {
    kind: 'blocked',
    failures: [failure('no_branch_matches', `no branch of step ${step.id} matches the state`)],
  };
}

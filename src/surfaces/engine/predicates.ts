/**
 * Closed branch predicates over top-level confirmed-state fields (docs/engine.md, "Branches"):
 * `{field, equals}`, `{field, in}`, `{field, exists}`, `{all}`, `{any}`, `{not}`. Evaluation is
 * three-valued: a predicate over a field the state does not hold yet is `missing`, which the
 * step answers with that field's question instead of guessing a branch.
 */
import { z } from 'zod';
import { canonicalJson } from './canonical-json.js';

export type Predicate =
  | { readonly field: string; readonly equals: unknown }
  | { readonly field: string; readonly in: readonly unknown[] }
  | { readonly field: string; readonly exists: boolean }
  | { readonly all: readonly Predicate[] }
  | { readonly any: readonly Predicate[] }
  | { readonly not: Predicate };

/**
 * The authoring schema of a predicate (strict: an unknown key is an error). Built with the
 * release format it belongs to (release-schema.ts), on first use rather than at import.
 */
export function predicateSchema(): z.ZodType<Predicate> {
  built ??= buildPredicateSchema();
  return built;
}
let built: z.ZodType<Predicate> | undefined;

function buildPredicateSchema(): z.ZodType<Predicate> {
  const field = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a top-level state field name');
  const self: z.ZodType<Predicate> = z.lazy(() =>
    z.union([
      z.object({ field, equals: z.json() }).strict(),
      z.object({ field, in: z.array(z.json()).min(1) }).strict(),
      z.object({ field, exists: z.boolean() }).strict(),
      z.object({ all: z.array(self).min(1) }).strict(),
      z.object({ any: z.array(self).min(1) }).strict(),
      z.object({ not: self }).strict(),
    ]),
  ) as z.ZodType<Predicate>;
  return self;
}

export type Truth = true | false | 'missing';

/** The predicate's value over `state`; `missing` names no field, see `missingFields`. */
export function evaluate(p: Predicate, state: Readonly<Record<string, unknown>>): Truth {
  if ('all' in p) {
    const values = p.all.map((q) => evaluate(q, state));
    if (values.includes(false)) return false;
    return values.includes('missing') ? 'missing' : true;
  }
  if ('any' in p) {
    const values = p.any.map((q) => evaluate(q, state));
    if (values.includes(true)) return true;
    return values.includes('missing') ? 'missing' : false;
  }
  if ('not' in p) {
    const value = evaluate(p.not, state);
    return value === 'missing' ? value : !value;
  }
  const present = Object.hasOwn(state, p.field);
  if ('exists' in p) return present === p.exists;
  if (!present) return 'missing';
  const value = canonicalJson(state[p.field]);
  if ('equals' in p) return value === canonicalJson(p.equals);
  return p.in.some((item) => canonicalJson(item) === value);
}

/** Every field a predicate reads, in first-mention order. */
export function predicateFields(p: Predicate, out: string[] = []): string[] {
  if ('all' in p) for (const q of p.all) predicateFields(q, out);
  else if ('any' in p) for (const q of p.any) predicateFields(q, out);
  else if ('not' in p) predicateFields(p.not, out);
  else if (!out.includes(p.field)) out.push(p.field);
  return out;
}

/**
 * For a literal `{field, equals}` or `{field, in}`: the field and its values (canonical text),
 * which is what authoring can prove exclusive; undefined for anything else.
 */
export function literalValues(p: Predicate): { field: string; values: string[] } | undefined {
  if ('equals' in p) return { field: p.field, values: [canonicalJson(p.equals)] };
  if ('in' in p) return { field: p.field, values: p.in.map((v) => canonicalJson(v)) };
  return undefined;
}

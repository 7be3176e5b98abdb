/**
 * Structured conditions (spec session-profile §1.9): evaluation over a variable bag and the
 * text form warnings compare (§1.10). The server never evaluates a condition to move a session;
 * these serve eager bundling and the walker's mirror of the rules. Pure, no I/O.
 */

/** A structured condition, as the activity schema admits it. */
export type Condition =
  | {
      readonly type: 'simple';
      readonly variable: string;
      readonly operator: '==' | '!=' | '>' | '<' | '>=' | '<=' | 'exists' | 'notExists';
      readonly value?: string | number | boolean | null | undefined;
    }
  | { readonly type: 'and' | 'or'; readonly conditions: readonly Condition[] }
  | { readonly type: 'not'; readonly condition: Condition };

/** The value at a dotted path of the bag; a missing segment gives undefined. */
export function readPath(bag: Readonly<Record<string, unknown>>, path: string): unknown {
  let value: unknown = bag;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** `Number()` of a number or numeric string when finite; undefined otherwise. */
export function toFinite(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') {
    const n = Number(value);
    return Number.isFinite(n) && value.trim() !== '' ? n : undefined;
  }
  return undefined;
}

/** Compares two values with the format's operators (strict equality, numeric ordering). */
export function compare(left: unknown, op: string, right: unknown): boolean {
  if (op === '==') return left === right;
  if (op === '!=') return left !== right;
  const a = toFinite(left);
  const b = toFinite(right);
  if (a === undefined || b === undefined) return false;
  if (op === '>') return a > b;
  if (op === '<') return a < b;
  if (op === '>=') return a >= b;
  if (op === '<=') return a <= b;
  return false;
}

/** Evaluates a structured condition over the bag. */
export function evaluateCondition(c: Condition, bag: Readonly<Record<string, unknown>>): boolean {
  switch (c.type) {
    case 'and':
      return c.conditions.every((x) => evaluateCondition(x, bag));
    case 'or':
      return c.conditions.some((x) => evaluateCondition(x, bag));
    case 'not':
      return !evaluateCondition(c.condition, bag);
    default: {
      const value = readPath(bag, c.variable);
      if (c.operator === 'exists') return value !== undefined && value !== null;
      if (c.operator === 'notExists') return value === undefined || value === null;
      return compare(value, c.operator, c.value);
    }
  }
}

/** The text form warnings compare: `var op JSON(value)`, ` AND `, ` OR `, `NOT (...)`. */
export function conditionText(c: Condition): string {
  switch (c.type) {
    case 'and':
      return c.conditions.map(conditionText).join(' AND ');
    case 'or':
      return c.conditions.map(conditionText).join(' OR ');
    case 'not':
      return `NOT (${conditionText(c.condition)})`;
    default:
      // An absent value prints as `undefined`, as the public server's text does.
      return `${c.variable} ${c.operator} ${String(JSON.stringify(c.value))}`;
  }
}

/** Every variable path a condition reads. */
export function conditionVariables(c: Condition): string[] {
  if (c.type === 'simple') return [c.variable];
  if (c.type === 'not') return conditionVariables(c.condition);
  return c.conditions.flatMap(conditionVariables);
}

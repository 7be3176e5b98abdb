/**
 * Checks a control tool's arguments (`job.*`, `mhl_run_*`) against the very `inputSchema` it
 * advertises, so the two cannot drift: undeclared and missing keys, and each declared value's
 * `type`, `enum`, `minLength`/`maxLength` and `minimum`/`maximum`. Nested objects are only
 * type-checked here: a forwarded `arguments` object is the target workflow's to check. Only
 * the keywords these schemas use are understood; workflow inputs go through Ajv instead.
 */
import { ArgumentError, shortKey } from '../runs/index.js';

/** One property of a control tool's schema. */
export interface PropertySchema {
  readonly type?: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
  readonly description?: string;
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  /** Described for clients; a forwarded object's inner keys are its target's to check. */
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
}

/** A control tool's `inputSchema`: a flat object that takes nothing undeclared. */
export interface ControlSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, PropertySchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties: false;
}

/** How many enum values a refusal lists before pointing at tools/list. */
const MAX_LISTED = 8;

/** Throws `ArgumentError` for the first argument `schema` does not accept. */
export function checkControlArguments(
  tool: string,
  schema: ControlSchema,
  args: Readonly<Record<string, unknown>>,
): void {
  const declared = Object.keys(schema.properties);
  const extra = Object.keys(args).filter((key) => !declared.includes(key));
  if (extra.length > 0) {
    // Named briefly: a hostile caller may send many or huge keys.
    const named = extra.slice(0, 3).map((key) => JSON.stringify(shortKey(key)));
    const more = extra.length > 3 ? ` and ${extra.length - 3} more` : '';
    const takes = declared.length > 0 ? `only ${declared.join(', ')}` : 'no arguments';
    const message = `${tool} takes ${takes}; got ${named.join(', ')}${more}`;
    throw new ArgumentError(shortKey(extra[0] as string), message);
  }
  for (const key of schema.required ?? []) {
    if (!(key in args)) {
      const what = schema.properties[key]?.description;
      throw new ArgumentError(key, `${tool} needs "${key}"${what ? `: ${what}` : ''}`);
    }
  }
  for (const [key, value] of Object.entries(args)) {
    const problem = valueProblem(schema.properties[key] as PropertySchema, value);
    if (problem !== undefined) throw new ArgumentError(key, `${tool}: "${key}" ${problem}`);
  }
}

function valueProblem(schema: PropertySchema, value: unknown): string | undefined {
  if (schema.type !== undefined && !hasType(value, schema.type)) return `must be ${schema.type}`;
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) {
    const listed = schema.enum.slice(0, MAX_LISTED).map((v) => JSON.stringify(v));
    const more = schema.enum.length > MAX_LISTED ? ', … (see tools/list)' : '';
    return `must be one of ${listed.join(', ')}${more}`;
  }
  if (typeof value === 'string') {
    const length = characters(value, schema.maxLength);
    if (schema.minLength !== undefined && length < schema.minLength)
      return `must have at least ${schema.minLength} characters`;
    if (schema.maxLength !== undefined && length > schema.maxLength)
      return `must have at most ${schema.maxLength} characters`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      return `must be ${schema.minimum} or more`;
    if (schema.maximum !== undefined && value > schema.maximum)
      return `must be ${schema.maximum} or less`;
  }
  return undefined;
}

/**
 * A string's length as JSON Schema counts it (code points, not UTF-16 units). Past twice `max`
 * units it is over `max` whatever it holds, so a huge string is not walked.
 */
function characters(value: string, max: number | undefined): number {
  if (max !== undefined && value.length > 2 * max) return value.length;
  let count = 0;
  for (const _ of value) count++;
  return count;
}

function hasType(value: unknown, type: NonNullable<PropertySchema['type']>): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

/**
 * Projects MHL types to JSON Schema 2020-12, and a pipeline's `input` members to the
 * `inputSchema` clients see (spec/mhl-serve.md §1, spec/mhl-language.md §3, "JSON-Schema
 * projection"). Each declared type (`type`, `enum`) the inputs use is projected once, under
 * `$defs` by its declared name, and referred to with `$ref`, so recursive types stay exact.
 * Pure: reads declarations and the program's namespace, never evaluates code, so a default
 * reaches the schema only when it is a literal.
 */
import type { Expr, Namespace, PipelineDecl, TypeNode } from '../lang/index.js';
import { BUILTIN_TYPES } from '../lang/index.js';
import type { JsonObject, JsonValue } from './types.js';

/** The dialect every projected schema declares in `$schema`. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * `{"$schema":…,"type":"object","properties":…,"additionalProperties":false,"required":[…],
 * "$defs":…}`: one property per input in declaration order; `required` lists the inputs
 * without a default, sorted, and is omitted when empty; `$defs` holds the declared types the
 * inputs use, sorted by name, and is omitted when there are none. A literal default becomes
 * the property's JSON `default` (beside a `$ref`, for an input of a declared type).
 */
export function projectInputSchema(decl: PipelineDecl, namespace: Namespace): JsonObject {
  const defs = new Map<string, JsonObject>();
  const properties = decl.inputs.map((input): [string, JsonValue] => {
    const schema = project(input.type, namespace, defs, new Set());
    const fallback = input.default && literalJson(input.default);
    return [input.name, fallback === undefined ? schema : { ...schema, default: fallback }];
  });
  const required = decl.inputs.filter((i) => !i.default).map((i) => i.name);
  return {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: Object.fromEntries(properties),
    additionalProperties: false,
    ...(required.length > 0 ? { required: required.sort() } : {}),
    ...defsMember(defs),
  };
}

/**
 * One type as a schema of its own (`$schema`, and `$defs` for the declared types it uses), as
 * `projectInputSchema` projects an input's type: `string`, `number` (also `float`), `integer`
 * (`int`, `integer`), `boolean`, `{}` for `any`, arrays with `items`, shapes with their
 * non-optional fields required and extra fields allowed, enums as
 * `{"type":"string","enum":[variants]}`, and a declared type as `{"$ref":"#/$defs/<Name>"}`.
 * A name it cannot resolve, or an alias that only leads back to itself, projects to `{}` (the
 * checker reports those).
 */
export function projectTypeSchema(type: TypeNode, namespace: Namespace): JsonObject {
  const defs = new Map<string, JsonObject>();
  const schema = project(type, namespace, defs, new Set());
  return { $schema: JSON_SCHEMA_DIALECT, ...schema, ...defsMember(defs) };
}

function defsMember(defs: ReadonlyMap<string, JsonObject>): JsonObject {
  if (defs.size === 0) return {};
  const sorted = [...defs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { $defs: Object.fromEntries(sorted) };
}

/**
 * `defs` collects each declared type once (a placeholder first, so a type that refers to
 * itself through a shape or an array gets a `$ref` to its own entry). `chain` holds the aliases
 * being followed with nothing between them: meeting one again is a cycle no value can satisfy
 * (`type A = B`, `type B = A`), projected as `{}` rather than a `$ref` loop.
 */
function project(
  type: TypeNode,
  namespace: Namespace,
  defs: Map<string, JsonObject>,
  chain: ReadonlySet<string>,
): JsonObject {
  switch (type.kind) {
    case 'ArrayType':
      return { type: 'array', items: project(type.element, namespace, defs, new Set()) };
    case 'ShapeType': {
      const fields = type.fields.map((f): [string, JsonValue] => [
        f.name,
        project(f.type, namespace, defs, new Set()),
      ]);
      const required = type.fields.filter((f) => !f.optional).map((f) => f.name);
      return {
        type: 'object',
        properties: Object.fromEntries(fields),
        ...(required.length > 0 ? { required: required.sort() } : {}),
        additionalProperties: true,
      };
    }
    case 'NamedType':
      return projectNamed(type.name, namespace, defs, chain);
  }
}

function projectNamed(
  name: string,
  namespace: Namespace,
  defs: Map<string, JsonObject>,
  chain: ReadonlySet<string>,
): JsonObject {
  if (name === 'int' || name === 'integer') return { type: 'integer' };
  switch (BUILTIN_TYPES[name]) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'array':
      return { type: 'array' };
    case 'object':
      return { type: 'object' };
    case 'any':
      return {};
  }
  const binding = namespace.bindings.get(name);
  if (binding?.kind !== 'decl' || chain.has(name)) return {};
  const decl = binding.decl;
  if (decl.kind !== 'Enum' && decl.kind !== 'TypeAlias') return {};
  if (!defs.has(name)) {
    defs.set(name, {});
    const schema =
      decl.kind === 'Enum'
        ? { type: 'string', enum: decl.variants.map((v) => v.name) }
        : project(decl.type, namespace, defs, new Set([...chain, name]));
    defs.set(name, schema);
  }
  // Declared names are identifiers: nothing in them needs JSON Pointer escaping.
  return { $ref: `#/$defs/${name}` };
}

/**
 * The JSON value of a literal expression (null, bool, number, `-number`, a string without
 * interpolation, arrays and objects of those); undefined for anything that needs evaluating.
 */
export function literalJson(e: Expr): JsonValue | undefined {
  switch (e.kind) {
    case 'Null':
      return null;
    case 'Bool':
    case 'Number':
      return e.value;
    case 'Unary':
      return e.op === '-' && e.operand.kind === 'Number' ? -e.operand.value : undefined;
    case 'String':
      return e.segments.every((s) => typeof s === 'string') ? e.segments.join('') : undefined;
    case 'Array': {
      const items: JsonValue[] = [];
      for (const item of e.items) {
        const v = literalJson(item);
        if (v === undefined) return undefined;
        items.push(v);
      }
      return items;
    }
    case 'Object': {
      const fields: [string, JsonValue][] = [];
      for (const f of e.fields) {
        const v = literalJson(f.value);
        if (v === undefined) return undefined;
        fields.push([f.key, v]);
      }
      return Object.fromEntries(fields);
    }
    default:
      return undefined;
  }
}

/** A type as written in MHL: `string[]`, `{id: number, label?: string}`, `Item`. */
export function typeText(type: TypeNode): string {
  if (type.kind === 'ArrayType') return `${typeText(type.element)}[]`;
  if (type.kind === 'NamedType') return type.name;
  const fields = type.fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${typeText(f.type)}`);
  return `{${fields.join(', ')}}`;
}

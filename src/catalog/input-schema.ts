/**
 * Projects MHL types to JSON Schema, and a pipeline's `input` members to the `inputSchema`
 * clients see (spec/mhl-serve.md §1, spec/mhl-language.md §3, "JSON-Schema projection").
 * Pure: reads declarations and the program's namespace, never evaluates code, so a default
 * reaches the schema only when it is a literal.
 */
import type { Expr, Namespace, PipelineDecl, TypeNode } from '../lang/index.js';
import { BUILTIN_TYPES } from '../lang/index.js';
import type { JsonObject, JsonValue } from './types.js';

/**
 * `{"type":"object","properties":…,"additionalProperties":false,"required":[…]}`: one property
 * per input in declaration order; `required` lists the inputs without a default, sorted, and
 * is omitted when empty. A literal default becomes the property's JSON `default`.
 */
export function projectInputSchema(decl: PipelineDecl, namespace: Namespace): JsonObject {
  const properties = decl.inputs.map((input): [string, JsonValue] => {
    const schema = projectType(input.type, namespace);
    const fallback = input.default && literalJson(input.default);
    return [input.name, fallback === undefined ? schema : { ...schema, default: fallback }];
  });
  const required = decl.inputs.filter((i) => !i.default).map((i) => i.name);
  return {
    type: 'object',
    properties: Object.fromEntries(properties),
    additionalProperties: false,
    ...(required.length > 0 ? { required: required.sort() } : {}),
  };
}

/**
 * One type's schema: `string`, `number` (also `int`, `integer`, `float`), `boolean`, `{}` for
 * `any`, arrays with `items`, shapes with their non-optional fields required and extra fields
 * allowed, enums as `{"type":"string","enum":[variants]}`; aliases are resolved through the
 * program's namespace. A name it cannot resolve projects to `{}` (the checker reports those).
 */
export function projectType(
  type: TypeNode,
  namespace: Namespace,
  resolving: ReadonlySet<string> = new Set(),
): JsonObject {
  switch (type.kind) {
    case 'ArrayType':
      return { type: 'array', items: projectType(type.element, namespace, resolving) };
    case 'ShapeType': {
      const fields = type.fields.map((f): [string, JsonValue] => [
        f.name,
        projectType(f.type, namespace, resolving),
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
      return projectNamed(type.name, namespace, resolving);
  }
}

function projectNamed(
  name: string,
  namespace: Namespace,
  resolving: ReadonlySet<string>,
): JsonObject {
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
  if (binding?.kind !== 'decl' || resolving.has(name)) return {};
  const decl = binding.decl;
  if (decl.kind === 'Enum') return { type: 'string', enum: decl.variants.map((v) => v.name) };
  if (decl.kind === 'TypeAlias')
    return projectType(decl.type, namespace, new Set([...resolving, name]));
  return {};
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

/**
 * A prompt's typed parameters as MCP sees them: the `arguments` of a `prompts/list` entry, the
 * conversion of the strings `prompts/get` sends (MCP prompt arguments are always strings) into
 * values of the declared types, and the candidates `completion/complete` offers. Pure: reads
 * declarations and the program's namespace, never evaluates code.
 */
import { type CatalogPrompt, typeText } from '../catalog/index.js';
import type { Namespace } from '../lang/index.js';
import { BUILTIN_TYPES, type Param, type TypeNode } from '../lang/index.js';
import { EnumValue, fromJson, matchesType, type Value } from '../runtime/index.js';

/** A `prompts/list` argument entry. */
export interface PromptArgument {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
}

/** What a parameter's declared type comes down to once aliases are followed. */
type Resolved =
  | { readonly kind: 'string' | 'number' | 'integer' | 'bool' | 'any' }
  | { readonly kind: 'enum'; readonly name: string; readonly variants: readonly string[] }
  | { readonly kind: 'json'; readonly type: TypeNode; readonly text: string };

/** A refused argument: which one, and why (for the -32602 the surface answers). */
export class PromptArgumentError extends Error {
  readonly argument: string;
  constructor(argument: string, message: string) {
    super(message);
    this.name = 'PromptArgumentError';
    this.argument = argument;
  }
}

/** The `arguments` of a prompt's list entry, in declaration order. */
export function promptArguments(prompt: CatalogPrompt): PromptArgument[] {
  const namespace = prompt.program.namespace;
  return prompt.decl.params.map((p) => ({
    name: p.name,
    description: describe(p, resolve(p.type, namespace)),
    required: p.default === undefined,
  }));
}

/**
 * The values to render `prompt` with, from the strings a client sent: each converted to its
 * parameter's declared type. Parameters not sent keep their defaults (the renderer evaluates
 * them). Throws `PromptArgumentError` for an undeclared, missing, non-string or malformed one.
 */
export function convertArguments(
  prompt: CatalogPrompt,
  sent: Readonly<Record<string, unknown>>,
): Map<string, Value> {
  const params = new Map(prompt.decl.params.map((p) => [p.name, p]));
  for (const name of Object.keys(sent)) {
    if (!params.has(name)) {
      const declared = [...params.keys()].join(', ') || 'none';
      throw new PromptArgumentError(
        name,
        `prompt "${prompt.name}" has no argument "${name}" (declared: ${declared})`,
      );
    }
  }
  const values = new Map<string, Value>();
  for (const p of prompt.decl.params) {
    const text = Object.hasOwn(sent, p.name) ? sent[p.name] : undefined;
    if (text === undefined) {
      if (p.default === undefined)
        throw new PromptArgumentError(p.name, `prompt "${prompt.name}" needs argument "${p.name}"`);
      continue;
    }
    if (typeof text !== 'string')
      throw new PromptArgumentError(p.name, `argument "${p.name}" must be sent as a string`);
    values.set(p.name, convert(p.name, text, resolve(p.type, prompt.program.namespace)));
  }
  return values;
}

/**
 * Completion candidates for one parameter, in declaration order: an enum's variants,
 * `true`/`false` for a bool, none for free text. Undefined for an unknown parameter.
 */
export function argumentCandidates(prompt: CatalogPrompt, name: string): string[] | undefined {
  const param = prompt.decl.params.find((p) => p.name === name);
  if (param === undefined) return undefined;
  const resolved = resolve(param.type, prompt.program.namespace);
  if (resolved.kind === 'enum') return [...resolved.variants];
  if (resolved.kind === 'bool') return ['true', 'false'];
  return [];
}

function convert(name: string, text: string, type: Resolved): Value {
  const bad = (what: string): never => {
    throw new PromptArgumentError(name, `argument "${name}" must be ${what}`);
  };
  switch (type.kind) {
    case 'string':
      return text;
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n)) return bad('a number');
      return type.kind === 'integer' && !Number.isInteger(n) ? bad('a whole number') : n;
    }
    case 'bool':
      return text === 'true' ? true : text === 'false' ? false : bad('true or false');
    case 'enum':
      return type.variants.includes(text)
        ? new EnumValue(type.name, text)
        : bad(`one of ${type.variants.join(', ')}`);
    case 'any':
      // Free text unless it is JSON: a client cannot send anything but a string.
      try {
        return fromJson(JSON.parse(text));
      } catch {
        return text;
      }
    case 'json': {
      let value: Value;
      try {
        value = fromJson(JSON.parse(text));
      } catch {
        return bad(`JSON for ${type.text}`);
      }
      return matchesType(value, type.type) ? value : bad(`JSON for ${type.text}`);
    }
  }
}

/** A parameter's type, aliases followed; untyped and `prompt` parameters take text. */
function resolve(
  type: TypeNode | undefined,
  namespace: Namespace,
  seen: ReadonlySet<string> = new Set(),
): Resolved {
  if (type === undefined) return { kind: 'string' };
  if (type.kind !== 'NamedType') return { kind: 'json', type, text: typeText(type) };
  if (type.name === 'int' || type.name === 'integer') return { kind: 'integer' };
  switch (BUILTIN_TYPES[type.name]) {
    case 'string':
      return { kind: 'string' };
    case 'number':
      return { kind: 'number' };
    case 'bool':
      return { kind: 'bool' };
    case 'any':
      return { kind: 'any' };
    case 'array':
    case 'object':
      return { kind: 'json', type, text: type.name };
  }
  const binding = namespace.bindings.get(type.name);
  if (binding?.kind !== 'decl' || seen.has(type.name)) return { kind: 'string' };
  const decl = binding.decl;
  if (decl.kind === 'Enum')
    return { kind: 'enum', name: decl.name, variants: decl.variants.map((v) => v.name) };
  if (decl.kind === 'TypeAlias')
    return resolve(decl.type, namespace, new Set([...seen, type.name]));
  return { kind: 'string' };
}

function describe(param: Param, type: Resolved): string {
  const what =
    type.kind === 'enum'
      ? `one of ${type.variants.join(', ')}`
      : type.kind === 'json'
        ? `JSON for ${type.text}`
        : type.kind === 'bool'
          ? 'true or false'
          : type.kind === 'integer'
            ? 'a whole number'
            : type.kind === 'number'
              ? 'a number'
              : 'text';
  return param.default === undefined ? what : `${what} (optional)`;
}

/**
 * Pipeline inputs: type checks against declared types, the "invalid inputs" error (missing
 * required, undeclared keys), and coercion of command-line text (`--input n=3`) into values.
 */
import type { InputDecl, TypeNode } from '../../lang/index.js';
import { BUILTIN_TYPES, LangError } from '../../lang/index.js';
import { fromJson, isObject, typeOf, type Value } from '../interpreter/values.js';

/** Raised for bad inputs; carries the lists the JSON output reports. */
export class InvalidInputsError extends LangError {
  readonly missing: readonly string[];
  readonly unknown: readonly string[];
  constructor(pipeline: string, missing: string[], unknown: string[], problems: string[] = []) {
    const parts = [
      missing.length ? `missing required ${missing.map((m) => `'${m}'`).join(', ')}` : '',
      unknown.length ? `undeclared ${unknown.map((u) => `'${u}'`).join(', ')}` : '',
      ...problems,
    ].filter(Boolean);
    super('INVALID_INPUTS', `invalid inputs for ${pipeline}: ${parts.join('; ')}`);
    this.missing = missing;
    this.unknown = unknown;
  }
}

/** Checks supplied inputs against the declarations (types, missing, undeclared). */
export function checkInputs(
  pipeline: string,
  decls: readonly InputDecl[],
  supplied: Readonly<Record<string, Value>>,
): void {
  // Plain loops, no Map of the declarations: this runs on every call, over a handful of inputs.
  const unknown: string[] = [];
  const problems: string[] = [];
  for (const name of Object.keys(supplied)) {
    const decl = declaredAs(decls, name);
    const value = supplied[name] as Value;
    if (decl === undefined) unknown.push(name);
    else if (!matchesType(value, decl.type))
      problems.push(`'${name}' must be ${typeText(decl.type)}, got ${typeOf(value)}`);
  }
  const missing: string[] = [];
  for (const d of decls) if (!d.default && !(d.name in supplied)) missing.push(d.name);
  if (unknown.length || missing.length || problems.length)
    throw new InvalidInputsError(pipeline, missing, unknown, problems);
}

/** The declaration of input `name` (the last one, should a name be declared twice). */
function declaredAs(decls: readonly InputDecl[], name: string): InputDecl | undefined {
  for (let i = decls.length - 1; i >= 0; i--) if (decls[i]?.name === name) return decls[i];
  return undefined;
}

/**
 * Structural type check: `null` satisfies any type; shapes allow extra fields. `resolve` (when
 * given) turns a type alias's name into its type, so aliases are checked too; without it, and
 * for enums, a named type that is not built in matches anything.
 */
export function matchesType(
  v: Value,
  t: TypeNode,
  resolve?: (name: string) => TypeNode | undefined,
): boolean {
  if (v === null) return true;
  if (t.kind === 'ArrayType')
    return Array.isArray(v) && v.every((x) => matchesType(x, t.element, resolve));
  if (t.kind === 'ShapeType') {
    return (
      isObject(v) &&
      t.fields.every((f) =>
        f.name in v ? matchesType(v[f.name] as Value, f.type, resolve) : f.optional,
      )
    );
  }
  switch (BUILTIN_TYPES[t.name] ?? t.name) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    case 'any':
      return true;
    default: {
      const aliased = resolve?.(t.name);
      return aliased ? matchesType(v, aliased, resolve) : true;
    }
  }
}

export function typeText(t: TypeNode): string {
  if (t.kind === 'ArrayType') return `${typeText(t.element)}[]`;
  if (t.kind === 'ShapeType')
    return `{${t.fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${typeText(f.type)}`).join(', ')}}`;
  return t.name;
}

/**
 * Turns `--input key=value` text into a value by the declared type: numbers and bools are
 * parsed, arrays, objects and shapes are JSON, strings stay text, `any` is JSON when it parses.
 */
export function coerceInput(name: string, text: string, decl: InputDecl | undefined): Value {
  if (!decl) return text;
  const t = decl.type;
  const kind = t.kind === 'NamedType' ? (BUILTIN_TYPES[t.name] ?? t.name) : 'json';
  const bad = (what: string): never => {
    throw new LangError(
      'INVALID_INPUTS',
      `--input ${name}: expected ${what}, got ${JSON.stringify(text)}`,
    );
  };
  switch (kind) {
    case 'string':
      return text;
    case 'number': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : bad('a number');
    }
    case 'bool':
      return text === 'true' ? true : text === 'false' ? false : bad('true or false');
    case 'any':
      try {
        return fromJson(JSON.parse(text));
      } catch {
        return text;
      }
    case 'json':
    case 'array':
    case 'object':
      try {
        return fromJson(JSON.parse(text));
      } catch {
        return bad(`JSON for ${typeText(t)}`);
      }
    default:
      return text;
  }
}

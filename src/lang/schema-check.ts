/**
 * Checks that a file is a JSON Schema, and says where it is not: JSON syntax errors and schema
 * errors are both located (line and column in the file), with messages that do not depend on the
 * Node.js version. Validators are made once per process.
 */
import type { Ajv, ErrorObject } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { ajv2020Class, ajvClass, yaml } from './lazy-modules.js';

export interface SchemaProblem {
  readonly message: string;
  /** 1-based position in the file, when the problem has one. */
  readonly line?: number;
  readonly col?: number;
}

const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

/** Undefined when `text` is a JSON object that is a valid JSON Schema (2020-12, or draft-07 if it says so). */
export function checkSchema(text: string): SchemaProblem | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const raw = (e as Error).message;
    const position = /at position (\d+)/.exec(raw);
    const reason = raw.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*$/s, '');
    const where = position ? lineCol(text, Number(position[1])) : {};
    return { message: `invalid JSON: ${reason}`, ...where };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { message: 'must be a JSON object (a JSON Schema)' };
  }
  const declared = (value as { $schema?: unknown }).$schema;
  const ajv =
    typeof declared === 'string' && declared.startsWith(DRAFT_07) ? draft07() : draft2020();
  // validateSchema answers a Promise only for $async meta-schemas, which these are not.
  if (ajv.validateSchema(value as object) === true) return undefined;
  const first = (ajv.errors ?? [])[0];
  if (!first) return { message: 'not a valid JSON Schema' };
  return {
    message: `not a valid JSON Schema: ${describe(first, value)}`,
    ...locate(text, first.instancePath),
  };
}

function describe(error: ErrorObject, schema: unknown): string {
  const path = pointerSegments(error.instancePath);
  const name = path.length ? `"${path.join('/')}"` : 'the schema';
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  if (error.keyword === 'enum' && allowed) {
    const found = path.reduce<unknown>(
      (v, k) => (v as Record<string, unknown> | undefined)?.[k],
      schema,
    );
    return `${name} must be one of ${[...allowed].sort().join(', ')}; found ${JSON.stringify(found)}`;
  }
  return `${name} ${error.message ?? 'is invalid'}`;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The position of the value at a JSON pointer, found through a YAML parse (JSON is YAML). */
function locate(text: string, pointer: string): { line?: number; col?: number } {
  const node = yaml()
    .parseDocument(text)
    .getIn(
      pointerSegments(pointer).map((k) => (/^\d+$/.test(k) ? Number(k) : k)),
      true,
    ) as { range?: [number, number, number] } | undefined;
  return node?.range ? lineCol(text, node.range[0]) : {};
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  return { line: (before.match(/\n/g)?.length ?? 0) + 1, col: offset - before.lastIndexOf('\n') };
}

let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;
/** JSON Schema 2020-12, the default for schemas that do not name a draft. */
function draft2020(): Ajv2020 {
  ajv2020 ??= new (ajv2020Class())({ strict: false });
  return ajv2020;
}
/** Draft-07, which many agent CLIs' examples still declare. */
function draft07(): Ajv {
  ajv07 ??= new (ajvClass())({ strict: false });
  return ajv07;
}

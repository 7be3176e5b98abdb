/**
 * Argument checks for served workflows: each `inputSchema` is compiled once, at start-up, into an
 * `InputValidator` that refuses missing and undeclared inputs and values of the wrong type with
 * one clear message (spec/mhl-serve.md §1, "Input validation"). Checks only: coercing values
 * and binding them to a run belong to the runtime.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { ajv2020Class } from '../lang/index.js';
import type {
  InputCheck,
  InputProblem,
  InputValidator,
  InvalidInputs,
  JsonObject,
  Workflow,
} from './types.js';

/** Compiles one workflow's schema; made per catalog so no Ajv state is shared globally. */
export type ValidatorCompiler = (workflow: string, schema: JsonObject) => InputValidator;

/** Options for `createValidatorCompiler`. */
export interface ValidatorCompilerOptions {
  /**
   * Runs a background task after the I/O already pending: by default an unref'd `setImmediate`,
   * so answering requests comes first and background compiling never keeps a process alive.
   */
  readonly schedule?: (task: () => void, first: boolean) => void;
}

/**
 * How long after start-up the background pass begins. Loading Ajv and compiling its meta-schema
 * takes ~30 ms, which a client's first exchange (initialize or server/discover, tools/list)
 * should not wait behind.
 */
const WARM_UP_DELAY_MS = 250;

/** The pass's first turn starts after the warm-up delay, each later one on the next turn. */
function scheduleIdle(task: () => void, first: boolean): void {
  if (first) setTimeout(task, WARM_UP_DELAY_MS).unref();
  else setImmediate(task).unref();
}

/**
 * A compiler backed by one Ajv 2020 instance (all errors, strict schemas, no logging). Every
 * validator it hands out is compiled once, at start-up but off the critical path: the first
 * one schedules a background pass that begins shortly after start-up and compiles them one per
 * event-loop turn (~1 ms each), so a server answers its first requests before the pass is done (compiling 100 up front cost
 * ~0.1–0.2 s before anything could be answered). A call that arrives before its validator was
 * reached compiles that one on the spot, and the pass then skips it: never twice, never per
 * request. Identical schemas share one compiled function. A projected schema Ajv refuses is a
 * bug in the projection: the pass leaves it, and the call that needs it throws Ajv's error.
 */
export function createValidatorCompiler(options: ValidatorCompilerOptions = {}): ValidatorCompiler {
  const schedule = options.schedule ?? scheduleIdle;
  // Made on the first compile, so a server answers its first requests before loading Ajv.
  let ajv: Ajv2020 | undefined;
  const bySchema = new Map<string, ValidateFunction>();
  const pending: (() => void)[] = [];
  const compile = (schema: JsonObject): ValidateFunction => {
    const key = JSON.stringify(schema);
    let check = bySchema.get(key);
    if (check === undefined) {
      ajv ??= new (ajv2020Class())({ allErrors: true, strict: true, logger: false });
      check = ajv.compile(schema);
      bySchema.set(key, check);
    }
    return check;
  };
  const drain = (): void => {
    const next = pending.shift();
    if (next === undefined) return;
    try {
      next();
    } catch {
      // The call that needs this validator compiles it again and reports the error there.
    }
    if (pending.length > 0) schedule(drain, false);
  };
  return (workflow, schema) => {
    let check: ValidateFunction | undefined;
    const ensure = (): ValidateFunction => {
      check ??= compile(schema);
      return check;
    };
    if (pending.push(() => void ensure()) === 1) schedule(drain, true);
    const declared = Object.keys(schemaProperties(schema));
    return (args) => runCheck(workflow, declared, ensure(), args);
  };
}

function schemaProperties(schema: JsonObject): JsonObject {
  const properties = schema['properties'];
  return properties && typeof properties === 'object' && !Array.isArray(properties)
    ? (properties as JsonObject)
    : {};
}

function runCheck(
  workflow: string,
  declared: readonly string[],
  check: ValidateFunction,
  args: unknown,
): InputCheck {
  const inputs = args === undefined ? {} : args;
  if (!isPlainObject(inputs)) {
    const problem = `must be an object, got ${describe(inputs)}`;
    return refuse(workflow, declared, [], [], 0, [{ field: '', problem }]);
  }
  if (check(inputs)) return { ok: true, inputs };
  const missing = new Set<string>();
  const undeclared = new Set<string>();
  const invalid: InputProblem[] = [];
  for (const e of check.errors ?? []) {
    if (e.instancePath === '' && e.keyword === 'required')
      missing.add(String(e.params['missingProperty']));
    else if (e.instancePath === '' && e.keyword === 'additionalProperties')
      undeclared.add(String(e.params['additionalProperty']));
    else invalid.push(problemOf(e));
  }
  // Undeclared names come from the caller: a few, cut short, is all the answer repeats.
  const extra = [...undeclared].sort().slice(0, MAX_UNDECLARED_LISTED).map(shortName);
  return refuse(workflow, declared, [...missing].sort(), extra, undeclared.size, invalid);
}

/** At most this many undeclared names are listed, each at most `MAX_NAME_LENGTH` long. */
const MAX_UNDECLARED_LISTED = 10;
const MAX_NAME_LENGTH = 40;
/** At most this many undeclared names appear in the message. */
const MAX_UNDECLARED_NAMED = 3;
/** At most this many invalid values are listed, and named in the message. */
const MAX_INVALID_LISTED = 10;
const MAX_INVALID_NAMED = 5;

function shortName(name: string): string {
  return name.length > MAX_NAME_LENGTH ? `${name.slice(0, MAX_NAME_LENGTH)}…` : name;
}

function refuse(
  workflow: string,
  declared: readonly string[],
  missing: readonly string[],
  undeclared: readonly string[],
  undeclaredCount: number,
  invalid: readonly InputProblem[],
): InputCheck {
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing required ${nameList('input', missing)}`);
  if (undeclared.length > 0) {
    const names = declared.length > 0 ? [...declared].sort().join(', ') : 'none';
    const named = undeclared.slice(0, MAX_UNDECLARED_NAMED);
    const more = undeclaredCount - named.length;
    const listed = more > 0 ? `inputs ${quoted(named)} and ${more} more` : nameList('input', named);
    parts.push(`undeclared ${listed} (declared: ${names})`);
  }
  // One problem per bad array item could be thousands: the first few are enough to correct.
  for (const i of invalid.slice(0, MAX_INVALID_NAMED))
    parts.push(i.field === '' ? `arguments ${i.problem}` : `input "${i.field}" ${i.problem}`);
  if (invalid.length > MAX_INVALID_NAMED)
    parts.push(`and ${invalid.length - MAX_INVALID_NAMED} more invalid values`);
  const message = `invalid inputs for "${workflow}": ${parts.join('; ')}`;
  const error: InvalidInputs = {
    code: 'INVALID_ARGUMENT',
    workflow,
    message,
    missing,
    undeclared,
    invalid: invalid.slice(0, MAX_INVALID_LISTED),
  };
  return { ok: false, error };
}

/** One Ajv error as a field path and a short problem, e.g. `tags[1]` / `must be string`. */
function problemOf(e: ErrorObject): InputProblem {
  const field = fieldPath(e.instancePath);
  switch (e.keyword) {
    case 'type':
      return { field, problem: `must be ${String(e.params['type'])}` };
    case 'enum': {
      const allowed = (e.params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v));
      return { field, problem: `must be one of ${allowed.join(', ')}` };
    }
    case 'required': {
      // Named by its own path (`point.y`), as the top-level missing inputs are.
      const key = String(e.params['missingProperty']);
      return { field: `${field}.${key}`, problem: 'is missing' };
    }
    default:
      return { field, problem: e.message ?? `fails "${e.keyword}"` };
  }
}

/** `/cfg/tags/1` → `cfg.tags[1]` (JSON Pointer escapes undone). */
function fieldPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^\d+$/.test(key) ? `[${key}]` : path === '' ? key : `.${key}`;
  }
  return path;
}

/** `input "x"` or `inputs "x", "y"`. */
function nameList(noun: string, names: readonly string[]): string {
  return names.length === 1 ? `${noun} ${quoted(names)}` : `${noun}s ${quoted(names)}`;
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ');
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Checks a call's `arguments` (undefined counts as none) with the workflow's validator, compiled
 * once per schema (see `createValidatorCompiler`). A refusal carries `INVALID_ARGUMENT`; throws
 * only for a schema Ajv refuses, a bug in the projection.
 */
export function validateArguments(workflow: Workflow, args: unknown): InputCheck {
  return workflow.validate(args);
}

/**
 * Turning run-state records into redacted JSON text and back: the one place where run state
 * crosses the store boundary. Encoding refuses values that cannot be persisted and removes every
 * registered secret; decoding validates with the record schemas and names the key on failure.
 * No I/O: `checkpoints.ts` moves the text.
 */
import type { z } from 'zod';
import {
  fromJson,
  isJsonValue,
  type MhlObject,
  newObject,
  toPlain,
  type Value,
} from '../interpreter/values.js';
import { REDACTED, type Redactor } from '../services/redact.js';
import { type CheckpointRecord, STATE_VERSION } from './checkpoint-records.schema.js';

/** The stable codes of `CheckpointError`. */
export const CHECKPOINT_ERROR_CODES = {
  /** A state file is not JSON or does not match its schema. */
  CORRUPT: 'STATE_CORRUPT',
  /** A state file was written by a newer runtime (`state_version` above ours). */
  SCHEMA_TOO_NEW: 'STATE_SCHEMA_TOO_NEW',
  /** A variable holds a function, task handle or other value JSON cannot carry. */
  NOT_PERSISTABLE: 'STATE_NOT_PERSISTABLE',
  /** A pipeline name or session id cannot name state (see `isSessionId`, `isStateName`). */
  INVALID_NAME: 'STATE_INVALID_NAME',
  /** A fenced write was refused: this process no longer holds the run's lease. */
  LEASE_LOST: 'STATE_LEASE_LOST',
} as const;
export type CheckpointErrorCode =
  (typeof CHECKPOINT_ERROR_CODES)[keyof typeof CHECKPOINT_ERROR_CODES];

/** The `kind` of `mhl run --format json` errors this maps to (spec §12). */
export type CheckpointErrorKind = 'state_schema_too_new' | 'other';

/** A run-state failure: a stable `code`, the store `key` involved, details as fields. */
export class CheckpointError extends Error {
  readonly code: CheckpointErrorCode;
  readonly key: string;
  /** For `STATE_NOT_PERSISTABLE`: the variable; for `STATE_SCHEMA_TOO_NEW`: undefined. */
  readonly variable: string | undefined;
  /** For `STATE_SCHEMA_TOO_NEW`: the version found. */
  readonly stateVersion: number | undefined;

  constructor(
    code: CheckpointErrorCode,
    key: string,
    message: string,
    details: { cause?: unknown; variable?: string; stateVersion?: number } = {},
  ) {
    super(`${key}: ${message}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'CheckpointError';
    this.code = code;
    this.key = key;
    this.variable = details.variable;
    this.stateVersion = details.stateVersion;
  }

  /** The CLI's JSON error kind: `state_schema_too_new` or `other`. */
  get kind(): CheckpointErrorKind {
    return this.code === CHECKPOINT_ERROR_CODES.SCHEMA_TOO_NEW ? 'state_schema_too_new' : 'other';
  }
}

/**
 * Plain JSON data for one value, keys sorted.
 * @throws CheckpointError `STATE_NOT_PERSISTABLE` naming `name` when it is not JSON data.
 */
export function plainValue(value: Value, key: string, name: string): unknown {
  if (!isJsonValue(value)) {
    throw new CheckpointError(
      CHECKPOINT_ERROR_CODES.NOT_PERSISTABLE,
      key,
      `variable "${name}" holds a value that cannot be saved (functions and task handles never cross a checkpoint)`,
      { variable: name },
    );
  }
  return toPlain(value);
}

/**
 * Plain JSON data for `variables`, keys sorted.
 * @throws CheckpointError `STATE_NOT_PERSISTABLE` naming the first variable that is not JSON data.
 */
export function plainVariables(
  variables: Readonly<Record<string, Value>>,
  key: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(variables).sort()) {
    out[name] = plainValue(variables[name] as Value, key, name);
  }
  return out;
}

/** A copy of plain data with every string, key and number containing a secret redacted. */
function redactPlain(data: unknown, redactor: Redactor): unknown {
  if (typeof data === 'string') return redactor.redact(data);
  if (typeof data === 'number') {
    const text = String(data);
    return redactor.redact(text) === text ? data : REDACTED;
  }
  if (Array.isArray(data)) return data.map((x) => redactPlain(x, redactor));
  if (data !== null && typeof data === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(data)) out[redactor.redact(k)] = redactPlain(v, redactor);
    return out;
  }
  return data;
}

/**
 * A record as the redacted JSON text stored for it (2-space indent, trailing newline). Two
 * passes: every string, key and number is redacted in the data, then the serialized text as a
 * whole. The second pass can only match JSON syntax (the data is clean by then), so if it would
 * break the JSON the first pass's text is kept.
 */
export function encodeRecord(record: object, redactor: Redactor): string {
  if (redactor.size === 0) return `${JSON.stringify(record, null, 2)}\n`;
  const text = `${JSON.stringify(redactPlain(record, redactor), null, 2)}\n`;
  const again = redactor.redact(text);
  if (again === text) return text;
  try {
    JSON.parse(again);
    return again;
  } catch {
    // A registered "secret" matched JSON punctuation or a literal such as `true`; the data
    // itself is already redacted, so the first pass is the safe text to store.
    return text;
  }
}

/** Stands in for `completed_steps` while the rest of a checkpoint record is serialized. */
const STEPS_SLOT = '\u0000completed_steps';
/**
 * Where `STEPS_SLOT` lands in the text: a top-level key after a real newline, which no string
 * value's JSON can hold (its newlines are escaped), so the first match is the slot.
 */
const STEPS_NEEDLE = `\n  "completed_steps": ${JSON.stringify(STEPS_SLOT)}`;
/** How many checkpoint keys a `CheckpointEncoder` remembers (concurrent runs of one store). */
const ENCODER_KEYS = 16;
/** How many entries an encoded step list gathers before they are made one string with the rest. */
const PIECES = 32;

/** The `completed_steps` of one key, encoded: `\n    "S0",\n    "S1"`, as two strings. */
interface EncodedSteps {
  readonly names: string[];
  /** The older entries, one flat string. */
  flat: string;
  /** The newest entries (at most `PIECES`), appended one by one. */
  recent: string;
  pieces: number;
}

/**
 * Encodes checkpoint records as `encodeRecord` does, byte for byte, keeping for each of the last
 * few keys its `completed_steps` as encoded JSON: a run's next checkpoint lists the same steps
 * and one more, so only the new ones are encoded, where serializing the whole list made each
 * checkpoint cost time in proportion to the steps done (13.8 µs at 500 steps). With a secret
 * registered, every record takes `encodeRecord`'s two redaction passes instead.
 */
export class CheckpointEncoder {
  readonly #steps = new Map<string, EncodedSteps>();

  /** The stored text of `record`, the checkpoint at `key`. */
  encode(key: string, record: CheckpointRecord, redactor: Redactor): string {
    if (redactor.size !== 0) {
      this.#steps.delete(key);
      return encodeRecord(record, redactor);
    }
    const text = `${JSON.stringify({ ...record, completed_steps: STEPS_SLOT }, null, 2)}\n`;
    const at = text.indexOf(STEPS_NEEDLE);
    const steps = this.#entries(key, record.completed_steps);
    return `${text.slice(0, at)}\n  "completed_steps": ${steps}${text.slice(at + STEPS_NEEDLE.length)}`;
  }

  /** Forgets the steps of `key` (its checkpoint was removed). */
  forget(key: string): void {
    this.#steps.delete(key);
  }

  /** `names` as `JSON.stringify(names, null, 2)` writes it at depth 1 of a record. */
  #entries(key: string, names: readonly string[]): string {
    if (names.length === 0) return '[]';
    let known = this.#steps.get(key);
    // Re-inserted last: the map's first key is the one written longest ago.
    this.#steps.delete(key);
    if (known === undefined || !startsWith(names, known.names)) {
      const oldest = this.#steps.keys().next();
      if (this.#steps.size >= ENCODER_KEYS && oldest.done !== true)
        this.#steps.delete(oldest.value);
      known = { names: [], flat: '', recent: '', pieces: 0 };
    }
    this.#steps.set(key, known);
    for (let i = known.names.length; i < names.length; i++) {
      const name = names[i] as string;
      known.recent += `${i === 0 ? '' : ','}\n    ${JSON.stringify(name)}`;
      known.names.push(name);
      if (++known.pieces < PIECES) continue;
      // Appended to at every checkpoint, one string would grow into a chain of one piece per
      // step that each write walks again; so every PIECES entries the chain is made flat (V8
      // flattens a string in place on a character read), and the write walks at most PIECES.
      known.flat += known.recent;
      known.flat.charCodeAt(0);
      known.recent = '';
      known.pieces = 0;
    }
    return `[${known.flat}${known.recent}\n  ]`;
  }
}

/** Whether `list` begins with every element of `prefix`. */
function startsWith(list: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > list.length) return false;
  for (let i = 0; i < prefix.length; i++) if (list[i] !== prefix[i]) return false;
  return true;
}

/**
 * Parses and validates stored text.
 * @throws CheckpointError `STATE_CORRUPT` (not JSON, or not the schema) or `STATE_SCHEMA_TOO_NEW`.
 */
export function decodeRecord<S extends z.ZodType>(
  text: string,
  key: string,
  schema: S,
): z.output<S> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err: unknown) {
    throw new CheckpointError(CHECKPOINT_ERROR_CODES.CORRUPT, key, 'state file is not valid JSON', {
      cause: err,
    });
  }
  const version = (data as { state_version?: unknown } | null)?.state_version;
  if (typeof version === 'number' && version > STATE_VERSION) {
    throw new CheckpointError(
      CHECKPOINT_ERROR_CODES.SCHEMA_TOO_NEW,
      key,
      `state file has state_version ${version}; this runtime reads up to ${STATE_VERSION}`,
      { stateVersion: version },
    );
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new CheckpointError(
      CHECKPOINT_ERROR_CODES.CORRUPT,
      key,
      `state file does not match its format${where}: ${issue?.message ?? 'invalid'}`,
      { cause: parsed.error },
    );
  }
  return parsed.data;
}

/** Stored variables as MHL values (null-prototype objects). */
export function toVariables(data: Record<string, unknown>): MhlObject {
  return newObject(Object.entries(data).map(([k, v]) => [k, fromJson(v)] as const));
}

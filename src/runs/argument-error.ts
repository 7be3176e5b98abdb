/**
 * The run layer's refusal of a call's arguments: which field is wrong, a short message and, for
 * a workflow's inputs, the missing, undeclared and invalid ones. It knows no protocol: each
 * surface maps it (a tool result with `INVALID_ARGUMENT`, `-32602` for the `run/*` methods).
 */
import type { InputProblem } from '../catalog/index.js';

/** What was wrong with a workflow's inputs, by name (each list sorted or in schema order). */
export interface ArgumentDetails {
  readonly missing: readonly string[];
  readonly undeclared: readonly string[];
  readonly invalid: readonly InputProblem[];
}

/** The longest key echoed back: a hostile caller may send huge ones. */
const MAX_KEY_LENGTH = 40;

/** A caller's key as it may appear in a field path or a message: cut short when long. */
export function shortKey(key: string): string {
  return key.length > MAX_KEY_LENGTH ? `${key.slice(0, MAX_KEY_LENGTH)}…` : key;
}

/** A call's arguments were refused; `field` is the path of the offending one (`context.cwd`). */
export class ArgumentError extends Error {
  /** Stable: every surface reports this code, whatever its own wire format. */
  readonly code = 'INVALID_ARGUMENT';
  readonly field: string;
  readonly details: ArgumentDetails | undefined;

  constructor(field: string, message: string, details?: ArgumentDetails) {
    super(message);
    this.name = 'ArgumentError';
    this.field = field;
    this.details = details;
  }

  /** The same refusal for arguments that sit under `prefix` (e.g. `job.start`'s `arguments`). */
  within(prefix: string): ArgumentError {
    const field = this.field === '' ? prefix : `${prefix}.${this.field}`;
    return new ArgumentError(field, this.message, this.details);
  }
}

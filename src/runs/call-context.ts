/**
 * The reserved per-call `context` argument (seed 002: `cwd`, `timeout_ms`) and the check of a
 * workflow call's arguments, shared by synchronous calls, jobs and async runs. Refusals are
 * `ArgumentError`s naming the field; mapping them to a wire answer is the surfaces' job, so
 * nothing here knows a protocol.
 */
import { isAbsolute } from 'node:path';
import { validateArguments, type Workflow } from '../catalog/index.js';
import { ArgumentError, shortKey } from './argument-error.js';
import { type CallCredentials, parseCredentials, takesCredentials } from './credentials.js';

/** The server's side of a call's context: what applies when the caller says nothing. */
export interface CallDefaults {
  /** Working directory for calls without `context.cwd` (`--cwd`, else where the server started). */
  readonly defaultCwd: string;
  /** Bounds every call; a call's `context.timeout_ms` may lower it, never raise it. */
  readonly defaultTimeoutMs: number;
  /** `--require-cwd`: refuse calls without an absolute `context.cwd`. */
  readonly requireCwd: boolean;
}

/** A call's working directory and time limit, from its `context` and the server defaults. */
export interface CallContext {
  readonly cwd: string;
  readonly timeoutMs: number;
  /** Vault record ids by credential slot (`credentials.<slot>`), for `vault()`. */
  readonly credentials?: CallCredentials;
}

/** The keys `context` takes; anything else is refused, as its schema says. */
export const CONTEXT_KEYS: readonly string[] = ['cwd', 'timeout_ms'];

/**
 * A JSON Schema `pattern` that matches exactly the strings `isAbsolute` accepts on this
 * platform, so the advertised schema and the check below agree.
 */
export const ABSOLUTE_PATH_PATTERN = process.platform === 'win32' ? '^(?:[A-Za-z]:)?[\\\\/]' : '^/';

/** Parses a call's `context` (absent means none); throws `ArgumentError` naming the field. */
export function parseCallContext(context: unknown, defaults: CallDefaults): CallContext {
  if (context !== undefined && !isPlainObject(context)) {
    throw new ArgumentError('context', 'context must be an object: {cwd?, timeout_ms?}');
  }
  const extra = context === undefined ? [] : Object.keys(context).filter(undeclared);
  if (extra.length > 0) {
    const key = shortKey(extra[0] as string);
    throw new ArgumentError(
      `context.${key}`,
      `context takes only ${CONTEXT_KEYS.join(', ')}; got ${JSON.stringify(key)}`,
    );
  }
  const cwd = context?.['cwd'];
  if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) {
    throw new ArgumentError('context.cwd', 'context.cwd must be an absolute path');
  }
  if (cwd === undefined && defaults.requireCwd) {
    const field = context === undefined ? 'context' : 'context.cwd';
    throw new ArgumentError(field, 'this server requires an absolute context.cwd on every call');
  }
  const timeout = context?.['timeout_ms'];
  if (
    timeout !== undefined &&
    (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)
  ) {
    throw new ArgumentError(
      'context.timeout_ms',
      'context.timeout_ms must be a positive whole number',
    );
  }
  return {
    cwd: typeof cwd === 'string' ? cwd : defaults.defaultCwd,
    timeoutMs: Math.min(
      typeof timeout === 'number' ? timeout : defaults.defaultTimeoutMs,
      defaults.defaultTimeoutMs,
    ),
  };
}

/**
 * Checks a workflow call's arguments: the reserved `context`, then the declared inputs. Throws
 * `ArgumentError` naming the first offending field, with every missing, undeclared and invalid
 * input in its details.
 */
export function checkWorkflowCall(
  workflow: Workflow,
  args: Readonly<Record<string, unknown>>,
  defaults: CallDefaults,
): { inputs: Readonly<Record<string, unknown>>; call: CallContext } {
  const { context, ...rest } = args;
  let call = parseCallContext(context, defaults);
  let inputs = rest;
  if (takesCredentials(workflow)) {
    const { credentials, ...declared } = rest;
    inputs = declared;
    if (credentials !== undefined)
      call = { ...call, credentials: parseCredentials(credentials, workflow.credentialSlots) };
  }
  const check = validateArguments(workflow, inputs);
  if (!check.ok) {
    const { missing, undeclared, invalid, message } = check.error;
    const field = missing[0] ?? undeclared[0] ?? invalid[0]?.field ?? '';
    throw new ArgumentError(field, message, { missing, undeclared, invalid });
  }
  return { inputs: check.inputs, call };
}

function undeclared(key: string): boolean {
  return !CONTEXT_KEYS.includes(key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * How a failed run describes its error: a stable `code`, the position of the construct that
 * failed, the message without that position in front, and a hint saying what to do. The runner
 * raises `RunFailure` for failures of the run itself (a step timeout, a changed definition) and
 * the interpreter raises `LangError`; both end up as one `RunErrorInfo` here.
 *
 * Codes are matched by tools and tests, never the message text (see error-hints.ts).
 */
import { LangError, type Span } from '../../lang/index.js';
import { hintFor, RUN_ERROR_CODES } from '../interpreter/error-hints.js';
import { wrapMessage } from '../interpreter/wrap-message.js';

export type FailureKind =
  | 'step_failed'
  | 'step_timeout'
  | 'invalid_inputs'
  | 'definition_mismatch'
  | 'hook_failed'
  | 'canceled'
  | 'other';

/** What a failed run reports besides its message. */
export interface RunErrorInfo {
  /** A stable code: the `LangError` code, or one of RUN_ERROR_CODES. */
  readonly code: string;
  /** Where: the construct that failed, else the step, else the pipeline declaration. */
  readonly span: Span;
  /** The message without a position in front (the position is in `span`). */
  readonly summary: string;
  readonly hint: string;
}

/** A run-level failure with the kind the JSON output reports. */
export class RunFailure extends Error {
  readonly kind: FailureKind;
  readonly code: string;
  readonly step: string | undefined;
  readonly span: Span | undefined;
  readonly summary: string;

  constructor(
    kind: FailureKind,
    code: string,
    message: string,
    where: {
      step?: string | undefined;
      span?: Span | undefined;
      cause?: unknown;
      /** The message without inner positions, when it differs from `message`. */
      summary?: string;
    } = {},
  ) {
    super(message, where.cause === undefined ? undefined : { cause: where.cause });
    this.kind = kind;
    this.code = code;
    this.step = where.step;
    this.span = where.span;
    this.summary = where.summary ?? message;
  }
}

/** The failure of step `name` (at `span`) from what its body threw. */
export function stepFailure(name: string, span: Span, e: unknown): RunFailure {
  const subject = `step "${name}"`;
  const message = e instanceof Error ? e.message : String(e);
  const lang = e instanceof LangError ? e : undefined;
  return new RunFailure(
    'step_failed',
    lang?.code ?? RUN_ERROR_CODES.INTERNAL,
    wrapMessage(`${subject} failed: `, subject, message),
    {
      step: name,
      span: lang?.span ?? span,
      cause: e,
      // The summary drops the inner position: `span` says where.
      summary: wrapMessage(`${subject} failed: `, subject, lang?.summary ?? message),
    },
  );
}

/** Code, position, summary and hint of any error a run ended with; `fallback` when it has none. */
export function errorInfo(e: unknown, fallback: Span): RunErrorInfo {
  if (e instanceof RunFailure) {
    const cause = e.cause instanceof LangError ? e.cause : undefined;
    return {
      code: e.code,
      span: e.span ?? fallback,
      summary: e.summary,
      hint: cause?.hint ?? hintFor(e.code, cause),
    };
  }
  if (e instanceof LangError) {
    return {
      code: e.code,
      span: e.span ?? fallback,
      summary: e.summary,
      hint: e.hint ?? hintFor(e.code, e),
    };
  }
  const summary = e instanceof Error ? e.message : String(e);
  return { code: RUN_ERROR_CODES.INTERNAL, span: fallback, summary, hint: hintFor('INTERNAL') };
}

/**
 * The contract between the interpreter and native operations (`cmd.exec`, `fs.read`, …).
 *
 * A native receives its call's arguments as written (positional and named) and a context with
 * the run's cancellation signal, working directory, child environment, secret registry and
 * output sink. It returns an MHL value or throws a `LangError` without a span (the interpreter
 * adds the call's position). It must honour `signal` in everything that waits.
 */

import type { CallArgs, Value } from '../interpreter/values.js';
import type { Redactor } from '../services/redact.js';

export interface NativeContext {
  /** Aborted when the run is cancelled or the step times out. */
  readonly signal: AbortSignal;
  /** Relative paths resolve here; child processes start here. */
  readonly cwd: string;
  /** The complete environment for child processes (already allow-listed). */
  readonly childEnv: Readonly<Record<string, string>>;
  /** Where `env()` reads from (the process environment, minus removed secrets). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly redactor: Redactor;
  /** Program output: one line per call (`log`, `log.info`, …). Redacted by the sink. */
  readonly output: (line: string) => void;
}

export type NativeOp = (args: CallArgs, ctx: NativeContext) => Promise<Value>;

/** A native namespace: operation name → implementation. */
export type NativeNamespace = Readonly<Record<string, NativeOp>>;

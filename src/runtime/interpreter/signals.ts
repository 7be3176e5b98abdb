/**
 * How control leaves a statement early. `goto`, `break` and `return` are completion records
 * returned by `exec` (cheap, and invisible to `try/catch`); `pause()` unwinds as an exception
 * because it may be raised deep inside expressions, and `catch` lets it pass.
 */
import type { Value } from './values.js';

export type Completion =
  | { readonly kind: 'return'; readonly value: Value }
  | { readonly kind: 'goto'; readonly target: string }
  | { readonly kind: 'break'; readonly value: Value };

/** Raised by `pause(reason)`: the run stops, resumable at the start of the current step. */
export class PauseSignal extends Error {
  readonly reason: Value;
  constructor(reason: Value) {
    super('paused');
    this.name = 'PauseSignal';
    this.reason = reason;
  }
}

/**
 * Raised by `complete()`: the run ends normally, as a `break` would, from wherever it is called
 * (a step, a lifecycle hook, a function either calls). Like pause, `catch` lets it pass.
 */
export class CompleteSignal extends Error {
  constructor() {
    super('complete');
    this.name = 'CompleteSignal';
  }
}

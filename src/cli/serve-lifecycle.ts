/**
 * What `mhl serve mcp`'s two transports share once the catalog is served: the running parts
 * (`Served`), the two-phase shutdown hooks (`Lifecycle`) and the one shutdown budget.
 */
import type { Logger } from '../log/index.js';
import type { Dispatcher } from '../protocol/index.js';
import type { Metrics } from '../transport/index.js';
import type { Output } from './lint.js';

/** Shutdown gets this long, in all, to stop the work and close the transport. */
const SHUTDOWN_BUDGET_MS = 5000;

/**
 * What shutdown runs, in order: `drain` before the budget (admission closes; async runs may
 * finish, bounded by --drain-timeout), then `cancel` within it, beside closing the transport.
 */
export interface Lifecycle {
  readonly drain: (() => Promise<void>)[];
  readonly cancel: (() => Promise<void>)[];
}

/** What both transports' runners share. */
export interface Served {
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  readonly io: Output;
  readonly version: string;
  readonly workflows: readonly string[];
  readonly root: string;
  readonly metrics: Metrics;
  readonly lifecycle: Lifecycle;
}

/** Whether `work` settled within the shutdown budget. */
export async function withinBudget(work: Promise<unknown>): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((done) => {
    timer = setTimeout(() => done('timeout'), SHUTDOWN_BUDGET_MS);
    timer.unref();
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

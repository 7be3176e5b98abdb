/**
 * The one shutdown budget both transports share: draining aside, stopping the work and
 * closing the transport get this long in all (seed 002: one five-second budget, not
 * consecutive grace periods).
 */

/** Shutdown gets this long, in all, to stop the work and close the transport. */
const SHUTDOWN_BUDGET_MS = 5000;

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

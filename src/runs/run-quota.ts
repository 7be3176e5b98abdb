/**
 * Room for one more run under the quotas (issue 18): which finished runs of the caller's quota
 * key a start would forget, decided without forgetting anything, so a start that is refused for
 * any reason costs the caller nothing. Only a start makes room; a read (a claim, a rebuild from
 * the store) never forgets a run nor is refused for the quota: it may leave its key over the
 * quota, and the next start forgets as many finished runs as it takes to get back under. No I/O.
 */
import { busy, type Limits, overQuota } from './run-policy.js';
import type { HeldRun, RunTable } from './run-table.js';
import { TERMINAL_STATES } from './types.js';

/**
 * The finished runs of `quota` a start must forget to hold one more run, oldest first (none
 * while under the quota). Throws `QUOTA_EXCEEDED` when too few of them are finished and
 * `CAPACITY_FULL` when the server-wide table would still be full after forgetting them.
 */
export function roomFor<R extends HeldRun>(table: RunTable<R>, quota: string, limits: Limits): R[] {
  const over = table.countOf(quota).held + 1 - limits.runsPerCaller;
  const victims = table.oldestFinished(quota, over, (run) => TERMINAL_STATES.has(run.view.state));
  if (victims.length < over) throw overQuota('runs', limits.runsPerCaller, quota);
  if (table.size - victims.length >= limits.runs) throw busy('runs are held in memory');
  return victims;
}

/**
 * Refuses a run of `quota` that has to wait for a slot when its queue quota, or the server's
 * queue, is used up.
 */
export function checkQueue<R extends HeldRun>(
  table: RunTable<R>,
  quota: string,
  limits: Limits,
  queuedNow: number,
): void {
  if (table.countOf(quota).queued >= limits.queuedPerCaller)
    throw overQuota('queued', limits.queuedPerCaller, quota);
  if (queuedNow >= limits.queued) throw busy('runs are waiting for an execution slot');
}

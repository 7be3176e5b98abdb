/**
 * The batch bound (spec session-profile §3.9): how much one worker context (a scope) has been
 * handed, counted from history, against `context_tokens × 0.35 × 4` characters and at most 3
 * activities. The session's own agent, a scope's first activity and an activity the scope
 * already holds are exempt. Pure over the session.
 */
import type { SessionsSettings } from '../context.js';
import type { SessionFile } from '../store/session.schema.js';

export interface BatchReading {
  activities: number;
  max_activities: number;
  delivered_chars: number;
  budget_chars: number;
  may_continue: boolean;
}

/** What the scope holds now, and whether it may take `activity` too. */
export function batchReading(
  state: SessionFile,
  scope: string,
  activity: string,
  contextTokens: number,
  settings: SessionsSettings,
): BatchReading {
  const held = new Set<string>();
  let chars = 0;
  for (const e of state.history) {
    const d = e.data as Record<string, unknown> | undefined;
    if (d?.['agentId'] !== scope || d['delivery'] === 'unchanged') continue;
    if (e.type === 'activity_dispatched' && typeof d['chars'] === 'number') {
      if (e.activity !== undefined) held.add(e.activity);
      chars += d['chars'];
    } else if (e.type === 'technique_fetched' && typeof d['chars'] === 'number')
      chars += d['chars'];
    else if (
      e.type === 'resource_fetched' &&
      d['bundled'] !== true &&
      typeof d['chars'] === 'number'
    )
      chars += d['chars'];
  }
  const budget = Math.floor(contextTokens * settings.batchHeadroom * 4);
  const exempt = scope === state.agentId || held.size === 0 || held.has(activity);
  const fits = held.size < settings.batchMaxActivities && chars <= budget;
  return {
    activities: held.size,
    max_activities: settings.batchMaxActivities,
    delivered_chars: chars,
    budget_chars: budget,
    may_continue: exempt || fits,
  };
}

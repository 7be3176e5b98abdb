/**
 * What a viewer (the live runs page) reads of one held run: its view, its step timeline and
 * its log, read-only. The registry hands one out only to the run's owner (`RunRegistry.peek`).
 */
import type { LiveRun } from './run-leg.js';
import type { LogSlice } from './run-log.js';
import type { StepSpan } from './step-timeline.js';
import type { RunView } from './types.js';

export interface RunPeek {
  readonly view: RunView;
  readonly timeline: readonly StepSpan[];
  /** Steps forgotten from the front of the timeline (it keeps the latest). */
  readonly timelineDropped: number;
  /** The log from byte `since`, as `run/logs` reads it. */
  log(since: number): LogSlice;
  /** The cursor at the end of the log. */
  readonly logEnd: number;
}

/** A read-only look at `run` as it is now. */
export function peekOf(run: LiveRun): RunPeek {
  return {
    view: run.view,
    timeline: run.timeline.spans(),
    timelineDropped: run.timeline.dropped,
    log: (since) => run.log.read(since),
    logEnd: run.log.end,
  };
}

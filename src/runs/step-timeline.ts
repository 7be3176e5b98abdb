/**
 * A run's step timeline: each step it entered, when, and how that step ended, so a viewer can
 * show durations. Kept in memory beside the run view (not in the view itself, whose shape is
 * the wire answer of `run/status`), across the legs of one run: a resumed run enters its step
 * again as a new span. Bounded: a run looping through `goto` keeps its latest spans only.
 */

/** How a span ended: the next step began (`done`), or the run stopped in it. */
export type SpanOutcome = 'done' | 'failed' | 'canceled' | 'paused';

export interface StepSpan {
  readonly step: string;
  /** 1-based, as the run view counts. */
  readonly index: number;
  /** Epoch milliseconds. */
  readonly startedAt: number;
  /** Absent while the step runs. */
  readonly endedAt?: number;
  readonly outcome?: SpanOutcome;
}

/** Spans kept per run. */
export const MAX_SPANS = 200;

export class StepTimeline {
  #spans: StepSpan[] = [];
  /** Spans forgotten to stay within `MAX_SPANS`. */
  #dropped = 0;

  get dropped(): number {
    return this.#dropped;
  }

  /** The spans, oldest first; the last one open while a step runs. */
  spans(): readonly StepSpan[] {
    return this.#spans;
  }

  /** A step began at `at`: the open span (if any) ends `done`. */
  enter(step: string, index: number, at: number): void {
    this.end(at, 'done');
    this.#spans.push({ step, index, startedAt: at });
    if (this.#spans.length > MAX_SPANS) {
      this.#spans = this.#spans.slice(-MAX_SPANS);
      this.#dropped++;
    }
  }

  /** The leg stopped at `at` in the state `outcome`; no-op when no span is open. */
  end(at: number, outcome: SpanOutcome): void {
    const last = this.#spans.at(-1);
    if (last === undefined || last.endedAt !== undefined) return;
    this.#spans[this.#spans.length - 1] = { ...last, endedAt: at, outcome };
  }
}

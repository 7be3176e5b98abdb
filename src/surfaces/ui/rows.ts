/**
 * The runs page's markup for runs: one `<li>` per run (workflow, state, current step, the step
 * timeline with durations, error or pause reason, the log tail, cancel and resume buttons),
 * and the paginated list of one caller's runs. Every string that comes from a workflow or a run
 * goes through `html`, so it is text, never markup. Pure: no I/O, no clock but `now`.
 */
import type { RunPeek, RunView, StepSpan } from '../../runs/index.js';
import { formatDuration } from './format.js';
import { type Html, html } from './html.js';

/** Runs per page: 1,000 runs are 20 pages of a size a browser renders at once. */
export const PAGE_SIZE = 50;

/** Bytes of log shown per run when its row is rendered; the stream appends from there. */
export const LOG_TAIL_BYTES = 4096;

/** States a run can be cancelled in (`run/cancel` cancels a queued, working or paused run). */
const CANCELLABLE = new Set(['queued', 'working', 'paused']);

/** The log tail of a run: its last `LOG_TAIL_BYTES`, from a line start when one is near. */
export function logTail(peek: RunPeek): { text: string; end: number; cut: boolean } {
  const from = Math.max(0, peek.logEnd - LOG_TAIL_BYTES);
  const slice = peek.log(from);
  let text = slice.text;
  const cut = from > 0 || slice.dropped;
  if (cut) {
    // Starts mid-line (or mid-character): drop up to the first line break.
    const newline = text.indexOf('\n');
    if (newline >= 0 && newline < text.length - 1) text = text.slice(newline + 1);
  }
  return { text, end: slice.nextSince, cut };
}

function stepLabel(view: RunView): Html | string {
  if (view.step === undefined) return 'not started';
  const of = view.stepTotal !== undefined ? `/${view.stepTotal}` : '';
  return html`step ${view.stepIndex ?? '?'}${of}: <span class="step-name">${view.step}</span>`;
}

function span(step: StepSpan, now: number): Html {
  const open = step.endedAt === undefined;
  const took = (step.endedAt ?? now) - step.startedAt;
  const outcome = step.outcome ?? 'running';
  return html`<li class="span span-${outcome}" data-step="${step.step}" data-outcome="${outcome}"${
    open ? html` data-started="${step.startedAt}"` : ''
  }><span class="span-name">${step.step}</span> <span class="dur">${formatDuration(took)}</span></li>`;
}

function timeline(peek: RunPeek, now: number): Html {
  if (peek.timeline.length === 0) {
    // A run this process did not execute (rebuilt after a restart) has no timings: the steps
    // it reached are all that is known.
    const reached = peek.view.reached ?? [];
    if (reached.length === 0) return html``;
    return html`<ol class="timeline timeline-untimed">${reached.map(
      (step) =>
        html`<li class="span span-done" data-step="${step}" data-outcome="done"><span class="span-name">${step}</span></li>`,
    )}</ol>`;
  }
  const dropped = peek.timelineDropped > 0 ? html`<li class="span-more">…</li>` : '';
  return html`<ol class="timeline">${dropped}${peek.timeline.map((s) => span(s, now))}</ol>`;
}

function actions(view: RunView): Html {
  const cancel = CANCELLABLE.has(view.state);
  // A paused run resumes too; a queued or working one must be cancelled (or finish) first.
  const resume = view.resumable === true && view.state !== 'queued' && view.state !== 'working';
  return html`<div class="actions">${
    cancel
      ? html`<button type="button" data-action="cancel" data-run-id="${view.runId}">Cancel</button>`
      : ''
  }${
    resume
      ? html`<button type="button" data-action="resume" data-run-id="${view.runId}">Resume</button>`
      : ''
  }</div>`;
}

/** One run's row. `now` times the step still running. */
export function renderRun(peek: RunPeek, now: number): { html: Html; logEnd: number } {
  const { view } = peek;
  const tail = logTail(peek);
  const row = html`<li class="run" id="run-${view.runId}" data-run-id="${view.runId}" data-state="${view.state}">
<div class="run-head"><span class="tool">${view.tool}</span> <span class="state state-${view.state}">${view.state}</span> <span class="step">${stepLabel(view)}</span> <code class="run-id">${view.runId}</code></div>
<div class="run-times">started <time datetime="${view.startedAt}">${view.startedAt}</time>, updated <time datetime="${view.updatedAt}">${view.updatedAt}</time></div>
${timeline(peek, now)}${view.error !== undefined ? html`<p class="error">${view.error}</p>` : ''}${
  view.reason !== undefined ? html`<p class="reason">${view.reason}</p>` : ''
}<pre class="log" data-log-end="${tail.end}">${tail.cut ? '…\n' : ''}${tail.text}</pre>
${actions(view)}</li>`;
  return { html: row, logEnd: tail.end };
}

/** One page of a caller's runs, newest first, with what the live stream needs to continue. */
export interface RenderedPage {
  readonly html: Html;
  readonly page: number;
  readonly pages: number;
  readonly total: number;
  /** Run ids on this page, each with the log cursor its row was rendered at. */
  readonly shown: ReadonlyMap<string, number>;
  /** Every run id of the caller at render time (a view change of another id is a new run). */
  readonly known: ReadonlySet<string>;
}

/** Newest first (by start time, then id, so the order is total). */
function newestFirst(a: RunView, b: RunView): number {
  if (a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? 1 : -1;
  return a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0;
}

/**
 * Renders page `page` (1-based, clamped to the pages there are) of `views`, the caller's runs
 * as `run/list` lists them; `peek` reads each shown run's timeline and log.
 */
export function renderPage(
  views: readonly RunView[],
  peek: (runId: string) => RunPeek | undefined,
  page: number,
  now: number,
): RenderedPage {
  const sorted = [...views].sort(newestFirst);
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
  const current = Math.min(Math.max(1, page), pages);
  const slice = sorted.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  const shown = new Map<string, number>();
  const rows: Html[] = [];
  for (const view of slice) {
    const found = peek(view.runId);
    if (found === undefined) continue;
    const row = renderRun(found, now);
    rows.push(row.html);
    shown.set(view.runId, row.logEnd);
  }
  const body =
    sorted.length === 0
      ? html`<p class="empty">No runs yet. Start one with <code>run/start</code> or the <code>mhl_run_start</code> tool.</p>`
      : html`<ol class="runs">${rows}</ol>`;
  const content = html`<p class="summary" data-total="${sorted.length}" data-page="${current}" data-pages="${pages}">${sorted.length} ${sorted.length === 1 ? 'run' : 'runs'}, page ${current} of ${pages}</p>
${pager(current, pages)}${body}${pages > 1 ? pager(current, pages) : ''}`;
  return {
    html: content,
    page: current,
    pages,
    total: sorted.length,
    shown,
    known: new Set(sorted.map((v) => v.runId)),
  };
}

function pager(page: number, pages: number): Html | string {
  if (pages <= 1) return '';
  const link = (to: number, text: string, rel: string) =>
    to === page || to < 1 || to > pages
      ? html`<span class="page-off">${text}</span>`
      : html`<a href="/ui?page=${to}" data-page="${to}" rel="${rel}">${text}</a>`;
  return html`<nav class="pager" aria-label="pages">${link(1, 'First', 'first')} ${link(page - 1, 'Previous', 'prev')} <span class="page-at">${page} / ${pages}</span> ${link(page + 1, 'Next', 'next')} ${link(pages, 'Last', 'last')}</nav>`;
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFragment } from 'parse5';
import type { RunPeek, RunView, StepSpan } from '../../../src/runs/index.js';
import { formatDuration } from '../../../src/surfaces/ui/format.js';
import { escapeHtml, Html, html } from '../../../src/surfaces/ui/html.js';
import { PAGE_SIZE, renderPage, renderRun } from '../../../src/surfaces/ui/rows.js';

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)",
  '</pre></li></ol><script>x</script>',
  '&amp; &lt; already escaped',
  'ünïcödé ✓ 🚀 \u202eevil\u202c',
  '`${template}`',
];

function peekOf(view: RunView, log = '', timeline: StepSpan[] = []): RunPeek {
  const bytes = Buffer.from(log, 'utf8');
  return {
    view,
    timeline,
    timelineDropped: 0,
    logEnd: bytes.length,
    log: (since) => ({
      text: bytes.subarray(Math.min(since, bytes.length)).toString('utf8'),
      nextSince: bytes.length,
      dropped: false,
    }),
  };
}

function view(fields: Partial<RunView> = {}): RunView {
  return {
    runId: 'a'.repeat(32),
    tool: 'Flow',
    state: 'working',
    startedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:01.000Z',
    ...fields,
  };
}

interface Node {
  nodeName: string;
  value?: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
}

function walk(node: Node, out: Node[] = []): Node[] {
  out.push(node);
  for (const child of node.childNodes ?? []) walk(child, out);
  return out;
}

/** The text of every text node, joined, as a browser's textContent would read it. */
function textOf(node: Node): string {
  return walk(node)
    .filter((n) => n.nodeName === '#text')
    .map((n) => n.value ?? '')
    .join('');
}

describe('runs page markup', () => {
  it('escapes every interpolated string, and only fragments pass as markup', () => {
    assert.equal(
      escapeHtml(`<a href="x" title='y'>&</a>`),
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    const value = '<b>';
    assert.equal(
      html`<p title="${value}">${value}${new Html('<i>ok</i>')}</p>`.text,
      '<p title="&lt;b&gt;">&lt;b&gt;<i>ok</i></p>',
    );
    assert.equal(html`${[value, 1, null, undefined, false]}`.text, '&lt;b&gt;1');
  });

  for (const hostile of HOSTILE) {
    it(`renders ${JSON.stringify(hostile)} from a workflow as text only`, () => {
      const peek = peekOf(
        view({
          tool: hostile,
          step: hostile,
          stepIndex: 1,
          stepTotal: 2,
          error: hostile,
          reason: hostile,
          state: 'paused',
          resumable: true,
        }),
        `${hostile}\n`,
        [{ step: hostile, index: 1, startedAt: 0, endedAt: 5, outcome: 'paused' }],
      );
      const fragment = parseFragment(renderRun(peek, 10).html.text) as unknown as Node;
      const nodes = walk(fragment);
      const tags = new Set(nodes.map((n) => n.nodeName).filter((n) => !n.startsWith('#')));
      for (const tag of tags) {
        assert.ok(
          ['li', 'div', 'span', 'code', 'time', 'ol', 'p', 'pre', 'button'].includes(tag),
          `unexpected <${tag}>`,
        );
      }
      for (const node of nodes) {
        for (const attr of node.attrs ?? []) assert.doesNotMatch(attr.name, /^on|^style$/);
      }
      const text = textOf(fragment);
      // Tool, step label, timeline, error, reason and log each show it whole.
      assert.ok(text.split(hostile).length - 1 >= 5, text);
      const span = nodes.find((n) => n.attrs?.some((a) => a.name === 'data-step'));
      assert.equal(span?.attrs?.find((a) => a.name === 'data-step')?.value, hostile);
    });
  }

  it('offers cancel while a run can be cancelled, and resume once it can be resumed', () => {
    const buttons = (v: RunView) =>
      [...renderRun(peekOf(v), 0).html.text.matchAll(/data-action="(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(buttons(view({ state: 'working' })), ['cancel']);
    assert.deepEqual(buttons(view({ state: 'queued' })), ['cancel']);
    assert.deepEqual(buttons(view({ state: 'paused', resumable: true })), ['cancel', 'resume']);
    assert.deepEqual(buttons(view({ state: 'canceled', resumable: true })), ['resume']);
    assert.deepEqual(buttons(view({ state: 'failed' })), []);
    assert.deepEqual(buttons(view({ state: 'completed' })), []);
  });

  it('shows durations of ended steps and the time so far of the running one', () => {
    const peek = peekOf(view({ step: 'B', stepIndex: 2, stepTotal: 2 }), '', [
      { step: 'A', index: 1, startedAt: 1000, endedAt: 1850, outcome: 'done' },
      { step: 'B', index: 2, startedAt: 1850 },
    ]);
    const out = renderRun(peek, 14_250).html.text;
    assert.match(
      out,
      /data-step="A" data-outcome="done"><span class="span-name">A<\/span> <span class="dur">850 ms/,
    );
    assert.match(out, /data-step="B" data-outcome="running" data-started="1850">.*12\.4 s/);
  });

  it('pages 1,000 runs newest first, 50 a page, clamping past the end', () => {
    const views = Array.from({ length: 1000 }, (_, i) =>
      view({
        runId: i.toString(16).padStart(32, '0'),
        startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      }),
    );
    const peek = (id: string) => {
      const found = views.find((v) => v.runId === id);
      return found && peekOf(found);
    };
    const first = renderPage(views, peek, 1, 0);
    assert.equal(first.pages, 20);
    assert.equal(first.total, 1000);
    assert.equal(first.shown.size, PAGE_SIZE);
    assert.ok(first.shown.has((999).toString(16).padStart(32, '0')), 'the newest is on page 1');
    const last = renderPage(views, peek, 99, 0);
    assert.equal(last.page, 20);
    assert.ok(last.shown.has('0'.repeat(32)), 'the oldest is on the last page');
    assert.equal(last.known.size, 1000);
    assert.match(first.html.text, /href="\/ui\?page=2" data-page="2" rel="next"/);
    const empty = renderPage([], peek, 1, 0);
    assert.equal(empty.pages, 1);
    assert.match(empty.html.text, /No runs yet/);
  });

  it('writes durations as a person reads them', () => {
    const table: [number, string][] = [
      [-5, '0 ms'],
      [0, '0 ms'],
      [999, '999 ms'],
      [1000, '1.0 s'],
      [59_949, '59.9 s'],
      [61_000, '1m 01s'],
      [3_599_000, '59m 59s'],
      [3_600_000, '1h 00m'],
      [7_830_000, '2h 10m'],
    ];
    for (const [ms, text] of table) assert.equal(formatDuration(ms), text, `${ms} ms`);
  });
});

/**
 * The runs page's stylesheet (`GET /ui/app.css`), served as is: no build step, no CDN, and a
 * separate file so the content security policy can forbid inline style.
 */
export const APP_CSS = `
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #5d6470; --bg: #f7f7f8; --card: #fff;
  --line: #d9dbe0; --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; --run: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --muted: #9aa0aa; --bg: #16181c;
  --card: #1f2227; --line: #33373e; --ok: #3fb950; --bad: #f85149; --warn: #d29922; --run: #58a6ff; } }
* { box-sizing: border-box; }
/* The hidden attribute wins over every display rule below (the token form is a flex box). */
[hidden] { display: none !important; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header.top { display: flex; gap: 1em; align-items: baseline; padding: 0.8em 1.2em;
  border-bottom: 1px solid var(--line); background: var(--card); }
h1 { font-size: 1.2em; margin: 0; }
.live { font-size: 0.85em; color: var(--muted); }
.live[data-live="open"] { color: var(--ok); }
.live[data-live="open"]::before { content: "\\25CF  "; }
main, .token-form, .notice { max-width: 70em; margin: 1em auto; padding: 0 1.2em; }
.token-form { display: flex; flex-wrap: wrap; gap: 0.6em; align-items: center; }
.token-form label { flex-basis: 100%; }
.token-form input { flex: 1; min-width: 16em; padding: 0.4em; }
.summary { color: var(--muted); }
.pager { display: flex; gap: 0.8em; margin: 0.6em 0; }
.page-off { color: var(--muted); }
ol.runs { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.7em; }
li.run { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 0.7em 0.9em; }
.run-head { display: flex; flex-wrap: wrap; gap: 0.7em; align-items: baseline; }
.tool { font-weight: 600; }
.run-id { color: var(--muted); font-size: 0.8em; margin-left: auto; }
.run-times { color: var(--muted); font-size: 0.8em; }
.state { font-size: 0.8em; padding: 0.05em 0.5em; border-radius: 1em; border: 1px solid currentColor; }
.state-completed { color: var(--ok); } .state-failed { color: var(--bad); }
.state-canceled { color: var(--muted); } .state-paused { color: var(--warn); }
.state-working, .state-queued, .state-pending { color: var(--run); }
ol.timeline { list-style: none; display: flex; flex-wrap: wrap; gap: 0.3em; padding: 0; margin: 0.5em 0; }
.span { border: 1px solid var(--line); border-left: 4px solid var(--ok); padding: 0.1em 0.5em; border-radius: 3px; font-size: 0.85em; }
.span-running { border-left-color: var(--run); } .span-failed { border-left-color: var(--bad); }
.span-canceled { border-left-color: var(--muted); } .span-paused { border-left-color: var(--warn); }
.dur { color: var(--muted); }
pre.log { max-height: 12em; overflow: auto; background: var(--bg); border: 1px solid var(--line);
  padding: 0.4em 0.6em; margin: 0.4em 0; font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.log:empty { display: none; }
.error { color: var(--bad); white-space: pre-wrap; overflow-wrap: anywhere; }
.reason { color: var(--warn); white-space: pre-wrap; overflow-wrap: anywhere; }
.actions { display: flex; gap: 0.5em; }
button { font: inherit; padding: 0.2em 0.8em; cursor: pointer; }
footer { color: var(--muted); text-align: center; font-size: 0.8em; margin: 2em 0; }
`;

/**
 * The live runs page (`GET /ui`) in a real headless Chromium against the built server: runs
 * started over MCP appear with their steps and durations as they happen (the stream, not a
 * reload), a run is cancelled and a paused one resumed from the page's buttons (through
 * `run/cancel` and `run/resume` on `/mcp`), hostile workflow text stays text, the token is
 * asked for once and kept in session storage only, one principal never sees another's runs,
 * and 1,000 runs page. The workflows wait on FIFOs and files the test controls, never on time.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { artifact, needChromium, openBrowser } from '../helpers/browser.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { call, send, serverStarter } from '../helpers/http-server.js';

const FOLDER = resolve(REPO_ROOT, 'test/fixtures/ui');
const TOKEN = 'ui-test-token-5f0c';
const start = serverStarter(FOLDER);

/** `MHL_UI_DOCS_SCREENSHOTS=1` also copies the screenshots into docs/images for docs/ui.md. */
function keep(name: string, path: string): void {
  if (process.env['MHL_UI_DOCS_SCREENSHOTS'] !== '1') return;
  const docs = resolve(REPO_ROOT, 'docs/images');
  mkdirSync(docs, { recursive: true });
  copyFileSync(path, join(docs, name));
}

/** A scratch folder with the FIFO `gate` a Stepper run blocks on. */
function gated(): string {
  const dir = tempDir();
  const made = spawnSync('mkfifo', ['-m', '600', join(dir, 'gate')]);
  assert.equal(made.status, 0, 'mkfifo');
  return dir;
}

async function startRun(
  port: number,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<string> {
  const view = await call(
    port,
    'run/start',
    { name, arguments: { ...args, context: { cwd: REPO_ROOT } } },
    headers,
  );
  return view['runId'] as string;
}

/** Waits until the page shows run `runId` in `state` (the page changes only through its stream). */
async function rowIn(page: Page, runId: string, state: string): Promise<void> {
  await page.locator(`#run-${runId}[data-state="${state}"]`).waitFor({ timeout: 15_000 });
}

async function live(page: Page): Promise<void> {
  await page.locator('#live[data-live="open"]').waitFor({ timeout: 15_000 });
}

async function text(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).textContent()) ?? '';
}

/** A port free now (bound on 0, then released), for a server restarted on the same one. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function skipWithout(t: TestContext): boolean {
  return !needChromium(t);
}

describe('the live runs page in Chromium', () => {
  it('shows steps as they happen, cancels, resumes, and keeps hostile text as text', async (t) => {
    if (skipWithout(t)) return;
    const server = start();
    const port = await server.ready;
    const first = gated();
    const firstId = await startRun(port, 'Stepper', { dir: first, label: '"<i>x</i>' });
    const context = await openBrowser(t);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const response = await page.goto(`http://127.0.0.1:${port}/ui`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    await live(page);

    // The first run reaches Wait: the timeline shows Prepare done with a duration.
    const row = `#run-${firstId}`;
    await page.locator(`${row} .span[data-step="Wait"][data-outcome="running"]`).waitFor();
    assert.match(await text(page, `${row} .span[data-step="Prepare"] .dur`), /\d+(\.\d)? (ms|s)/);
    assert.match(await text(page, `${row} .step`), /step 2\/3: Wait/);
    const log = await text(page, `${row} pre.log`);
    assert.ok(log.includes('<script>window.pwned = 1</script>'), log);
    assert.ok(log.includes('"double" \'single\' & ünïcödé ✓ 🚀 "<i>x</i>'), log);
    assert.ok(log.includes('<img src=x onerror="window.pwned = 2">'), log);

    // Released through its FIFO, it finishes: the log streams in and every step has a time.
    await writeFile(join(first, 'gate'), 'open <sesame>\n');
    await rowIn(page, firstId, 'completed');
    const done = await text(page, `${row} pre.log`);
    assert.ok(done.includes('the gate said open <sesame>'), done);
    assert.ok(done.includes('finished </pre><script>window.pwned = 3</script>'), done);
    assert.equal(await page.locator(`${row} .span[data-outcome="done"]`).count(), 3);

    // A run started while the page is open appears without a reload; Cancel cancels it.
    const second = gated();
    const secondId = await startRun(port, 'Stepper', { dir: second });
    await page.locator(`#run-${secondId} .span[data-step="Wait"]`).waitFor();
    await page.locator(`#run-${secondId} button[data-action="cancel"]`).click();
    await rowIn(page, secondId, 'canceled');
    assert.equal(
      (await call(port, 'run/status', { runId: secondId }))['state'],
      'canceled',
      'run/status agrees with the page',
    );
    assert.equal(
      await page.locator(`#run-${secondId} .span[data-step="Wait"]`).getAttribute('data-outcome'),
      'canceled',
    );

    // A paused run shows its reason as text; once approved, Resume carries it to the end.
    const approvalDir = tempDir();
    const approvalId = await startRun(port, 'Approval', { dir: approvalDir });
    await rowIn(page, approvalId, 'paused');
    assert.equal(
      await text(page, `#run-${approvalId} .reason`),
      'needs approval: <em>"sign here"</em> & \'there\' → ✍',
    );
    const brokenId = await startRun(port, 'Breaks', {});
    await rowIn(page, brokenId, 'failed');
    assert.match(
      await text(page, `#run-${brokenId} .error`),
      /<script>window\.pwned = 4<\/script>/,
    );
    const holdDir = gated();
    const heldId = await startRun(port, 'Stepper', { dir: holdDir });
    await page.locator(`#run-${heldId} .span[data-step="Wait"]`).waitFor();
    const shot = artifact('ui-runs.png');
    await page.screenshot({ path: shot, fullPage: true });
    keep('ui-runs.png', shot);

    writeFileSync(join(approvalDir, 'approved'), 'yes');
    await page.locator(`#run-${approvalId} button[data-action="resume"]`).click();
    await rowIn(page, approvalId, 'completed');
    assert.ok((await text(page, `#run-${approvalId} pre.log`)).includes('shipped'));

    // Nothing the workflows wrote ran, and the policy stops a script injected inline.
    assert.equal(await page.evaluate('window.pwned'), undefined);
    assert.equal(await page.locator('#runs script').count(), 0);
    const inline = await page.evaluate(
      "(() => { const s = document.createElement('script'); s.textContent = 'window.inlineRan = 1'; document.body.append(s); return window.inlineRan; })()",
    );
    assert.equal(inline, undefined, 'the content security policy refused the inline script');
    assert.deepEqual(errors, []);
    await writeFile(join(holdDir, 'gate'), 'bye\n');
  });

  it('asks for the token once, keeps it in session storage, and shows only the caller’s runs', async (t) => {
    if (skipWithout(t)) return;
    const server = start(['--token', TOKEN, '--principal-header', 'x-principal']);
    const port = await server.ready;
    const auth = { authorization: `Bearer ${TOKEN}` };
    const aliceDir = gated();
    const aliceId = await startRun(
      port,
      'Stepper',
      { dir: aliceDir },
      { ...auth, 'x-principal': 'alice' },
    );
    const bobId = await startRun(port, 'Breaks', {}, { ...auth, 'x-principal': 'bob' });
    // The principal header is what a proxy in front of the server would add.
    const context = await openBrowser(t, { headers: { 'x-principal': 'alice' } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/ui`);
    await page.locator('#token-form').waitFor();
    assert.ok(!(await page.content()).includes(aliceId), 'no run data before the token');
    const prompt = artifact('ui-token.png');
    await page.screenshot({ path: prompt, clip: { x: 0, y: 0, width: 1100, height: 200 } });
    keep('ui-token.png', prompt);

    await page.fill('#token-input', 'wrong-token');
    await page.click('#token-form button[type="submit"]');
    await page.locator('#token-error:not([hidden])').waitFor();
    assert.equal(await text(page, '#token-error'), 'That token was refused.');
    assert.equal(await page.evaluate("sessionStorage.getItem('mhl-ui-token')"), null);

    await page.fill('#token-input', TOKEN);
    await page.click('#token-form button[type="submit"]');
    await live(page);
    await page.locator(`#run-${aliceId} .span[data-step="Wait"]`).waitFor();
    assert.equal(await page.locator(`#run-${bobId}`).count(), 0, 'bob’s run is not alice’s to see');
    assert.ok(!(await page.content()).includes(bobId));
    assert.equal(await page.evaluate("sessionStorage.getItem('mhl-ui-token')"), TOKEN);
    assert.ok(!page.url().includes(TOKEN), page.url());
    assert.equal(await page.inputValue('#token-input'), '', 'the field is emptied');

    // A reload in the same tab asks nothing; Cancel goes through /mcp with the token.
    await page.reload();
    await live(page);
    assert.equal(await page.locator('#token-form').isHidden(), true);
    await page.locator(`#run-${aliceId} button[data-action="cancel"]`).click();
    await rowIn(page, aliceId, 'canceled');
    const status = await call(
      port,
      'run/status',
      { runId: aliceId },
      { ...auth, 'x-principal': 'alice' },
    );
    assert.equal(status['state'], 'canceled');

    // A new tab (a new session) asks again; Forget token drops it from this one.
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${port}/ui`);
    await other.locator('#token-form').waitFor();
    await page.click('#forget-token');
    await page.locator('#token-form').waitFor();
    assert.equal(await page.evaluate("sessionStorage.getItem('mhl-ui-token')"), null);
  });

  it('reconnects to a restarted server and goes live again', async (t) => {
    if (skipWithout(t)) return;
    const port = await freePort();
    const first = start(['--port', String(port)]);
    assert.equal(await first.ready, port);
    const context = await openBrowser(t);
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/ui`);
    await live(page);
    assert.equal(await first.stop('SIGTERM'), 0, 'an open page does not hold shutdown up');
    await page.locator('#live[data-live="off"]').waitFor();
    const second = start(['--port', String(port)]);
    await second.ready;
    const runId = await startRun(port, 'Breaks', {});
    await live(page);
    await rowIn(page, runId, 'failed');
  });

  it('pages through 1,000 runs', async (t) => {
    if (skipWithout(t)) return;
    const server = start();
    const port = await server.ready;
    const ids: string[] = [];
    // Sixteen starts in flight at a time: quick runs, well inside the per-caller queue.
    for (let n = 0; n < 1000; n += 16) {
      const batch = Array.from({ length: Math.min(16, 1000 - n) }, (_, i) =>
        startRun(port, 'Quick', { n: n + i }),
      );
      ids.push(...(await Promise.all(batch)));
    }
    // The server's share: rendering the first page of 1,000 runs into the document.
    const asked = performance.now();
    const document = await send(port, { method: 'GET', path: '/ui' });
    t.diagnostic(
      `GET /ui with 1000 runs (server, ${document.text.length} bytes): ${Math.round(performance.now() - asked)} ms`,
    );
    assert.equal(document.status, 200);
    const context = await openBrowser(t);
    const page = await context.newPage();
    const began = performance.now();
    await page.goto(`http://127.0.0.1:${port}/ui`);
    await live(page);
    const loadMs = performance.now() - began;
    t.diagnostic(`GET /ui with 1000 runs, live: ${Math.round(loadMs)} ms`);
    assert.match(await text(page, '.summary'), /^1000 runs, page 1 of 20$/);
    assert.equal(await page.locator('li.run').count(), 50);
    const firstPage = await page
      .locator('li.run')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')));
    await page.locator('nav.pager a[rel="next"]').first().click();
    await page.waitForURL(/page=2$/);
    await live(page);
    assert.match(await text(page, '.summary'), /page 2 of 20$/);
    const secondPage = await page
      .locator('li.run')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')));
    assert.equal(secondPage.length, 50);
    assert.equal(
      secondPage.filter((id) => firstPage.includes(id)).length,
      0,
      'pages do not overlap',
    );
    await page.locator('nav.pager a[rel="last"]').first().click();
    await page.waitForURL(/page=20$/);
    await live(page);
    const lastPage = await page
      .locator('li.run')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')));
    assert.equal(lastPage.length, 50);
    // Newest first: the first run started is among the oldest, on the last page.
    assert.ok(lastPage.includes(ids[0] as string), 'the first run is on the last page');
  });
});

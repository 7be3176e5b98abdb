/**
 * A real headless Chromium for the browser tests (Debian's `chromium` package, driven by
 * playwright-core): each context is a fresh profile in its own temporary folder, closed after
 * the test. Without a Chromium the test is skipped with the reason, except under `CI=true`,
 * where that is a failure: CI must not pass the browser tests by not running them.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';
import { REPO_ROOT } from './cli.js';

/** Where Debian puts it; `MHL_TEST_CHROMIUM` names another. */
export const CHROMIUM = process.env['MHL_TEST_CHROMIUM'] ?? '/usr/bin/chromium';

/** Where the tests leave screenshots (CI keeps this folder as an artifact). */
export const ARTIFACTS = resolve(REPO_ROOT, 'test-artifacts');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * True when Chromium is there; otherwise skips `t` (outside CI) or throws (under CI).
 */
export function needChromium(t: TestContext): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;
  if (process.env['CI'] === 'true') throw new Error(`CI must run the browser tests: ${why}`);
  t.skip(why);
  return false;
}

/** A fresh browser profile; closed, and its folder removed, when `t` ends. */
export async function openBrowser(
  t: TestContext,
  options: { headers?: Record<string, string> } = {},
): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'mhl-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1100, height: 900 },
    ...(options.headers ? { extraHTTPHeaders: options.headers } : {}),
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** The path of a screenshot `name` in the artifacts folder (made if need be). */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/** Runs the built `mhl` CLI as a user would, in a child process. */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const CLI = resolve(REPO_ROOT, 'dist/bin/mhl.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns `node dist/bin/mhl.js …args` and resolves when it exits. */
export function runCli(
  args: readonly string[],
  options: { cwd?: string; input?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      stdio: 'pipe',
      env: { ...process.env, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A fresh temporary directory for one test. */
export function tempDir(prefix = 'mhl-test-'): string {
  return mkdtempSync(resolve(tmpdir(), prefix));
}

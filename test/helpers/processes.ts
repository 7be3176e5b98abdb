/** Process probes for tests: liveness by pid, and bounded polling for an event. */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as dead). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: no such process.
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  const text = readFileSync(stat, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
}

/** Polls `check` every 10 ms until it returns a value, failing after `limitMs`. */
export async function pollFor<T>(
  what: string,
  check: () => T | undefined,
  limitMs = 5000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

/** Reads a pid a child wrote to `file`, once the file holds a complete line. */
export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  return text.endsWith('\n') ? Number(text.trim()) : undefined;
}

/** Process probes for tests: liveness by pid, and pid files (wait on them with `poll.ts`). */
import { existsSync, readFileSync } from 'node:fs';

/** Whether `pid` is a live process (a zombie awaiting its reaper counts as dead). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: no such process.
    return false;
  }
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // Reaped since the signal went through; or a system without /proc, where the signal is all
    // there is to go by.
    return !existsSync('/proc/self/stat');
  }
  return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
}

/** Reads a pid a child wrote to `file`, once the file holds a complete line. */
export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  return text.endsWith('\n') ? Number(text.trim()) : undefined;
}

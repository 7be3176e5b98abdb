/**
 * How the runs page writes times: durations as a person reads them (`850 ms`, `12.4 s`,
 * `3m 05s`, `2h 10m`). Shared by the server's render and mirrored by the page's script for
 * the step that is still running.
 */

/** A duration in milliseconds as short text; negative (clock skew) reads as 0 ms. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1000) return `${whole} ms`;
  if (whole < 60_000) return `${(whole / 1000).toFixed(1)} s`;
  const seconds = Math.floor(whole / 1000);
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** Waiting on async runs (`run/*`) of a server started with test/helpers/http-server.ts. */
import { call } from './http-server.js';
import { until } from './poll.js';

/** Polls `run/status` until the run leaves queued/working, for up to 30 s; resolves its view. */
export function settle(
  port: number,
  runId: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return until(
    async () => {
      const view = await call(port, 'run/status', { runId }, headers);
      return view['state'] === 'working' || view['state'] === 'queued' ? undefined : view;
    },
    { what: `run ${runId} to settle`, timeoutMs: 30_000 },
  );
}

/**
 * The process's own health on `/metrics`: resident memory, open file descriptors, live handles
 * and event-loop delay. These are what a leak or a blocked loop shows first, so an operator (and
 * `npm run soak`) can watch them without attaching a debugger.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Metrics } from '../transport/index.js';

/** Registers the process gauges; the returned function stops the event-loop sampler. */
export function registerProcessMetrics(metrics: Metrics): () => void {
  // 10 ms resolution: fine enough to see a stall, cheap enough to leave on.
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  metrics.register({
    name: 'process_resident_memory_bytes',
    type: 'gauge',
    help: 'Resident set size.',
    read: () => process.memoryUsage.rss(),
  });
  metrics.register({
    name: 'nodejs_heap_used_bytes',
    type: 'gauge',
    help: 'V8 heap in use (garbage included until the next collection).',
    read: () => process.memoryUsage().heapUsed,
  });
  metrics.register({
    name: 'process_open_fds',
    type: 'gauge',
    help: 'Open file descriptors (-1 where /proc is missing).',
    read: openFds,
  });
  metrics.register({
    name: 'nodejs_active_resources',
    type: 'gauge',
    help: 'Handles and requests keeping the event loop alive (sockets, timers, files).',
    read: () => process.getActiveResourcesInfo().length,
  });
  metrics.register({
    name: 'nodejs_eventloop_delay_seconds',
    type: 'gauge',
    label: 'quantile',
    help: 'Event-loop delay since the previous scrape, by quantile.',
    read: () => {
      // Since the previous scrape, as Prometheus clients usually report it; an empty window
      // (no sample yet) reads 0, not NaN.
      const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
      const value = {
        '0.5': seconds(delay.percentile(50)),
        '0.99': seconds(delay.percentile(99)),
        max: seconds(delay.max),
      };
      delay.reset();
      return value;
    },
  });
  return () => delay.disable();
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

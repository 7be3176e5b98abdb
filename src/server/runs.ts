/**
 * Async runs as a surface, on every transport: where run state lives (`--state-dir` /
 * `MHL_SERVE_STATE_DIR`, else a temporary directory removed at shutdown), the run registry,
 * its sweep (every minute, of runs finished longer ago than the terminal TTL), its metrics and
 * its two shutdown phases (drain for `--drain-timeout`, then cancel).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Catalog } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import {
  type Admission,
  checkWorkflowCall,
  ownerOf,
  type RunChangeFeed,
  RunRegistry,
} from '../runs/index.js';
import { DirStore, probeWritable, storeCan } from '../store/index.js';
import {
  type PipelineSurfaceOptions,
  runSurface,
  type Surface,
  type ToolDefinition,
} from '../surfaces/index.js';
import type { Metrics } from '../transport/index.js';
import type { ServeStore } from './state-store.js';

/** How often finished runs past their TTL are swept. */
const SWEEP_INTERVAL_MS = 60_000;

export interface RunsOptions {
  /** Absolute `--state-dir`; undefined for a temporary one. */
  readonly stateDir: string | undefined;
  /** The store `--store` or an `extension store` opened; `stateDir` is then unused for runs. */
  readonly shared?: ServeStore | undefined;
  readonly terminalTtlMs: number | undefined;
  /** `--max-runs-per-caller` and `--max-queued-per-caller`. */
  readonly limits: { readonly runsPerCaller: number; readonly queuedPerCaller: number };
  /** Which transport serves the runs (how loudly a temporary state directory is reported). */
  readonly transport: 'stdio' | 'http';
  /** `--drain-timeout`: how long working runs may finish at shutdown. */
  readonly drainMs: number;
  readonly catalog: Catalog;
  readonly admission: Admission;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly pipelines: PipelineSurfaceOptions;
  /** Whether a tool name is already published (a workflow's name wins over a run tool's). */
  readonly published: (name: string) => boolean;
  /** A workflow tool, whose `context` schema the run tools' `arguments` describe. */
  readonly target: ToolDefinition | undefined;
  /** Where the registry publishes each change to a run's view or log. */
  readonly changes: RunChangeFeed;
}

/**
 * The run surface; `stop` cancels what still runs, `close` removes temporary state. A
 * `--state-dir` that cannot be written is the start-up problem instead (see `stateDirProblem`).
 */
export function runsSurface(
  options: RunsOptions,
): (Surface & { readonly registry: RunRegistry }) | { readonly problem: string } {
  const { logger, shared } = options;
  const problem =
    options.stateDir === undefined || shared !== undefined
      ? undefined
      : stateDirProblem(options.stateDir);
  if (problem?.fatal) return { problem: problem.text };
  // A full disk may be freed while the server runs, and until then everything but runs works.
  if (problem) logger.warn({ code: 'STATE_STORAGE_FULL' }, problem.text);
  const temporary = options.stateDir === undefined && shared === undefined;
  const stateDir = options.stateDir ?? (temporary ? mkdtempSync(join(tmpdir(), 'mhl-serve-')) : '');
  if (temporary) {
    // A warning over HTTP, where a server is meant to outlive its clients; on stdio the server
    // lives and dies with its one client, and every start would repeat it.
    const say = options.transport === 'http' ? logger.warn.bind(logger) : logger.info.bind(logger);
    say(
      { stateDir },
      'no --state-dir: async run state is kept in a temporary directory and lost on restart',
    );
  }
  const store = shared?.store ?? new DirStore(join(stateDir, '.mhl'));
  // An async run outlives calls: only the caller's own context.timeout_ms bounds it.
  const unbounded = { ...options.pipelines, defaultTimeoutMs: Number.POSITIVE_INFINITY };
  const registry = new RunRegistry({
    catalog: options.catalog,
    store,
    admission: options.admission,
    logger,
    services: {
      childEnv: options.pipelines.childEnv,
      env: options.pipelines.env,
      cacheRoot: options.pipelines.cacheRoot,
      ...(options.pipelines.agentLimiters !== undefined
        ? { agentLimiters: options.pipelines.agentLimiters }
        : {}),
      ...(options.pipelines.vault !== undefined ? { vault: options.pipelines.vault } : {}),
    },
    check: (workflow, args) => {
      const { inputs, call } = checkWorkflowCall(workflow, args, unbounded);
      const bounded = Number.isFinite(call.timeoutMs);
      return {
        inputs,
        cwd: call.cwd,
        ...(bounded ? { timeoutMs: call.timeoutMs } : {}),
        ...(call.credentials !== undefined ? { credentials: call.credentials } : {}),
      };
    },
    ...(options.terminalTtlMs !== undefined ? { terminalTtlMs: options.terminalTtlMs } : {}),
    ...(shared !== undefined
      ? { replica: { id: shared.replicaId, leaseTtlMs: shared.leaseTtlMs } }
      : {}),
    limits: options.limits,
    changes: options.changes,
  });
  registerRunMetrics(options.metrics, registry);
  if (shared !== undefined && storeCan(shared.store, 'scan')) {
    options.metrics.register({
      name: 'mhl_serve_runs_pending',
      type: 'gauge',
      help: 'Async runs waiting to execute on any replica sharing the store (one indexed count per housekeeping pass).',
      read: () => registry.pendingEverywhere ?? 0,
    });
  }
  const surface = runSurface({
    catalog: options.catalog,
    registry,
    logger,
    published: options.published,
    target: options.target,
  });
  let sweeper: NodeJS.Timeout | undefined;
  return {
    name: 'runs',
    ...surface,
    registry,
    start: () => {
      // On a shared store the first pass comes at once: the pending gauge and old runs.
      if (shared !== undefined) {
        registry
          .sweep()
          .catch((error: unknown) => logger.error({ err: error }, 'run sweep failed'));
      }
      sweeper = setInterval(() => {
        registry
          .sweep()
          .catch((error: unknown) => logger.error({ err: error }, 'run sweep failed'));
      }, SWEEP_INTERVAL_MS);
      sweeper.unref();
    },
    activeOwners: () => registry.activeOwners(),
    // A session's runs outlive it: nobody can present that session again, so they become
    // claimable by whoever names them, as after a restart. A principal's runs stay its own.
    sessionEnded: (session) => {
      if (session.principal === undefined) registry.release(ownerOf({ session }));
    },
    drain: () => registry.drain(options.drainMs),
    stop: () => registry.cancelAll(),
    close: () => {
      clearInterval(sweeper);
      void store.close();
      if (temporary) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/**
 * Why runs could not be kept under `stateDir`, for the operator's terminal (the path is theirs),
 * or undefined when a probe write there works. A directory that cannot be written is fatal:
 * better refused at start than a failed first run. A full one is not: space can be freed while
 * the server serves everything but runs, which fail with `STATE_STORAGE_FULL` until then.
 */
function stateDirProblem(stateDir: string): { fatal: boolean; text: string } | undefined {
  const failed = probeWritable(join(stateDir, '.mhl'));
  if (failed === undefined) return undefined;
  const full = failed.code === 'ENOSPC' || failed.code === 'EDQUOT';
  const remedy = full
    ? 'free space there; until then async runs are refused with STATE_STORAGE_FULL'
    : 'make it writable by this user (a read-write mount, owner permissions), or pass another --state-dir';
  return {
    fatal: !full,
    text: `--state-dir ${stateDir} cannot be written: ${failed.reason} (${failed.code}); ${remedy}`,
  };
}

function registerRunMetrics(metrics: Metrics, registry: RunRegistry): void {
  metrics.register({
    name: 'mhl_runs_active',
    type: 'gauge',
    help: 'Async runs working now.',
    read: () => registry.counts.working,
  });
  metrics.register({
    name: 'mhl_runs_queued',
    type: 'gauge',
    help: 'Async runs waiting for an execution slot.',
    read: () => registry.counts.queued,
  });
  metrics.register({
    name: 'mhl_runs_held',
    type: 'gauge',
    help: 'Async runs held in memory, in any state (finished ones until the retention sweep).',
    read: () => registry.counts.held,
  });
  metrics.register({
    name: 'mhl_runs_total',
    type: 'counter',
    help: 'Async run legs ended, by the state they ended in.',
    label: 'outcome',
    read: () => registry.ended,
  });
}

/**
 * The async-run part of `mhl serve mcp --http`: where run state lives (`--state-dir` /
 * `MHL_SERVE_STATE_DIR`, else a temporary directory removed at shutdown), the run registry and
 * its sweep (every minute, of runs finished over an hour ago), and the run surface.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Catalog } from '../catalog/index.js';
import type { Logger } from '../log/logger.js';
import type { Dispatcher } from '../protocol/index.js';
import type { Admission } from '../runs/admission.js';
import { RunRegistry } from '../runs/registry.js';
import { DirStore } from '../store/index.js';
import { checkCall, type PipelineSurfaceOptions } from '../surfaces/pipelines.js';
import type { ResourceProvider } from '../surfaces/resources.js';
import { registerRunSurface } from '../surfaces/runs.js';
import type { ToolTable } from '../surfaces/tools.js';

/** How often finished runs past their TTL are swept. */
const SWEEP_INTERVAL_MS = 60_000;

export interface RunsSetup {
  readonly registry: RunRegistry;
  readonly resources: ResourceProvider;
  /** Stops the sweep and removes a temporary state directory. */
  close(): void;
}

export interface RunsConfig {
  /** `--state-dir`, already merged with `MHL_SERVE_STATE_DIR`; undefined for a temporary one. */
  readonly stateDir: string | undefined;
  readonly terminalTtlMs: number | undefined;
  readonly catalog: Catalog;
  readonly admission: Admission;
  readonly logger: Logger;
  readonly pipelines: PipelineSurfaceOptions;
  /** Told each run whose view or log changed. */
  readonly onChange?: (runId: string) => void;
}

export function setupRuns(dispatcher: Dispatcher, tools: ToolTable, config: RunsConfig): RunsSetup {
  const temporary = config.stateDir === undefined;
  const stateDir = config.stateDir ?? mkdtempSync(join(tmpdir(), 'mhl-serve-'));
  if (temporary) {
    config.logger.warn(
      { stateDir },
      'no --state-dir: async run state is kept in a temporary directory and lost on restart',
    );
  }
  const store = new DirStore(join(resolve(stateDir), '.mhl'));
  // Agents' disk caches, a folder per run inside: private (mkdtemp), removed at shutdown.
  const cacheRoot = mkdtempSync(join(tmpdir(), 'mhl-runs-'));
  // An async run outlives calls: only the caller's own context.timeout_ms bounds it.
  const unbounded = { ...config.pipelines, defaultTimeoutMs: Number.POSITIVE_INFINITY };
  const registry = new RunRegistry({
    catalog: config.catalog,
    store,
    admission: config.admission,
    logger: config.logger,
    services: {
      childEnv: config.pipelines.childEnv,
      env: config.pipelines.env,
      cacheRoot,
    },
    check: (workflow, args) => {
      const { inputs, call } = checkCall(workflow, args, unbounded);
      const bounded = Number.isFinite(call.timeoutMs);
      return { inputs, cwd: call.cwd, ...(bounded ? { timeoutMs: call.timeoutMs } : {}) };
    },
    ...(config.terminalTtlMs !== undefined ? { terminalTtlMs: config.terminalTtlMs } : {}),
    ...(config.onChange ? { onChange: config.onChange } : {}),
  });
  const resources = registerRunSurface(dispatcher, tools, {
    catalog: config.catalog,
    registry,
    logger: config.logger,
  });
  const sweeper = setInterval(() => {
    registry
      .sweep()
      .catch((error: unknown) => config.logger.error({ err: error }, 'run sweep failed'));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();
  return {
    registry,
    resources,
    close: () => {
      clearInterval(sweeper);
      void store.close();
      rmSync(cacheRoot, { recursive: true, force: true });
      if (temporary) rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

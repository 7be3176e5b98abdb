/**
 * Profiles: which surfaces a server serves. `pipelines` (the default) publishes one tool per
 * workflow with its resources, the `job.*` tools and async runs. A profile is a function from
 * the server's shared parts to its surfaces; `createServer` registers whatever it returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Catalog } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import { type Admission, JobRegistry, type RunChangeFeed } from '../runs/index.js';
import { AgentLimiters, childEnvironment } from '../runtime/index.js';
import { secretsSurface, type Vault, vaultLookup } from '../secrets/index.js';
import type { A2aSurfaceFactory } from '../surfaces/a2a/index.js';
import {
  jobTools,
  logJobEvents,
  type PipelineSurfaceOptions,
  PROMPTS_CAPABILITY,
  promptMethods,
  reservedNameProblem,
  type Surface,
  sessionsSurface,
  type ToolPolicy,
  ToolTable,
  uiSurface,
  workflowResources,
  workflowTemplates,
  workflowTools,
} from '../surfaces/index.js';
import type { BodyLimits } from '../transport/body.js';
import { isLoopback, type Metrics } from '../transport/index.js';
import type { ServeConfig } from './config.js';
import { workflowEngineProfile } from './engine-profile.js';
import { runsSurface } from './runs.js';
import type { ServeStore } from './state-store.js';

/** The vault a server reads, and how long its setup links live (`MHL_SECRETS_CAPABILITY_TTL_MS`). */
export interface ServerSecrets {
  readonly vault: Vault;
  readonly capabilityTtlMs?: number;
}

/** What every profile is built from. */
export interface ProfileParts {
  /** The running binary's version (the runs page shows it). */
  readonly version: string;
  /** This process's `instance_id`, as readiness reports it. */
  readonly instanceId: string;
  readonly config: ServeConfig;
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly admission: Admission;
  readonly metrics: Metrics;
  /** The environment `env()` reads (the process's, less the pack key). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Each change to an async run's view or log (resource subscriptions, the runs page). */
  readonly runChanges: RunChangeFeed;
  /** The shared body deadline and budget; set when serving HTTP. */
  readonly body: BodyLimits | undefined;
  /** Makes the A2A surface; given when serving HTTP (it is loaded only then). */
  readonly a2a: A2aSurfaceFactory | undefined;
  /** The store opened from `--store` or an `extension store` declaration, if any. */
  readonly store?: ServeStore | undefined;
  /** `MHL_ENGINE_KEY`'s text, taken out of the environment at start (workflow-engine only). */
  readonly engineKey?: string | undefined;
  /** The user's vault; without it `vault()` is unsupported and no secrets surface is served. */
  readonly secrets?: ServerSecrets;
}

/** A profile's surfaces, or the start-up problem that stops it. */
export type ProfileResult =
  | { readonly surfaces: Surface[]; readonly tools?: ToolPolicy }
  | { readonly problem: string };

export type Profile = (parts: ProfileParts) => ProfileResult;

/** The default profile: workflows as tools, resources and prompts, jobs, and async runs. */
export function pipelinesProfile(parts: ProfileParts): ProfileResult {
  const { config, catalog, logger } = parts;
  // Agents' disk caches of calls and runs, a folder per run inside: private (mkdtemp), owned by
  // this server and removed when it closes.
  const cacheRoot = mkdtempSync(join(tmpdir(), 'mhl-cache-'));
  const vault = parts.secrets?.vault;
  const pipelines: PipelineSurfaceOptions = {
    cacheRoot,
    // Per-agent rate limits are the server's, shared by its calls and runs (spec §5.1).
    agentLimiters: new AgentLimiters(),
    catalog,
    logger,
    defaultTimeoutMs: config.defaultTimeoutMs,
    defaultCwd: config.cwd,
    requireCwd: config.requireCwd,
    childEnv: childEnvironment(config.passEnv, parts.env),
    env: parts.env,
    ...(vault === undefined ? {} : { vault: (credentials) => vaultLookup(vault, credentials) }),
  };
  const workflows: Surface = {
    name: 'pipelines',
    tools: workflowTools(pipelines),
    resources: [workflowResources(catalog), workflowTemplates(catalog)],
    methods: promptMethods({ ...pipelines, admission: parts.admission }),
    capabilities: PROMPTS_CAPABILITY,
    close: () => rmSync(cacheRoot, { recursive: true, force: true }),
  };
  const names = new Set(workflows.tools?.map((tool) => tool.name));
  const reserved = reservedNameProblem([...names]);
  if (reserved !== undefined) {
    workflows.close?.();
    return { problem: reserved };
  }
  // job.start runs workflow tools only: their table is its list of targets.
  const targets = new ToolTable();
  for (const tool of workflows.tools ?? []) targets.add(tool);
  const registry = new JobRegistry({
    admission: parts.admission,
    onEvent: logJobEvents(logger),
    onFault: (error, job) => logger.error({ err: error, job_id: job.job_id }, 'job handler threw'),
  });
  const jobs: Surface = {
    name: 'jobs',
    tools: jobTools({ tools: targets, jobs: registry }),
    activeOwners: () => registry.activeOwners(),
    stop: () => {
      registry.cancelAll('the server is shutting down');
      return registry.drained();
    },
  };
  const runs = runsSurface({
    stateDir: config.stateDir,
    shared: parts.store,
    terminalTtlMs: config.terminalRunTtlMs,
    limits: { runsPerCaller: config.maxRunsPerCaller, queuedPerCaller: config.maxQueuedPerCaller },
    drainMs: config.drainMs,
    transport: config.http === undefined ? 'stdio' : 'http',
    catalog,
    admission: parts.admission,
    logger,
    metrics: parts.metrics,
    pipelines,
    published: (name) => names.has(name),
    target: workflows.tools?.[0],
    changes: parts.runChanges,
  });
  if ('problem' in runs) {
    workflows.close?.();
    return { problem: runs.problem };
  }
  const surfaces: Surface[] = [workflows, jobs, runs];
  // The runs page lives on the MCP HTTP server only: stdio has no browser to serve, and
  // `mhl serve a2a` has no `/mcp` for its buttons.
  if (config.http !== undefined && config.serve !== 'a2a') {
    surfaces.push(
      uiSurface({
        registry: runs.registry,
        tokenRequired: config.http.token !== undefined,
        principalHeader: config.http.principalHeader,
        version: parts.version,
        logger,
      }),
    );
  }
  // A2A is HTTP: the card and `/a2a` beside `/mcp`, or alone on `mhl serve a2a`.
  if (config.http !== undefined && parts.body !== undefined && parts.a2a !== undefined) {
    const a2a = parts.a2a({
      catalog,
      registry: runs.registry,
      version: parts.version,
      logger,
      body: parts.body,
      bearer: config.http.token !== undefined,
      requireCwd: config.requireCwd,
      ...(config.http.publicUrl !== undefined ? { publicUrl: config.http.publicUrl } : {}),
      principalHeader: config.http.token === undefined ? undefined : config.http.principalHeader,
      atRoot: config.serve === 'a2a',
      ...(config.a2aWaitMs !== undefined ? { waitMs: config.a2aWaitMs } : {}),
    });
    surfaces.push(a2a);
    // A blocking send waits on its run's state; log lines alone never end a wait.
    parts.runChanges.subscribe((change) => {
      if (change.kind === 'view') a2a.runChanged(change.runId);
    });
  }
  if (parts.secrets !== undefined) {
    surfaces.push(secretsOf(config, parts.secrets, parts, logger));
  }
  return { surfaces };
}

/**
 * The secrets surface: `secrets.list` on every transport; the setup page only over HTTP on a
 * loopback address (the form carries a secret in clear text, which only loopback keeps local).
 */
function secretsOf(
  config: ServeConfig,
  secrets: ServerSecrets,
  parts: ProfileParts,
  logger: Logger,
): Surface {
  const { http } = config;
  const { body } = parts;
  const local = http !== undefined && body !== undefined && isLoopback(http.host);
  const ttl = secrets.capabilityTtlMs;
  return secretsSurface({
    vault: secrets.vault,
    logger,
    ...(local
      ? {
          setup: {
            body,
            instanceId: parts.instanceId,
            ...(ttl === undefined ? {} : { capabilityTtlMs: ttl }),
          },
        }
      : {}),
  });
}

/**
 * The activity-session profile: the workflow-server folders under DIR (not an MHL catalog),
 * served as its 18 tools. Planning folders live under the working directory (`--cwd`).
 */
export function sessionsProfile(parts: ProfileParts): ProfileResult {
  const built = sessionsSurface({
    root: parts.config.root,
    workspace: parts.config.cwd,
    env: parts.env,
    logger: parts.logger,
  });
  return 'problem' in built ? built : { surfaces: [built.surface] };
}

/** The profiles `--profile` selects, by name. */
export const PROFILE_TABLE: Readonly<Record<ServeConfig['profile'], Profile>> = {
  pipelines: pipelinesProfile,
  'workflow-engine': workflowEngineProfile,
  sessions: sessionsProfile,
};

/**
 * Profiles whose DIR is a folder (or pack) of `.mh` workflows, loaded into the catalog before
 * the profile is built. The others read DIR themselves when built (a release folder, say) and
 * get an empty catalog.
 */
export const CATALOG_PROFILES: ReadonlySet<ServeConfig['profile']> = new Set(['pipelines']);

/** The catalog of a profile that serves no `.mh` workflows. */
export function emptyCatalog(root: string): Catalog {
  return { workflows: new Map(), prompts: new Map(), root, source: 'dir' };
}

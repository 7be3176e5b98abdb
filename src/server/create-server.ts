/**
 * `createServer(config, parts)`: one MCP server assembled from the surfaces its profile chooses,
 * on one dispatcher, with one admission gate, one tool table and one set of metrics. It knows
 * no transport: `serveStdio` and `serveHttp` move messages between it and the world, and call
 * its lifecycle in order (`start`, then at shutdown `drain`, `stop` within the budget, `close`).
 */
import { randomUUID } from 'node:crypto';
import type { Catalog } from '../catalog/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { Dispatcher, type Session } from '../protocol/index.js';
import { Admission, ownerOf, RunChangeFeed } from '../runs/index.js';
import type { A2aSurfaceFactory } from '../surfaces/a2a/index.js';
import {
  COMPLETIONS_CAPABILITY,
  completionMethods,
  LOGGING_CAPABILITY,
  loggingMethods,
  registerMethods,
  resourceMethods,
  Subscriptions,
  type Surface,
  ToolTable,
  toolMethods,
} from '../surfaces/index.js';
import { BodyBudget, type BodyLimits } from '../transport/body.js';
import { Metrics } from '../transport/index.js';
import type { Route } from '../transport/routes.js';
import type { ServeConfig } from './config.js';
import { PROFILE_TABLE, type ServerSecrets } from './profiles.js';
import { storeSessionDirectory } from './shared-sessions.js';
import type { ServeStore } from './state-store.js';

/** What a server is made from besides its configuration. */
export interface ServerParts {
  readonly catalog: Catalog;
  /** The running binary's version, as `serverInfo` and readiness report it. */
  readonly version: string;
  /** The environment `env()` reads in workflows (the process's, less the pack key). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** The store opened from `--store` or an `extension store` declaration (`openServeStore`). */
  readonly store?: ServeStore;
  /** The user's vault, for `vault()`, `secrets.list` and the setup page; none without it. */
  readonly secrets?: ServerSecrets;
  /** Makes the A2A surface; pass it when serving HTTP (it is loaded only then). */
  readonly a2a?: A2aSurfaceFactory;
  /** `MHL_ENGINE_KEY`'s text, taken out of the environment first (workflow-engine only). */
  readonly engineKey?: string | undefined;
}

/** An assembled server, not yet serving. */
export interface MhlServer {
  readonly config: ServeConfig;
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly version: string;
  /** This process's identity, a UUID v4 for its lifetime: readiness reports it. */
  readonly instanceId: string;
  /** The HTTP rows the surfaces add (the Agent Card, `/a2a`); served over HTTP only. */
  readonly routes: readonly Route[];
  /** The deadline and shared budget of every HTTP body; set when serving HTTP. */
  readonly body: BodyLimits | undefined;
  /** Names of the served workflows, for the start-up log line. */
  readonly workflows: readonly string[];
  /** Legacy sessions shared with the other replicas of a shared store, if any. */
  readonly sessionDirectory?: ReturnType<typeof storeSessionDirectory>;
  /** True while a request is in flight on a legacy session: it is neither swept nor evicted. */
  sessionBusy(session: Session): boolean;
  /**
   * The test, as of now, of legacy sessions that own a run or job under way (only without a
   * principal: a principal's work outlives any one of its sessions): they are not evicted to
   * make room at a cap, but the idle sweep still ends them (their runs are released).
   */
  sessionKeeps(): (session: Session) => boolean;
  /** Starts the surfaces' background work; once, before serving. */
  start(): void;
  /** Shutdown's first phase: admission closes at once; runs may finish (`--drain-timeout`). */
  drain(): Promise<void>;
  /** Shutdown's second phase: cancels every request and all work, resolving once it stopped. */
  stop(): Promise<void>;
  /** Releases what the surfaces hold (temporary state); last, even after a timed-out stop. */
  close(): void;
}

export type CreateServerResult =
  | { readonly ok: true; readonly server: MhlServer }
  | { readonly ok: false; readonly problem: string };

const BASE_CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  ...COMPLETIONS_CAPABILITY,
} as const;

/** What only `initialize` declares: `logging/setLevel` and `resources/subscribe` are 2025-only. */
const LEGACY_CAPABILITIES = {
  ...LOGGING_CAPABILITY,
  resources: { subscribe: true, listChanged: false },
} as const;

/**
 * Builds the server `config.profile` describes over `parts.catalog`. Fails (without throwing)
 * when the surfaces cannot be served together, e.g. a workflow uses a reserved tool name.
 */
export function createServer(config: ServeConfig, parts: ServerParts): CreateServerResult {
  const logger = parts.logger ?? createLogger(config.logLevel);
  const metrics = new Metrics();
  const admission = new Admission(config.maxActive);
  metrics.register({
    name: 'mhl_execution_slots_active',
    type: 'gauge',
    help: 'Execution slots held (direct calls, jobs and runs; --max-active bounds them).',
    read: () => admission.active,
  });
  const tools = new ToolTable();
  // Runs publish their changes from the start; subscriptions subscribe once the dispatcher is made.
  const runChanges = new RunChangeFeed((error) =>
    logger.error({ err: error }, 'run change listener threw'),
  );
  // One budget for every body the server reads, whichever route (MCP, A2A, ops) reads it.
  const body: BodyLimits | undefined =
    config.http === undefined
      ? undefined
      : {
          timeoutMs: config.http.bodyTimeoutMs,
          budget: new BodyBudget(config.http.bodyBufferBytes),
        };
  let subscriptions: Subscriptions | undefined;
  const instanceId = randomUUID();
  const built = PROFILE_TABLE[config.profile]({
    instanceId,
    config,
    catalog: parts.catalog,
    logger,
    admission,
    metrics,
    env: parts.env,
    ...(parts.secrets === undefined ? {} : { secrets: parts.secrets }),
    version: parts.version,
    runChanges,
    body,
    a2a: parts.a2a,
    store: parts.store,
    engineKey: parts.engineKey,
  });
  if ('problem' in built) return { ok: false, problem: built.problem };
  const { surfaces } = built;
  const taken = addTools(tools, surfaces);
  if (taken !== undefined) {
    for (const surface of surfaces) surface.close?.();
    return { ok: false, problem: taken };
  }
  const capabilities = mergeCapabilities(BASE_CAPABILITIES, ...surfaces.map((s) => s.capabilities));
  const dispatcher = new Dispatcher({
    serverInfo: { name: 'mhl', version: parts.version },
    capabilities,
    // What `initialize` declares: everything above, with the 2025-only features merged in.
    legacyCapabilities: mergeCapabilities(
      capabilities,
      LEGACY_CAPABILITIES,
      ...surfaces.map((s) => s.legacyCapabilities),
    ),
    onError: (error, site) => logger.error({ err: error, method: site.method }, 'internal error'),
  });
  const providers = surfaces.flatMap((s) => s.resources ?? []);
  subscriptions = new Subscriptions(dispatcher, providers);
  const resources = subscriptions;
  const unsubscribe = runChanges.subscribe(({ runId }) => resources.runChanged(runId));
  dispatcher.onSessionClose((session) => {
    for (const surface of surfaces) surface.sessionEnded?.(session);
  });
  registerMethods(dispatcher, [
    ...toolMethods(tools, {
      admission,
      onCall: (outcome) => metrics.toolCall(outcome),
      ...(built.tools !== undefined ? { policy: built.tools } : {}),
    }),
    ...resourceMethods(providers),
    ...surfaces.flatMap((s) => s.methods ?? []),
    // Over every surface's prompts and resources.
    ...completionMethods(parts.catalog, providers),
    ...loggingMethods(),
    ...subscriptions.methods(),
  ]);
  // A session's owner digest, made once: the keep test is asked of many sessions at an eviction.
  const ownerKeys = new WeakMap<Session, string>();
  const ownerKey = (session: Session): string => {
    let key = ownerKeys.get(session);
    if (key === undefined) {
      key = ownerOf({ session });
      ownerKeys.set(session, key);
    }
    return key;
  };
  const directory =
    parts.store !== undefined ? storeSessionDirectory(parts.store.store, logger) : undefined;
  const server: MhlServer = {
    ...(directory !== undefined ? { sessionDirectory: directory } : {}),
    config,
    dispatcher,
    logger,
    metrics,
    version: parts.version,
    instanceId,
    routes: surfaces.flatMap((s) => s.routes ?? []),
    body,
    workflows: [...parts.catalog.workflows.keys()],
    sessionBusy: (session) => dispatcher.inFlightOn(session) > 0,
    // Without a principal, only the session reaches its runs and jobs: eviction spares it.
    sessionKeeps: () => {
      const owners = new Set(surfaces.flatMap((s) => [...(s.activeOwners?.() ?? [])]));
      return (session) =>
        owners.size > 0 && session.principal === undefined && owners.has(ownerKey(session));
    },
    start: () => {
      for (const surface of surfaces) surface.start?.();
    },
    drain: async () => {
      admission.close();
      await Promise.all(surfaces.map((s) => s.drain?.()));
    },
    stop: async () => {
      dispatcher.closeAll('shutting down');
      unsubscribe();
      subscriptions?.close();
      await Promise.all(surfaces.map((s) => s.stop?.()));
    },
    close: () => {
      for (const surface of surfaces) surface.close?.();
    },
  };
  return { ok: true, server };
}

/** Adds every surface's tools in order; the problem when a name is taken twice. */
function addTools(tools: ToolTable, surfaces: readonly Surface[]): string | undefined {
  for (const surface of surfaces) {
    for (const tool of surface.tools ?? []) {
      if (tools.has(tool.name)) return `${surface.name}: the tool ${tool.name} is taken`;
      tools.add(tool);
    }
  }
  return undefined;
}

/** Capability sets merged in order, one level deep (`{resources: {…}}` entries combine). */
function mergeCapabilities(
  ...layers: (Readonly<Record<string, unknown>> | undefined)[]
): Record<string, unknown> {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      merged[key] = { ...merged[key], ...(value as Record<string, unknown>) };
    }
  }
  return merged;
}

/**
 * The activity-session surface (`--profile sessions`): the 18 tools of the public
 * workflow-server over a workflows root, each in the audit wrapper. Built once at start-up
 * from the root, the planning root, the key and the settings; every call loads the definition
 * and the session afresh.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log/index.js';
import type { Surface } from '../surface.js';
import { defineTool } from './audit.js';
import type { SessionsContext, SessionsSettings } from './context.js';
import { type Clock, SYSTEM_CLOCK } from './store/advance.js';
import { keyDir, loadKey } from './store/key.js';
import { SessionStore } from './store/session-store.js';
import { getActivity } from './tools/activity-tools.js';
import {
  presentCheckpoint,
  respondCheckpoint,
  resumeCheckpoint,
  yieldCheckpoint,
} from './tools/checkpoint-tools.js';
import { getResource, getTechnique } from './tools/content-tools.js';
import { discover, healthCheck, listWorkflows } from './tools/info-tools.js';
import { getWorkflow, nextActivity } from './tools/navigation-tools.js';
import { dispatchChild, startSession } from './tools/session-tools.js';
import { getTrace, getWorkflowStatus, inspectSession, recordUsage } from './tools/status-tools.js';
import { TraceStore } from './trace.js';

export interface SessionsSurfaceOptions {
  /** Absolute workflows root (the DIR argument). */
  readonly root: string;
  /** The workspace: planning folders go to `<workspace>/.engineering/artifacts/planning`. */
  readonly workspace: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly clock?: Clock;
}

type Env = SessionsSurfaceOptions['env'];

function positive(
  env: Env,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = env[name];
  const n = text === undefined || text === '' ? Number.NaN : Number(text);
  return Number.isFinite(n) && n >= min ? Math.min(n, max) : fallback;
}

/** The settings the environment gives (the public server's variables, plus the response minimum). */
export function readSettings(env: Env): SessionsSettings {
  return {
    minResponseSeconds: positive(env, 'MHL_SESSIONS_MIN_RESPONSE_SECONDS', 3),
    serverName: env['SERVER_NAME'] || 'workflow-server',
    // The public server's defaults: a drop-in reports the same identity unless told otherwise.
    serverVersion: env['SERVER_VERSION'] || '2.1.0',
    bundleHeadroom: positive(env, 'BUNDLE_HEADROOM_FRACTION', 0.8, Number.MIN_VALUE),
    charsPerToken: positive(env, 'BUNDLE_CHARS_PER_TOKEN', 4, Number.MIN_VALUE),
    batchHeadroom: positive(env, 'BATCH_HEADROOM_FRACTION', 0.35, 0, 1),
    batchMaxActivities: Math.round(positive(env, 'BATCH_MAX_ACTIVITIES', 3, 1, 100)),
  };
}

export const SESSION_TOOLS = [
  discover,
  listWorkflows,
  healthCheck,
  startSession,
  dispatchChild,
  getWorkflow,
  nextActivity,
  getActivity,
  getTechnique,
  getResource,
  yieldCheckpoint,
  presentCheckpoint,
  respondCheckpoint,
  resumeCheckpoint,
  getTrace,
  getWorkflowStatus,
  inspectSession,
  recordUsage,
] as const;

/** The surface, or the start-up problem (a root that is not a folder, an unusable key). */
export function sessionsSurface(
  options: SessionsSurfaceOptions,
): { surface: Surface } | { problem: string } {
  const { root } = options;
  if (!existsSync(root) || !statSync(root).isDirectory())
    return { problem: `sessions: ${root} is not a folder` };
  let key: Buffer;
  try {
    key = loadKey(keyDir(options.env));
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return {
      problem: `sessions: ${typeof code === 'string' ? `${code}: ` : ''}${(e as Error).message}`,
    };
  }
  const planningRoot = join(
    options.workspace,
    options.env['PLANNING_SLUG'] || join('.engineering', 'artifacts', 'planning'),
  );
  const ctx: SessionsContext = {
    root,
    store: new SessionStore({ planningRoot, key }),
    traces: new TraceStore(),
    clock: options.clock ?? SYSTEM_CLOCK,
    logger: options.logger,
    settings: readSettings(options.env),
    startedAt: Date.now(),
  };
  return {
    surface: {
      name: 'sessions',
      tools: SESSION_TOOLS.map((t) => defineTool(t as Parameters<typeof defineTool>[0], ctx)),
    },
  };
}

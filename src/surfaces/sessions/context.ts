/**
 * What every sessions tool is handed: the workflows root, the session store, the trace store,
 * the clock, the logger and the profile's settings. Built once by the surface; no globals.
 */
import type { Logger } from '../../log/index.js';
import type { Clock } from './store/advance.js';
import type { SessionStore } from './store/session-store.js';
import type { TraceStore } from './trace.js';

export interface SessionsSettings {
  /** Seconds that must pass between a yield and an `option_id` answer (default 3). */
  readonly minResponseSeconds: number;
  readonly serverName: string;
  readonly serverVersion: string;
  readonly bundleHeadroom: number;
  readonly charsPerToken: number;
  readonly batchHeadroom: number;
  readonly batchMaxActivities: number;
}

export interface SessionsContext {
  /** Absolute path of the workflows root. */
  readonly root: string;
  readonly store: SessionStore;
  readonly traces: TraceStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: SessionsSettings;
  /** When the surface was built (health_check's uptime). */
  readonly startedAt: number;
}

/** What a handler tells the audit wrapper about the session it acted on. */
export interface CallNote {
  index?: string;
  wf?: string;
  act?: string;
  aid?: string;
  warnings?: string[];
}

/** A failure a tool reports as `isError` with a stable code (never a protocol error). */
export class ToolFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ToolFailure';
    this.code = code;
  }
}

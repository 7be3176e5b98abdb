/**
 * The activity-session profile (`mhl serve mcp --profile sessions ROOT`): workflow-server
 * folders served with sealed sessions, techniques, checkpoints and signed traces. Split by
 * stage: `definition/` (loader), `store/` (sealed session files), `validators.ts`,
 * `delivery/` (bundles and the ledger), `tools/` (one module per tool family), `audit.ts`.
 */
export {
  readSettings,
  SESSION_TOOLS,
  type SessionsSurfaceOptions,
  sessionsSurface,
} from './surface.js';

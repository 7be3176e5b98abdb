/**
 * Transports: stdio lines and node:http (`/mcp`, health, control, metrics), with their guards.
 * They carry JSON-RPC text to a dispatcher and know nothing of workflows. The HTTP transport
 * (`http.ts`), its route table (`routes.ts`), the MCP endpoint's rows (`mcp-endpoint.ts`) and
 * the operational endpoints (`ops.ts`) are second faces, loaded lazily so a stdio server never
 * loads them.
 */
export { bearerMatches, hostAllowed, isLoopback, originAllowed } from './guards.js';
export { type CallOutcome, type MetricFamily, Metrics } from './metrics.js';
export type { SessionDirectory, SharedSession } from './session-directory.js';
export { MAX_SESSIONS, MAX_SESSIONS_PER_CLIENT, SESSION_IDLE_TTL_MS } from './sessions.js';
export { MAX_LINE_BYTES, type StdioOptions, StdioTransport } from './stdio.js';

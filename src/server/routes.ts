/**
 * The HTTP route table of `mhl serve mcp --http`: the MCP endpoint's rows (bearer) and the ops
 * rows (public). New endpoints (the Agent Card, `/a2a`, `/ui`, `/secrets/setup`) are added here
 * as rows with their auth; the transport applies the guards and auth of each row.
 */
import type { McpEndpoint } from '../transport/mcp-endpoint.js';
import { type OpsOptions, opsRoutes } from '../transport/ops.js';
import type { Route } from '../transport/routes.js';

export interface RouteParts {
  readonly mcp: McpEndpoint;
  readonly ops: OpsOptions;
  /** Rows the surfaces contribute (secret setup, …). */
  readonly surfaces?: readonly Route[];
}

/** Every row the HTTP server answers; any other path is 404. */
export function httpRoutes(parts: RouteParts): Route[] {
  return [...parts.mcp.routes(), ...opsRoutes(parts.ops), ...(parts.surfaces ?? [])];
}

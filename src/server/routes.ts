/**
 * The HTTP route table of `mhl serve mcp --http` and `mhl serve a2a`: the MCP endpoint's rows
 * (bearer; MCP only), the rows surfaces contribute (the Agent Card and `/a2a`, …) and the ops
 * rows. Each row carries its auth; the transport applies the guards and auth of each row.
 */
import type { McpEndpoint } from '../transport/mcp-endpoint.js';
import { type OpsOptions, opsRoutes } from '../transport/ops.js';
import type { Route } from '../transport/routes.js';

export interface RouteParts {
  /** The MCP endpoint; absent on `mhl serve a2a`, which serves no MCP. */
  readonly mcp: McpEndpoint | undefined;
  /** The rows surfaces contribute (`Surface.routes`). */
  readonly surfaces: readonly Route[];
  readonly ops: OpsOptions;
}

/** Every row the HTTP server answers; any other path is 404. */
export function httpRoutes(parts: RouteParts): Route[] {
  return [...(parts.mcp?.routes() ?? []), ...parts.surfaces, ...opsRoutes(parts.ops)];
}

/**
 * The live runs page (`GET /ui` on the HTTP server) as a surface: it contributes route rows
 * and nothing over MCP. Cancel and resume go through the MCP endpoint's own `run/*` methods,
 * so the page can do nothing a client of the same caller could not.
 */
import type { Surface } from '../surface.js';
import { type UiRouteOptions, uiRoutes } from './routes.js';

export type UiSurfaceOptions = UiRouteOptions;

/** The `ui` surface; `stop` ends every live stream so shutdown is not held open by a tab. */
export function uiSurface(options: UiSurfaceOptions): Surface {
  const { routes, close } = uiRoutes(options);
  return {
    name: 'ui',
    routes,
    stop: async () => close(),
  };
}

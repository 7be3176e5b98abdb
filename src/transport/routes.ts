/**
 * The HTTP route table: each row names a path (exact, or a prefix), the verbs it takes, how a
 * caller is authorised and the handler. The transport runs the Host and Origin guards for every
 * request, then finds the row, answers 405 for another verb and checks the row's auth before
 * the handler runs, so an endpoint is added as a row, never as a branch in the transport.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How a row is authorised: `public` (no credential: discovery, health probes), `bearer` (the
 * server's `--token`, when one is set) or `capability` (the row's own check of a single-use
 * capability the request carries, such as a setup link's query value).
 */
export type RouteAuth = 'public' | 'bearer' | 'capability';

export interface Route {
  /** The path; with `prefix`, every path that starts with it. */
  readonly path: string;
  readonly prefix?: boolean;
  /** Verbs served; any other gets 405 with `Allow`. */
  readonly methods: readonly string[];
  readonly auth: RouteAuth;
  /** For `capability` rows: true when the request carries a valid capability. */
  readonly capability?: (req: IncomingMessage) => boolean;
  /**
   * How the row's refusals (400, 401, 403, 405) are written; plain text when absent. The MCP
   * rows answer a JSON-RPC error, so a client's transport can read every answer the same way.
   */
  readonly refuse?: (res: ServerResponse, status: number, text: string) => void;
  /** Answers the request; `path` is the request's path without its query. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void>;
}

/** The row serving `path`: an exact row first, else the longest matching prefix row. */
export function findRoute(routes: readonly Route[], path: string): Route | undefined {
  let best: Route | undefined;
  for (const route of routes) {
    if (!route.prefix) {
      if (route.path === path) return route;
    } else if (path.startsWith(route.path) && route.path.length > (best?.path.length ?? -1)) {
      best = route;
    }
  }
  return best;
}

/**
 * Refuses a table whose rows collide (two rows for one exact path or prefix) or whose
 * `capability` row has no check: a programming fault found at start-up, not per request.
 */
export function checkRoutes(routes: readonly Route[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.prefix ? 'prefix' : 'exact'} ${route.path}`;
    if (seen.has(key)) throw new Error(`two HTTP routes for ${key}`);
    seen.add(key);
    if (route.auth === 'capability' && route.capability === undefined) {
      throw new Error(`the capability route ${route.path} has no capability check`);
    }
  }
}

/**
 * A2A served: the Agent Card and the JSON-RPC endpoint, both versions (1.0 and 0.3), as a
 * surface that contributes HTTP routes only. Its tasks are the runs of the run registry the
 * `run/*` surface serves, so both see the same runs for the same owner.
 */
import type { Catalog } from '../../catalog/index.js';
import type { Logger } from '../../log/index.js';
import type { RunRegistry } from '../../runs/index.js';
import type { BodyLimits } from '../../transport/body.js';
import type { Surface } from '../surface.js';
import { cardMaker } from './card.js';
import { a2aRoutes } from './routes.js';
import { A2aService, DEFAULT_WAIT_MS } from './service.js';
import { RunWatch } from './watch.js';

export { DEFAULT_WAIT_MS };

export interface A2aSurfaceOptions {
  readonly catalog: Catalog;
  readonly registry: RunRegistry;
  readonly version: string;
  readonly logger: Logger;
  readonly body: BodyLimits;
  /** Whether `--token` guards the JSON-RPC endpoint (the card then names the bearer scheme). */
  readonly bearer: boolean;
  readonly principalHeader: string | undefined;
  /** `mhl serve a2a`: JSON-RPC at `/` as well as `/a2a`. */
  readonly atRoot: boolean;
  /** How long a blocking send waits for its task to settle. */
  readonly waitMs?: number;
}

/** The A2A surface, which the run registry tells of every change of a run (`runChanged`). */
export interface A2aSurface extends Surface {
  /** Wakes the sends and streams waiting on the run; cheap, never throws. */
  runChanged(runId: string): void;
}

/** How the server makes the A2A surface (loaded only when serving HTTP). */
export type A2aSurfaceFactory = (options: A2aSurfaceOptions) => A2aSurface;

/** The A2A surface: routes, nothing over MCP. */
export const a2aSurface: A2aSurfaceFactory = (options) => {
  // Blocking sends and streams wait on their run's next change, not on a timer.
  const watch = new RunWatch();
  const service = new A2aService({
    catalog: options.catalog,
    registry: options.registry,
    watch,
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
  });
  const card = cardMaker({
    catalog: options.catalog,
    version: options.version,
    bearer: options.bearer,
  });
  return {
    name: 'a2a',
    runChanged: (runId) => watch.notify(runId),
    routes: a2aRoutes({
      service,
      card,
      logger: options.logger,
      body: options.body,
      principalHeader: options.principalHeader,
      atRoot: options.atRoot,
    }),
  };
};

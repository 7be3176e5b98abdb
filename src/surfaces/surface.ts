/**
 * `Surface`: what one part of the catalog looks like over MCP. A surface contributes tools,
 * resources, methods and capabilities, and may own background work that starts with the
 * server and stops with it. `createServer` (src/server) collects the surfaces a profile
 * chooses and registers them on one dispatcher; a surface never touches a socket or a stream.
 */
import type { Session } from '../protocol/index.js';
import type { Route } from '../transport/routes.js';
import type { MethodEntry } from './methods.js';
import type { ResourceProvider } from './resources.js';
import type { ToolDefinition } from './tools.js';

export interface Surface {
  /** Names the surface in logs and start-up errors. */
  readonly name: string;
  /** Tools to publish, in order; a name another surface took first is a start-up error. */
  readonly tools?: readonly ToolDefinition[];
  /** Resource providers this surface serves (asked in the order surfaces were added). */
  readonly resources?: readonly ResourceProvider[];
  /** JSON-RPC methods this surface answers (a method may exist in some eras only). */
  readonly methods?: readonly MethodEntry[];
  /** Merged into the capabilities the server declares (both eras). */
  readonly capabilities?: Readonly<Record<string, unknown>>;
  /** Merged into what `initialize` declares only (features the 2025 revisions alone have). */
  readonly legacyCapabilities?: Readonly<Record<string, unknown>>;
  /** HTTP route rows this surface answers (served only over HTTP; a clash fails start-up). */
  readonly routes?: readonly Route[];
  /**
   * Owners (`ownerOf` keys) of background work under way that only they can reach (async runs,
   * jobs): the HTTP transport keeps a legacy session that is such an owner.
   */
  activeOwners?(): ReadonlySet<string>;
  /** Starts background work (sweepers); called once, before the server accepts requests. */
  start?(): void;
  /** Told each legacy session that ended (deleted, swept or evicted), after its requests were cancelled. */
  sessionEnded?(session: Session): void;
  /** Shutdown's first phase: stop taking new work and let work finish (bounded). */
  drain?(): Promise<void>;
  /** Shutdown's second phase, within the budget: cancel what still runs and wait for it. */
  stop?(): Promise<void>;
  /** Releases what the surface holds (temporary folders); last, even after the budget ran out. */
  close?(): void;
}

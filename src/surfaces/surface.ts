/**
 * `Surface`: what one part of the catalog looks like over MCP. A surface contributes tools,
 * resources, methods and capabilities, and may own background work that starts with the
 * server and stops with it. `createServer` (src/server) collects the surfaces a profile
 * chooses and registers them on one dispatcher; a surface never touches a socket or a stream.
 */
import type { MethodHandler } from '../protocol/index.js';
import type { ResourceProvider } from './resources.js';
import type { ToolDefinition } from './tools.js';

export interface Surface {
  /** Names the surface in logs and start-up errors. */
  readonly name: string;
  /** Tools to publish, in order; a name another surface took first is a start-up error. */
  readonly tools?: readonly ToolDefinition[];
  /** Resources this surface serves (asked in the order surfaces were added). */
  readonly resources?: ResourceProvider;
  /** JSON-RPC methods this surface answers, by method name. */
  readonly methods?: Readonly<Record<string, MethodHandler>>;
  /** Merged into the capabilities the server declares (both eras). */
  readonly capabilities?: Readonly<Record<string, unknown>>;
  /** Starts background work (sweepers); called once, before the server accepts requests. */
  start?(): void;
  /** Shutdown's first phase: stop taking new work and let work finish (bounded). */
  drain?(): Promise<void>;
  /** Shutdown's second phase, within the budget: cancel what still runs and wait for it. */
  stop?(): Promise<void>;
  /** Releases what the surface holds (temporary folders); last, even after the budget ran out. */
  close?(): void;
}

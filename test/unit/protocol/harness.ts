/**
 * Shared fixtures for the protocol tests: a dispatcher with recording sinks, one connection per
 * session, message builders and a deferred promise to hold handlers open.
 */
import assert from 'node:assert/strict';
import {
  type Connection,
  Dispatcher,
  type DispatcherOptions,
  type DispatchResult,
  type ErrorSite,
  type JsonRpcErrorResponse,
  type JsonRpcNotification,
  type JsonRpcResultResponse,
  type LegacyVersion,
  type RequestId,
  Session,
} from '../../../src/protocol/index.js';

export const SERVER_INFO = { name: 'mhl', version: '0.1.0' };
export const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
};
export const PV = 'io.modelcontextprotocol/protocolVersion';
export const CC = 'io.modelcontextprotocol/clientCapabilities';
export const SI = 'io.modelcontextprotocol/serverInfo';

/** A complete modern `_meta`, plus `extra`. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { [PV]: '2026-07-28', [CC]: {}, ...extra };
}

/** A request message. */
export function request(id: RequestId, method: string, params?: unknown): Record<string, unknown> {
  return params === undefined
    ? { jsonrpc: '2.0', id, method }
    : { jsonrpc: '2.0', id, method, params };
}

/** A notification message. */
export function notification(method: string, params?: unknown): Record<string, unknown> {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

/** A connection whose sent notifications are recorded. */
export interface TestConnection extends Connection {
  readonly sent: JsonRpcNotification[];
}

/** A new connection on a new session. */
export function connection(principal?: string): TestConnection {
  const sent: JsonRpcNotification[] = [];
  return {
    session: new Session({ now: 0 }),
    sent,
    send: (message) => {
      sent.push(message);
    },
    ...(principal === undefined ? {} : { principal }),
  };
}

/** A dispatcher whose `onError` calls are recorded. */
export function setup(options: Partial<DispatcherOptions> = {}): {
  dispatcher: Dispatcher;
  conn: TestConnection;
  errors: Array<{ error: unknown; site: ErrorSite }>;
} {
  const errors: Array<{ error: unknown; site: ErrorSite }> = [];
  const dispatcher = new Dispatcher({
    serverInfo: SERVER_INFO,
    capabilities: CAPABILITIES,
    onError: (error, site) => errors.push({ error, site }),
    ...options,
  });
  return { dispatcher, conn: connection(), errors };
}

/** Runs the legacy handshake on `conn`. */
export async function initialize(
  dispatcher: Dispatcher,
  conn: Connection,
  protocolVersion: LegacyVersion = '2025-11-25',
): Promise<void> {
  const params = { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } };
  resultOf(await dispatcher.handle(request('init', 'initialize', params), conn));
  await dispatcher.handle(notification('notifications/initialized'), conn);
}

/** Asserts a single error response and returns it. */
export function errorOf(answer: DispatchResult): JsonRpcErrorResponse {
  assert.ok(answer !== undefined && !Array.isArray(answer), 'expected one response');
  assert.ok('error' in answer, `expected an error, got ${JSON.stringify(answer)}`);
  return answer;
}

/** Asserts a single success response and returns its result. */
export function resultOf(answer: DispatchResult): Record<string, unknown> {
  assert.ok(answer !== undefined && !Array.isArray(answer), 'expected one response');
  assert.ok('result' in answer, `expected a result, got ${JSON.stringify(answer)}`);
  return (answer as JsonRpcResultResponse).result;
}

/** A promise with its resolvers exposed. */
export function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
} {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets queued microtasks and promise callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

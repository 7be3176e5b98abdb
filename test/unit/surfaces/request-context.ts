/** A legacy request's context for calling surface handlers directly, `over` replacing fields. */
import type { RequestContext } from '../../../src/protocol/index.js';
import { RequestAbort } from '../../../src/protocol/request-abort.js';

export function requestContext(over: Partial<RequestContext> = {}): RequestContext {
  const abort = new RequestAbort();
  return {
    era: 'legacy',
    protocolVersion: '2025-11-25',
    session: undefined,
    clientCapabilities: {},
    requestId: 1,
    signal: abort.signal,
    cancellation: abort,
    ...over,
  };
}

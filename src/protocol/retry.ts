/**
 * A modern retry's `inputResponses` and `requestState` (2026-07-28 multi round-trip), checked
 * for shape only: what they mean is the handler's business.
 */
import type { RequestContext } from './context.js';
import { RPC_ERROR_CODES, RpcError } from './errors.js';
import { isRecord } from './jsonrpc.js';

const NO_RETRY = Object.freeze({});

/**
 * The retry members of a modern request's params (none: a shared empty object).
 * @throws RpcError -32602 naming the member that has the wrong type.
 */
export function retryMaterial(
  params: Record<string, unknown>,
): Pick<RequestContext, 'inputResponses' | 'requestState'> {
  const responses = params['inputResponses'];
  const state = params['requestState'];
  if (responses === undefined && state === undefined) return NO_RETRY;
  if (responses !== undefined && !isRecord(responses)) {
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'inputResponses must be an object', {
      field: 'inputResponses',
    });
  }
  if (state !== undefined && typeof state !== 'string') {
    throw new RpcError(RPC_ERROR_CODES.INVALID_PARAMS, 'requestState must be a string', {
      field: 'requestState',
    });
  }
  return {
    ...(responses === undefined ? {} : { inputResponses: responses }),
    ...(state === undefined ? {} : { requestState: state }),
  };
}

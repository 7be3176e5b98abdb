/**
 * An A2A client per extension call, through the official A2A JS SDK: the Agent Card is fetched
 * (from `url` + `/.well-known/agent-card.json`, or from `url` itself when it names a `.json`
 * file) and the SDK picks the interface it advertises, speaking 1.0 and, through the SDK's
 * compatibility layer, 0.3 to agents whose card says so. The declared headers go with every
 * request, the card's included, and the step's signal bounds every request.
 */
import type { Client } from '@a2a-js/sdk/client';
import { LangError } from '../../lang/index.js';
import type { A2aConfig } from './a2a-config.js';
import { extensionError, failureMessage } from './extension-settings.js';
import { a2aSdk } from './sdk-modules.js';

/**
 * Creates a client for the agent at `config.url`, runs `op`, and maps failures: rejects with
 * `signal.reason` when `signal` aborts, else raises `EXTENSION` with the remote (or network)
 * message labelled `what`. Honours `signal`.
 */
export async function withA2aClient<T>(
  config: A2aConfig,
  what: string,
  signal: AbortSignal,
  run: (client: Client) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  const sdk = a2aSdk();
  const fetchImpl = withHeaders(config.headers, signal);
  const legacyCompat = { enabled: true };
  const factory = new sdk.ClientFactory({
    transports: [
      new sdk.JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
      new sdk.RestTransportFactory({ fetchImpl, legacyCompat }),
    ],
    cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  try {
    const client = config.url.pathname.endsWith('.json')
      ? await factory.createFromUrl(config.url.href, '')
      : await factory.createFromUrl(config.url.href.replace(/\/$/, ''));
    return await run(client);
  } catch (e) {
    signal.throwIfAborted();
    if (e instanceof LangError) throw e;
    throw extensionError(what, failureMessage(e), e);
  }
}

/** `fetch` with the declared headers (those the SDK sets itself win) and the step's signal. */
function withHeaders(headers: Readonly<Record<string, string>>, signal: AbortSignal): typeof fetch {
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) if (!merged.has(k)) merged.set(k, v);
    const signals = init?.signal ? AbortSignal.any([init.signal, signal]) : signal;
    return fetch(input, { ...init, headers: merged, signal: signals });
  };
}

/**
 * One MCP session per extension call, through the official SDK client (v2, both protocol eras):
 * connect (the `protocol` setting picks the era, `auto` probing 2026-07-28 and falling back to
 * the `initialize` handshake as the SDK does), run one operation, close. Over stdio the server is
 * a fresh process group per call; over HTTP the declared headers go with every request. The
 * step's signal bounds the whole session: on abort the server is killed and the call rejects with
 * the signal's reason. Every other failure becomes an `EXTENSION` error carrying the remote
 * message, never a stack.
 */
import type {
  Client,
  ClientOptions,
  RequestOptions,
  Transport,
} from '@modelcontextprotocol/client';
import { LangError } from '../../lang/index.js';
import { extensionError, failureMessage } from './extension-settings.js';
import type { McpConfig, McpProtocol } from './mcp-config.js';
import { ProcessGroupStdioTransport } from './mcp-stdio-transport.js';
import { mcpSdk } from './sdk-modules.js';

/** What a session needs from the run. */
export interface McpHost {
  readonly cwd: string;
  /** The explicit environment of a stdio server (never this process's). */
  readonly childEnv: Readonly<Record<string, string>>;
}

/**
 * A bound on each request when the step has no deadline of its own: a tool that is a whole
 * workflow may run for minutes, and `mhl serve`'s own default run timeout is five.
 */
const REQUEST_TIMEOUT_MS = 300_000;

const CLIENT_INFO = { name: 'mhl', version: '1.0.0' };

/**
 * Opens a session, runs `op` on it, closes it (killing a stdio server's group). Raises
 * `EXTENSION` for a connection or protocol failure (`op` labels it); rejects with
 * `signal.reason` when `signal` aborts. Honours `signal`.
 */
export async function withMcpSession<T>(
  config: McpConfig,
  host: McpHost,
  op: string,
  signal: AbortSignal,
  run: (client: Client, options: RequestOptions) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  const sdk = mcpSdk();
  const client = new sdk.Client(CLIENT_INFO, clientOptions(config.protocol));
  const transport = openTransport(config, host, signal);
  const options: RequestOptions = { signal, timeout: REQUEST_TIMEOUT_MS };
  try {
    await client.connect(transport, options);
    return await run(client, options);
  } catch (e) {
    signal.throwIfAborted();
    if (e instanceof LangError) throw e;
    throw failure(config, op, e, transport);
  } finally {
    await closeQuietly(client, transport);
  }
}

function clientOptions(protocol: McpProtocol): ClientOptions {
  // An `input_required` answer surfaces as an error: a workflow has no one to ask.
  const base: ClientOptions = { inputRequired: { autoFulfill: false } };
  if (protocol === 'auto') return { ...base, versionNegotiation: { mode: 'auto' } };
  if (protocol === '2026-07-28')
    return { ...base, versionNegotiation: { mode: { pin: protocol } } };
  // A 2025 pin: the plain handshake, offering exactly that revision.
  return { ...base, versionNegotiation: { mode: 'legacy' }, supportedProtocolVersions: [protocol] };
}

function openTransport(config: McpConfig, host: McpHost, signal: AbortSignal): Transport {
  if (config.transport === 'stdio')
    return new ProcessGroupStdioTransport({
      command: config.command,
      args: config.args,
      cwd: host.cwd,
      env: host.childEnv,
      signal,
    });
  return new (mcpSdk().StreamableHTTPClientTransport)(config.url, {
    requestInit: { headers: { ...config.headers } },
  });
}

async function closeQuietly(client: Client, transport: Transport): Promise<void> {
  try {
    await client.close();
  } catch {
    // The session is over either way; the transport below still ends the server.
  }
  try {
    await transport.close();
  } catch {
    // Already closed by the client: nothing left to end.
  }
}

/**
 * An `EXTENSION` error for a failed session: the remote message, or what went wrong locally; a
 * stdio server that could not start or went away adds its last stderr lines.
 */
function failure(config: McpConfig, op: string, e: unknown, transport: Transport): Error {
  const what = `${config.what}.${op}`;
  const message = failureMessage(e);
  if (config.transport !== 'stdio' || !(transport instanceof ProcessGroupStdioTransport))
    return extensionError(what, message, e);
  if ((e as NodeJS.ErrnoException).code === 'ENOENT')
    return extensionError(what, `cannot start "${config.command}": command not found`, e);
  // What the server said, without stack frames (they name files and lines of its own code).
  const tail = transport.stderrTail
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s+at\s|^Node\.js v\d|^\s*\^+\s*$/.test(line))
    .slice(-2)
    .join(' | ');
  return extensionError(
    what,
    tail && /closed|exited/i.test(message) ? `${message} (server stderr: ${tail})` : message,
    e,
  );
}

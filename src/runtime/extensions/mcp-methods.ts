/**
 * The methods of an `extension mcp` value (language §5.6): `call(tool, arguments?)`,
 * `list_tools()` and `discover()`, each one independent session, and the decoding of a tool
 * result into an MHL value. A tool error (`isError`) raises `EXTENSION` with the server's own
 * message (and, from an mhl server, its diagnostic code).
 */
import type { CallToolResult, Client, RequestOptions } from '@modelcontextprotocol/client';
import {
  type CallArgs,
  fromJson,
  isJsonValue,
  isObject,
  newObject,
  toPlain,
  typeOf,
  type Value,
} from '../interpreter/values.js';
import { extensionError } from './extension-settings.js';
import { type McpHost, withMcpSession } from './mcp-client.js';
import type { McpConfig } from './mcp-config.js';

/** The names `extension mcp` answers to. */
export const MCP_METHODS = ['call', 'list_tools', 'discover'] as const;

/** Runs `Name.<method>(args)`; undefined for a name that is not a method. */
export function mcpMethod(
  method: string,
):
  | ((config: McpConfig, host: McpHost, args: CallArgs, signal: AbortSignal) => Promise<Value>)
  | undefined {
  switch (method) {
    case 'call':
      return (config, host, args, signal) => {
        const { tool, input } = callArguments(config.what, args);
        return withMcpSession(config, host, `call("${tool}")`, signal, async (client, options) =>
          decodeToolResult(
            `${config.what}.call("${tool}")`,
            await callTool(client, tool, input, options),
          ),
        );
      };
    case 'list_tools':
      return (config, host, args, signal) => {
        noArguments(`${config.what}.list_tools`, args);
        return withMcpSession(config, host, 'list_tools()', signal, async (client, options) =>
          fromJson((await client.listTools(undefined, options)).tools),
        );
      };
    case 'discover':
      return (config, host, args, signal) => {
        noArguments(`${config.what}.discover`, args);
        return withMcpSession(config, host, 'discover()', signal, async (client, options) =>
          discovery(client, options),
        );
      };
    default:
      return undefined;
  }
}

function callTool(
  client: Client,
  name: string,
  input: Record<string, unknown>,
  options: RequestOptions,
): Promise<CallToolResult> {
  return client.callTool({ name, arguments: input }, options);
}

/** `call(tool, arguments?)` positionally or as `tool:` / `arguments:`; arguments default `{}`. */
function callArguments(
  what: string,
  args: CallArgs,
): { tool: string; input: Record<string, unknown> } {
  const op = `${what}.call`;
  for (const name of args.named.keys())
    if (name !== 'tool' && name !== 'arguments')
      throw extensionError(op, `has no parameter '${name}' (it takes tool, arguments)`);
  if (args.positional.length > 2) throw extensionError(op, 'takes tool and arguments');
  const tool = args.named.get('tool') ?? args.positional[0];
  const input = args.named.get('arguments') ?? args.positional[1] ?? newObject();
  if (typeof tool !== 'string' || tool === '')
    throw extensionError(op, `tool must be a tool name, got ${typeOf(tool ?? null)}`);
  if (!isObject(input) || !isJsonValue(input))
    throw extensionError(op, `arguments must be an object of JSON values, got ${typeOf(input)}`);
  return { tool, input: toPlain(input) as Record<string, unknown> };
}

function noArguments(op: string, args: CallArgs): void {
  if (args.ordered.length > 0) throw extensionError(op, 'takes no arguments');
}

/**
 * A tool result as a value: its `structuredContent` when it has one; else its text, parsed when
 * it is a JSON object or array; else the content blocks as they came (images, resources).
 */
export function decodeToolResult(op: string, result: CallToolResult): Value {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts = content.flatMap((c) => (c.type === 'text' ? [c.text] : []));
  if (result.isError === true) throw extensionError(op, remoteMessage(result, texts));
  if (result.structuredContent !== undefined) return fromJson(result.structuredContent);
  if (content.length === 0) return null;
  if (texts.length < content.length) return fromJson(content);
  const text = texts.join('\n');
  if (/^\s*[[{]/.test(text)) {
    try {
      return fromJson(JSON.parse(text));
    } catch {
      // Text that only looks like JSON is returned as text.
    }
  }
  return text;
}

/** The message a failed tool gave: an mhl server's diagnostic (with its code), else its text. */
function remoteMessage(result: CallToolResult, texts: string[]): string {
  const diagnostic = (result._meta as Record<string, unknown> | undefined)?.['mhl/diagnostic'];
  if (diagnostic && typeof diagnostic === 'object') {
    const { code, message } = diagnostic as { code?: unknown; message?: unknown };
    if (typeof message === 'string')
      return typeof code === 'string' ? `${code}: ${message}` : message;
  }
  return texts.join('\n') || 'the tool reported an error';
}

/** What the server said about itself, in whichever era was negotiated, plus its tools. */
async function discovery(client: Client, options: RequestOptions): Promise<Value> {
  const tools = (await client.listTools(undefined, options)).tools;
  return fromJson({
    protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
    era: client.getProtocolEra() ?? null,
    serverInfo: client.getServerVersion() ?? null,
    capabilities: client.getServerCapabilities() ?? null,
    instructions: client.getInstructions() ?? null,
    tools,
  });
}

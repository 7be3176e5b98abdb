/**
 * The Agent Card (`/.well-known/agent-card.json`): one skill per served workflow with its
 * input schema, the JSON-RPC interfaces for A2A 1.0 (`supportedInterfaces[]`) and 0.3 (the
 * top-level `url` and `protocolVersion` older clients read), streaming, and the bearer scheme
 * when a token guards the JSON-RPC endpoint. It is public by design (discovery), so it holds
 * only what a workflow author published: names, descriptions, input schemas. Never a path, a
 * run, a principal, the token, or anything about the process.
 *
 * @see https://a2a-protocol.org/latest/specification/ ("Agent Discovery: The Agent Card")
 */
import type { Catalog, JsonObject } from '../../catalog/index.js';

const MODES = ['application/json', 'text/plain'];

/** What the card is made from; the skills are built once, the URLs per request. */
export interface CardOptions {
  readonly catalog: Catalog;
  /** The server's version. */
  readonly version: string;
  /** Whether `--token` guards the JSON-RPC endpoint. */
  readonly bearer: boolean;
}

/** Makes the card for a base URL (`http://host:port`) and the JSON-RPC path. */
export function cardMaker(options: CardOptions): (base: string, rpcPath: string) => JsonObject {
  const skills = [...options.catalog.workflows.values()].map((workflow) => ({
    id: workflow.name,
    name: workflow.name,
    description: `${sentence(workflow.description)} Pass inputs as message.metadata.input (with metadata.skill), or as a data part.`,
    tags: ['mhl', workflow.kind],
    inputModes: MODES,
    outputModes: MODES,
    // Not an A2A 1.0 skill member: the Go server's 0.2 card carried it here, and clients that
    // build calls from it read it here.
    metadata: { inputSchema: workflow.inputSchema },
  }));
  const security = options.bearer
    ? {
        securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
        securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      }
    : {};
  return (base, rpcPath) => {
    const url = `${base}${rpcPath}`;
    return {
      name: 'mhl',
      description: `MHL workflows as A2A skills (${skills.length}): each task is one run of a workflow.`,
      version: options.version,
      supportedInterfaces: [
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      // Read by 0.3 clients, which know no supportedInterfaces.
      protocolVersion: '0.3',
      url,
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: MODES,
      defaultOutputModes: MODES,
      skills,
      ...security,
    };
  };
}

/** A description as a sentence, so the usage hint after it reads as one. */
function sentence(text: string): string {
  return /[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`;
}

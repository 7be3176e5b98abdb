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
import { listedSchema } from '../input-schema.js';
import { takesText } from './inputs.js';

const MODES = ['application/json', 'text/plain'];
/** What every skill takes: a data part, or the input as `metadata.input`. */
const JSON_ONLY = ['application/json'];

/** What the card is made from; the skills are built once, the URLs per request. */
export interface CardOptions {
  readonly catalog: Catalog;
  /** The server's version. */
  readonly version: string;
  /** Whether `--token` guards the JSON-RPC endpoint. */
  readonly bearer: boolean;
  /** `--require-cwd`: each skill's schema then requires `context.cwd`, as the run layer does. */
  readonly requireCwd: boolean;
}

/** Makes the card for a base URL (`http://host:port`) and the JSON-RPC path. */
export function cardMaker(options: CardOptions): (base: string, rpcPath: string) => JsonObject {
  const workflows = [...options.catalog.workflows.values()];
  const skills = workflows.map((workflow) => ({
    id: workflow.name,
    name: workflow.name,
    description: `${sentence(workflow.description)} Pass inputs as message.metadata.input (with metadata.skill), or as a data part.`,
    tags: ['mhl', workflow.kind],
    // A text part is refused unless it can be the skill's one string input.
    inputModes: takesText(workflow) ? MODES : JSON_ONLY,
    outputModes: MODES,
    // Not an A2A 1.0 skill member: the Go server's 0.2 card carried it here, and clients that
    // build calls from it read it here. The `tools/list` schema, `context` included: a send's
    // input is checked exactly as a tool call's arguments.
    metadata: { inputSchema: listedSchema(workflow, options.requireCwd) as JsonObject },
  }));
  // Both versions name the schemes `securitySchemes`: one entry carries both shapes, 1.0's
  // oneof member (`httpAuthSecurityScheme`) and 0.3's flat `type`/`scheme`; each version's
  // parser ignores the other's members. The requirement is 1.0's `securityRequirements` and
  // 0.3's `security`.
  const security = options.bearer
    ? {
        securitySchemes: {
          bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' }, type: 'http', scheme: 'bearer' },
        },
        securityRequirements: [{ schemes: { bearer: { list: [] } } }],
        security: [{ bearer: [] }],
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
      // For clients that read no skill's own modes: text only if every skill takes it.
      defaultInputModes: workflows.every(takesText) ? MODES : JSON_ONLY,
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

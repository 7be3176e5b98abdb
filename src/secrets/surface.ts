/**
 * The secrets surface: the `secrets.list` tool (every record's metadata, optionally of one kind:
 * what a client calls to find the record id a credential slot wants) and, over HTTP, the setup
 * rows (`setup-routes.ts`). No tool takes or returns a secret's value: values enter through the
 * CLI's standard input or the setup page, and leave only into a run through `vault()`.
 */
import { controlToolRisk } from '../catalog/index.js';
import type { Logger } from '../log/index.js';
import { ArgumentError } from '../runs/index.js';
import { type Surface, type ToolDefinition, toolError } from '../surfaces/index.js';
import type { BodyLimits } from '../transport/body.js';
import { CapabilityStore } from './capabilities.js';
import { ChallengeStore } from './challenges.js';
import { SecretsError } from './errors.js';
import { checkKind, SECRET_KINDS } from './records.js';
import { setupRoutes } from './setup-routes.js';
import type { Vault } from './vault.js';

export const SECRETS_LIST_TOOL = 'secrets.list';

export interface SecretsSurfaceOptions {
  readonly vault: Vault;
  readonly logger: Logger;
  /** Set when serving HTTP on a loopback address: the setup page is served then only. */
  readonly setup?: {
    readonly body: BodyLimits;
    readonly capabilityTtlMs?: number;
    /** The serving process's `instance_id`, which a mint's proof must name. */
    readonly instanceId: string;
  };
}

const LIST_SCHEMA = {
  type: 'object',
  properties: {
    kind: {
      type: 'string',
      enum: SECRET_KINDS,
      description: 'only records of this kind (what a credential slot accepts)',
    },
  },
  additionalProperties: false,
} as const;

export function secretsSurface(options: SecretsSurfaceOptions): Surface {
  const { setup } = options;
  const routes =
    setup === undefined
      ? []
      : setupRoutes({
          vault: options.vault,
          capabilities: new CapabilityStore(
            setup.capabilityTtlMs === undefined ? {} : { ttlMs: setup.capabilityTtlMs },
          ),
          challenges: new ChallengeStore(),
          instanceId: setup.instanceId,
          logger: options.logger,
          body: setup.body,
        });
  return { name: 'secrets', tools: [listTool(options.vault)], routes };
}

function listTool(vault: Vault): ToolDefinition {
  return {
    name: SECRETS_LIST_TOOL,
    entry: {
      name: SECRETS_LIST_TOOL,
      description:
        "Lists the local vault's secrets: record id, name, kind, label, created, updated; never a value. " +
        'Pass a record id under credentials.<slot> of a workflow tool whose description names that slot.',
      inputSchema: LIST_SCHEMA,
      ...controlToolRisk('read', 'List vault secrets'),
    },
    execution: false,
    prepare: (args) => {
      const kind = listKind(args);
      return {
        run: async () => {
          try {
            const secrets = await vault.list(kind);
            const value = { secrets };
            return {
              content: [{ type: 'text', text: JSON.stringify(value) }],
              structuredContent: value,
            };
          } catch (error) {
            if (!(error instanceof SecretsError)) throw error;
            // The code only: the message names the vault's files.
            return toolError(error.code, `the vault cannot be read (${error.code})`, false);
          }
        },
      };
    },
  };
}

function listKind(args: Readonly<Record<string, unknown>>) {
  for (const key of Object.keys(args)) {
    if (key !== 'kind')
      throw new ArgumentError(key.slice(0, 64), `${SECRETS_LIST_TOOL} takes only kind`);
  }
  const kind = args['kind'];
  if (kind === undefined) return undefined;
  try {
    return checkKind(typeof kind === 'string' ? kind : '');
  } catch {
    throw new ArgumentError(
      'kind',
      `${SECRETS_LIST_TOOL}: "kind" must be one of ${SECRET_KINDS.join(', ')}`,
    );
  }
}
